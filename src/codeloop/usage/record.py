"""The transcript's record of each model request: what it cost and what it sent.

The session feeds every event of its own loop and of its sub-agents' loops through one
`RequestLog`; each `RequestEnd` becomes one `api_request` line (see transcript.py):

    {"id", "base", "agentId"?, "agentDescription"?, "purpose": "turn" | "summary" | "hook",
     "outcome": "answer" | "failed" | "discarded", "model", "turn", "attempt", "usage",
     "durationMs", "ttftMs"?, "responseId", "messageUuid"?, "error"?, "status"?,
     "context": {"keep": N, "add": [segment, ...]}}

`context` is the request's segments (segments.py) as a change from the previous request of
the same agent, whose id is `base`: its first `keep` segments, then `add`. An answer's line
names the assistant message it produced (`messageUuid`), so a reader counts that response once.
"""

from __future__ import annotations

from typing import Any

from codeloop.events import AssistantTurn, Event, LoopEnd, RequestEnd, SubAgent
from codeloop.types import new_uuid

Payload = dict[str, Any]


class _Chain:
    """One agent's requests so far: the last one's id and segments."""

    def __init__(self) -> None:
        from codeloop.usage.segments import SegmentCache  # with the first request's end

        self.cache = SegmentCache()
        self.last_id: str | None = None
        self.pending: Payload | None = None


class RequestLog:
    def __init__(self) -> None:
        self._chains: dict[str | None, _Chain] = {}

    def feed(self, event: Event, agent: SubAgent | None = None) -> list[Payload]:
        """The request lines to write now for this event (in order)."""
        key: str | None = agent.tool_use_id if agent is not None else None
        if isinstance(event, RequestEnd) and event.purpose == "hook":
            key = "hook"  # a chain of its own: a judge's question shares nothing with the talk
        chain = self._chains.get(key)
        if isinstance(event, RequestEnd):
            if chain is None:
                chain = self._chains[key] = _Chain()
            out = _flush(chain)
            line = self._line(chain, event, agent)
            if event.purpose != "turn":  # answered whole: its outcome is known now
                out.append(line | {"outcome": "failed" if event.error else "answer"})
            else:  # its outcome is known once the next event shows whether it answered
                chain.pending = line
            return out
        if chain is None:
            return []
        if isinstance(event, AssistantTurn) and chain.pending is not None:
            line, chain.pending = chain.pending, None
            return [line | {"outcome": "answer", "messageUuid": event.message.uuid}]
        out = _flush(chain)
        if isinstance(event, LoopEnd) and agent is not None:
            del self._chains[key]  # a sub-agent's loop is over: nothing builds on it any more
        return out

    def _line(self, chain: _Chain, event: RequestEnd, agent: SubAgent | None) -> Payload:
        keep, added = chain.cache.delta(event.request)
        line: Payload = {"id": new_uuid(), "base": chain.last_id if keep else None}
        if agent is not None:
            line["agentId"] = agent.tool_use_id
            line["agentDescription"] = agent.description
        line |= {
            "purpose": event.purpose,
            "model": event.request.model,
            "turn": event.turn,
            "attempt": event.attempt,
            "usage": event.usage.to_dict(),
            "durationMs": round(event.duration_ms),
            "responseId": event.response_id,
        }
        if event.ttft_ms is not None:
            line["ttftMs"] = round(event.ttft_ms)
        if event.error is not None:
            line["error"] = event.error
            line["status"] = event.status
        line["context"] = {"keep": keep, "add": [s.to_json() for s in added]}
        chain.last_id = line["id"]
        return line


def _flush(chain: _Chain) -> list[Payload]:
    """The request waiting for its answer got none: it failed, or its answer was dropped."""
    line, chain.pending = chain.pending, None
    if line is None:
        return []
    return [line | {"outcome": "failed" if "error" in line else "discarded"}]
