"""json: Claude Code's result object at the end; stream-json: one object per line as things
happen (init, each message, retries, compactions, warnings, partial messages), then the same
result.

The objects go to a sink (`emit`): `-p` and the Agent SDK frontend write them to stdout, the
in-process API (api.py) takes the very same objects, so every consumer reads one encoding. A
renderer serves any number of prompts: `start()` opens each one (stream-json prints its init
line there) and `finish()` closes it with that prompt's result.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Protocol

from codeloop._version import __version__
from codeloop.events import (
    AssistantTurn,
    CompactBoundary,
    Compacting,
    Event,
    LoopEnd,
    MessagesDelivered,
    ModelStreamed,
    Notice,
    RequestEnd,
    Retrying,
    SubAgent,
    UserTurn,
)
from codeloop.models.wire_events import anthropic_event
from codeloop.protocol.run_report import SUBTYPES, SessionView, StderrReport
from codeloop.store.transcript import assistant_message
from codeloop.types import Message, block_to_dict, new_uuid

Emit = Callable[[dict[str, Any]], None]
# The Claude Code version whose protocol this output follows (the SDKs read it from init).
CLAUDE_CODE_VERSION = "2.1.0"
# Runs that ended on the model API's failure: Claude Code reports them as subtype "success"
# with is_error set and the HTTP status, so that SDKs tell them from the agent's own limits.
API_ERROR_ENDS = frozenset({"model_error", "prompt_too_long", "image_error"})


class StructuredResult(Protocol):
    """What `--json-schema` left for the result (structured_output.py)."""

    @property
    def value(self) -> Any: ...

    @property
    def failed(self) -> str | None: ...


class JsonRenderer:
    def __init__(
        self,
        session: SessionView,
        emit: Emit,
        *,
        structured: StructuredResult | None = None,
    ) -> None:
        self.session = session
        self.emit = emit
        self.structured = structured
        self.report = StderrReport()
        self._denials_before = 0
        self._stop_reason: str | None = None
        self._api_status: int | None = None
        self._ttft_ms: float | None = None
        # The prompt's message and those sent meanwhile that reached the model with it.
        self._user_messages: list[str] | None = None
        self.start_turn()

    def start_turn(self) -> None:
        """What one prompt's result counts from."""
        self._denials_before = len(self.session.config.policy.denials)
        self._stop_reason = None
        self._api_status = None
        self._ttft_ms = None

    def start(self, uuid: str | None = None) -> None:
        """A prompt begins; `uuid`: its message's, which the result names (user_message_uuids)
        with the messages sent while it ran."""
        self.start_turn()
        self._user_messages = [uuid] if uuid is not None else None

    def event(self, event: Event) -> None:
        if isinstance(event, MessagesDelivered) and self._user_messages is not None:
            self._user_messages += event.uuids
        if isinstance(event, AssistantTurn):
            self._stop_reason = event.stop_reason
        elif isinstance(event, RequestEnd):
            if event.status is not None:
                self._api_status = event.status
            if self._ttft_ms is None and event.purpose == "turn":
                self._ttft_ms = event.ttft_ms  # the turn's first request, as Claude Code's
        self.report.event(event)

    def finish(self, end: LoopEnd, elapsed: float) -> int:
        self.emit(self.result(end, elapsed))
        return self.report.end(end)

    def result(self, end: LoopEnd, elapsed: float) -> dict[str, Any]:
        session = self.session
        api_error = end.reason in API_ERROR_ENDS
        subtype = "success" if api_error else SUBTYPES.get(end.reason, "error_during_execution")
        is_error = api_error or subtype != "success"
        text = end.final_text
        result: dict[str, Any] = {
            "type": "result",
            "subtype": subtype,
            "is_error": is_error,
            "duration_ms": round(elapsed * 1000),
            "duration_api_ms": round(session.api_duration_ms),
            "num_turns": end.turns,
            "result": text if not is_error or text else (end.error or ""),
            "stop_reason": self._stop_reason,
            "session_id": session.session_id,
            "total_cost_usd": round(session.cost_usd, 6),
            "usage": session.usage.to_dict(),
            "modelUsage": session.model_usage(),
            "terminal_reason": end.reason,
            "ttft_ms": None if self._ttft_ms is None else round(self._ttft_ms),
            "permission_denials": [
                {
                    "tool_name": d.tool_name,
                    "tool_use_id": d.tool_use_id,
                    "tool_input": d.tool_input,
                }
                for d in session.config.policy.denials[self._denials_before :]
            ],
            # What each sub-agent spent, part of total_cost_usd (codeloop's addition).
            "subagents": [run.summary() for run in session.subagent_runs],
            "uuid": new_uuid(),
        }
        if self._user_messages is not None:
            result["user_message_uuids"] = list(self._user_messages)
        if api_error:
            result["api_error_status"] = self._api_status
        if is_error:  # what went wrong, as the SDKs read it
            result["errors"] = [end.error or end.reason.replace("_", " ")]
        structured = self.structured
        if structured is not None and not is_error:
            if structured.value is not None:
                result["structured_output"] = structured.value
            elif structured.failed:
                result |= {
                    "subtype": "error_max_structured_output_retries",
                    "is_error": True,
                    "errors": [structured.failed],
                }
        return result


class StreamJsonRenderer(JsonRenderer):
    """Each ModelStreamed event is a stream_event line: the main conversation's model stream as
    it arrives, which a session yields only when asked (--include-partial-messages)."""

    def __init__(
        self,
        session: SessionView,
        emit: Emit,
        *,
        structured: StructuredResult | None = None,
    ) -> None:
        super().__init__(session, emit, structured=structured)
        session.observers.append(_SubagentLines(self))

    def start(self, uuid: str | None = None) -> None:
        super().start(uuid)
        session = self.session
        self.emit(
            {
                "type": "system",
                "subtype": "init",
                "cwd": str(session.workspace.cwd),
                "session_id": session.session_id,
                "tools": list(session.tools),
                "mcp_servers": _mcp_servers(session),
                "model": session.config.model,
                "permissionMode": session.config.policy.mode,
                "apiKeySource": "none",
                "output_style": "default",
                "claude_code_version": CLAUDE_CODE_VERSION,
                "codeloop_version": __version__,
                # What was loaded: agents, memory files, skills, plugins (options.py).
                **session.inventory,
                # Every slash command (built-in, custom, MCP prompts): headless puts the
                # registry's names in the inventory.
                "slash_commands": session.inventory.get("slash_commands", []),
                "uuid": new_uuid(),
            }
        )

    _compacting = False  # a "compacting" status line is out: the next event ends it

    def event(self, event: Event) -> None:
        session_id = self.session.session_id
        if self._compacting and not isinstance(event, Compacting):
            # Claude Code's status lines: "compacting" while the summary is made, then null.
            # The loop's next event comes once the compaction is over, however it ended.
            self._compacting = False
            self.emit(_status(None, session_id))
        if isinstance(event, AssistantTurn | UserTurn):
            self.emit(message_line(event, session_id))
        elif isinstance(event, ModelStreamed):
            line: dict[str, Any] = {
                "type": "stream_event",
                "uuid": new_uuid(),
                "session_id": session_id,
                "event": anthropic_event(event.event),
                "parent_tool_use_id": None,
            }
            if event.ttft_ms is not None:  # on message_start: the time to first token
                line["ttft_ms"] = round(event.ttft_ms)
            self.emit(line)
        elif isinstance(event, Retrying):
            self.emit(
                {
                    "type": "system",
                    "subtype": "api_retry",
                    "attempt": event.attempt,
                    "max_retries": event.max_attempts,
                    "retry_delay_ms": round(event.wait_seconds * 1000),
                    "error_status": event.status,
                    "error": event.error,
                    "session_id": session_id,
                }
            )
        elif isinstance(event, Notice) and event.level != "info":
            # What stderr says too (a damaged transcript recovered, a setting ignored...): a
            # program reading only stdout learns it as well.
            self.emit(
                {
                    "type": "system",
                    "subtype": event.level,
                    "text": event.text,
                    "session_id": session_id,
                    "uuid": new_uuid(),
                }
            )
        elif isinstance(event, Compacting):
            self._compacting = True
            self.emit(_status("compacting", session_id))
        elif isinstance(event, CompactBoundary):
            metadata = {
                "trigger": event.trigger,
                "pre_tokens": event.tokens_before,
                "post_tokens": event.tokens_after,
                "messages_summarized": event.messages_replaced - len(event.kept),
                "kept": list(event.kept),
                "summary": event.summary,
                "tool_results": [_snake(r.to_dict()) for r in event.results],
            }
            self.emit(
                {
                    "type": "system",
                    "subtype": "compact_boundary",
                    "session_id": session_id,
                    "compact_metadata": metadata,
                }
            )
        super().event(event)


class _SubagentLines:
    """A session observer: a sub-agent's messages, marked with the Task call that runs it."""

    def __init__(self, renderer: StreamJsonRenderer) -> None:
        self.renderer = renderer

    def prompt(self, message: Message) -> None:
        return None

    def event(self, event: Event, agent: SubAgent | None) -> None:
        if agent is not None and isinstance(event, AssistantTurn | UserTurn):
            session_id = self.renderer.session.session_id
            self.renderer.emit(message_line(event, session_id, agent.tool_use_id))

    def close(self) -> None:
        return None


def _status(status: str | None, session_id: str) -> dict[str, Any]:
    return {"type": "system", "subtype": "status", "status": status, "session_id": session_id}


def _snake(record: dict[str, Any]) -> dict[str, Any]:
    """A transcript record (camelCase) in stream-json's snake_case."""
    return {re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower(): value for key, value in record.items()}


def message_line(
    event: AssistantTurn | UserTurn, session_id: str, parent: str | None = None
) -> dict[str, Any]:
    """An assistant or user line of stream-json (`parent`: the sub-agent's Task call)."""
    if isinstance(event, AssistantTurn):
        kind = "assistant"
        message = assistant_message(
            event.message, event.model, event.usage, event.stop_reason, event.message_id
        )
        message["stop_sequence"] = None  # as the SDKs expect it in a stream-json line
    else:
        kind = "user"
        message = {"role": "user", "content": [block_to_dict(b) for b in event.message.content]}
    return {
        "type": kind,
        "message": message,
        "parent_tool_use_id": parent,
        "session_id": session_id,
        "uuid": event.message.uuid,
    }


def _mcp_servers(session: Any) -> list[dict[str, Any]]:
    """Each server with its status, as Claude Code's init line has them (and its error)."""
    if session.mcp is None:
        return []
    out = []
    for server in session.mcp.statuses():
        entry: dict[str, Any] = {"name": server.name, "status": server.status}
        if server.transport == "sdk":
            entry["source"] = "sdk"
        if server.error:
            entry["error"] = server.error
        out.append(entry)
    return out
