"""A session's model requests read back from its transcript: the usage ledger.

Every `api_request` line is one request (record.py wrote it); an assistant line that no
request line names is a request too, as transcripts of older codeloop versions recorded only
answers (their requests carry no segments, so their tokens are charged to no tool). Compact
boundaries and the original size of every tool result are kept for the savings estimate.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from codeloop.context.tokens import BLOCK_OVERHEAD, result_tokens
from codeloop.store.transcript import API_REQUEST, COMPACT_BOUNDARY, Transcript, read_transcript
from codeloop.system.valueclass import valueclass
from codeloop.types import Usage, message_from_dict
from codeloop.usage.costs import costs_by_model, total_cost_usd, usage_by_model
from codeloop.usage.segments import Segment

Line = dict[str, Any]


@valueclass
class Request:
    session_id: str
    timestamp: str
    model: str
    usage: Usage
    purpose: str = "turn"  # or "summary": a compaction's summary call
    outcome: str = "answer"  # or "failed", "discarded" (retried, or replaced by a better one)
    agent_id: str | None = None  # the Task call that started the sub-agent that sent it
    agent_description: str = ""
    prompt: int = 0  # which of the session's prompts it served (1 is the first)
    # What it sent, in prompt order; None when that was not recorded.
    segments: tuple[Segment, ...] | None = None
    error: str | None = None
    number: int = 0  # its place among the session's requests, from 1
    ttft_ms: int | None = None  # time to first token (its message_start), when recorded


@valueclass
class Compaction:
    after: int  # how many of the session's requests came before it
    pre_tokens: int
    post_tokens: int | None
    trigger: str


@valueclass(frozen=False)
class SessionLedger:
    session_id: str
    path: Path
    requests: list[Request] = field(default_factory=list)
    compactions: list[Compaction] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    # Each tool result's size as the tool returned it (before any fold or move to a file).
    result_tokens: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def usage_by_model(self) -> dict[str, Usage]:
        return usage_by_model((r.model, r.usage) for r in self.requests)

    @property
    def cost_usd(self) -> float:
        return total_cost_usd(costs_by_model((r.model, r.usage) for r in self.requests))


class _Reader:
    """Collects what the ledger needs while `read_transcript` reads the file."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.items: list[Request | Compaction] = []
        self.answers: dict[str, tuple[int, Request]] = {}  # assistant lines, by message uuid
        self.named: set[str] = set()  # the answers request lines name
        self.prompts: list[str] = []
        self.result_tokens: dict[str, int] = {}
        self.chains: dict[str | None, tuple[str, tuple[Segment, ...]]] = {}

    def line(self, line: Line) -> None:
        kind = line.get("type")
        if kind == "user":
            message = message_from_dict(line["message"] | {"is_meta": line.get("isMeta")})
            for block in message.tool_results:
                size = result_tokens(block.content) + BLOCK_OVERHEAD
                self.result_tokens[block.tool_use_id] = size
            if not message.is_meta and not message.tool_results:
                self.prompts.append(message.text)
        elif kind == "assistant":
            body = line["message"]
            usage = body.get("usage")
            answer = Request(
                self.session_id,
                str(line.get("timestamp") or ""),
                str(body.get("model") or ""),
                Usage.from_dict(usage if isinstance(usage, dict) else None),
                prompt=len(self.prompts),
            )
            self.answers[str(line["uuid"])] = (len(self.items), answer)
            self.items.append(answer)
        elif line.get("subtype") == API_REQUEST:
            self.items.append(self._request(line))
        elif line.get("subtype") == COMPACT_BOUNDARY:
            meta = line.get("compactMetadata") or {}
            post = meta.get("postTokens")
            self.items.append(
                Compaction(
                    sum(isinstance(i, Request) for i in self.items),
                    int(meta.get("preTokens") or 0),
                    int(post) if post is not None else None,
                    str(meta.get("trigger") or ""),
                )
            )

    def _request(self, line: Line) -> Request:
        data = line["request"]
        agent = data.get("agentId")
        agent = None if agent is None else str(agent)
        if data.get("messageUuid"):
            self.named.add(str(data["messageUuid"]))
        return Request(
            self.session_id,
            str(line.get("timestamp") or ""),
            str(data.get("model") or ""),
            Usage.from_dict(data.get("usage")),
            purpose=str(data.get("purpose") or "turn"),
            outcome=str(data.get("outcome") or "answer"),
            agent_id=agent,
            agent_description=str(data.get("agentDescription") or ""),
            prompt=len(self.prompts),
            segments=self._segments(agent, str(data["id"]), data),
            error=data.get("error"),
            ttft_ms=data.get("ttftMs"),
        )

    def _segments(
        self, agent: str | None, request_id: str, data: Line
    ) -> tuple[Segment, ...] | None:
        """The request's segments: `keep` of the previous request of its agent, then `add`.
        Unknown (None) when not recorded, or when the chain is broken by a lost line."""
        previous = self.chains.pop(agent, None)
        context = data.get("context")
        if not isinstance(context, dict):
            return None
        try:
            keep = int(context.get("keep") or 0)
            added = tuple(Segment.from_json(s) for s in context.get("add") or ())
        except (TypeError, ValueError):
            return None
        if keep and (previous is None or previous[0] != data.get("base")):
            return None
        segments = (previous[1][:keep] if keep and previous else ()) + added
        self.chains[agent] = (request_id, segments)
        return segments

    def ledger(self, path: Path, transcript: Transcript) -> SessionLedger:
        legacy = {i for uuid, (i, _) in self.answers.items() if uuid not in self.named}
        answers = {id(r) for _, r in self.answers.values()}
        out = SessionLedger(
            self.session_id,
            path,
            prompts=self.prompts,
            result_tokens=self.result_tokens,
            warnings=list(transcript.warnings),
        )
        for i, item in enumerate(self.items):
            if isinstance(item, Compaction):
                out.compactions.append(replace(item, after=len(out.requests)))
            elif id(item) not in answers or i in legacy:
                out.requests.append(replace(item, number=len(out.requests) + 1))
        return out


def read_ledger(path: Path) -> SessionLedger:
    """Raises OSError when the file cannot be read."""
    reader = _Reader(path.stem)
    transcript = read_transcript(path, reader.line)
    return reader.ledger(path, transcript)


def read_ledgers(paths: Iterable[Path]) -> list[SessionLedger]:
    return [read_ledger(p) for p in paths]


def usage_total(ledgers: Sequence[SessionLedger]) -> Usage:
    return sum((r.usage for ledger in ledgers for r in ledger.requests), Usage())
