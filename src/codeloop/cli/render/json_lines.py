"""json: Claude Code's result object at the end; stream-json: one object per line as things
happen (init, each message, retries, compactions), then the same result."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from codeloop.cli.render.report import SUBTYPES, SessionView, StderrReport
from codeloop.events import (
    AssistantTurn,
    CompactBoundary,
    Compacting,
    Event,
    LoopEnd,
    Retrying,
    UserTurn,
)
from codeloop.transcript import assistant_message
from codeloop.types import block_to_dict


def _line(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


class JsonRenderer:
    def __init__(self, session: SessionView) -> None:
        self.session = session
        self.report = StderrReport()

    def start(self) -> None:
        return None

    def event(self, event: Event) -> None:
        self.report.event(event)

    def finish(self, end: LoopEnd, elapsed: float) -> int:
        session = self.session
        subtype = SUBTYPES.get(end.reason, "error_during_execution")
        is_error = subtype != "success"
        text = end.final_text
        _line(
            {
                "type": "result",
                "subtype": subtype,
                "is_error": is_error,
                "duration_ms": round(elapsed * 1000),
                "duration_api_ms": round(session.api_duration_ms),
                "num_turns": end.turns,
                "result": text if not is_error or text else (end.error or ""),
                "session_id": session.session_id,
                "total_cost_usd": round(session.cost_usd, 6),
                "usage": session.usage.to_dict(),
                "modelUsage": session.model_usage(),
                "terminal_reason": end.reason,
                "permission_denials": [
                    {
                        "tool_name": d.tool_name,
                        "tool_use_id": d.tool_use_id,
                        "tool_input": d.tool_input,
                    }
                    for d in session.config.policy.denials
                ],
            }
        )
        return self.report.end(end)


class StreamJsonRenderer(JsonRenderer):
    def start(self) -> None:
        session = self.session
        _line(
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
                # What was loaded: agents, memory files, skills, plugins (options.py).
                **session.inventory,
                # Every slash command (built-in, custom, MCP prompts): headless puts the
                # registry's names in the inventory.
                "slash_commands": session.inventory.get("slash_commands", []),
            }
        )

    _compacting = False  # a "compacting" status line is out: the next event ends it

    def event(self, event: Event) -> None:
        session_id = self.session.session_id
        if self._compacting and not isinstance(event, Compacting):
            # Claude Code's status lines: "compacting" while the summary is made, then null.
            # The loop's next event comes once the compaction is over, however it ended.
            self._compacting = False
            _line(_status(None, session_id))
        if isinstance(event, AssistantTurn):
            message = assistant_message(
                event.message, event.model, event.usage, event.stop_reason, event.message_id
            )
            message["stop_sequence"] = None  # as the SDKs expect it in a stream-json line
            _line(_envelope("assistant", message, event.message.uuid, session_id))
        elif isinstance(event, UserTurn):
            content = [block_to_dict(b) for b in event.message.content]
            message = {"role": "user", "content": content}
            _line(_envelope("user", message, event.message.uuid, session_id))
        elif isinstance(event, Retrying):
            _line(
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
        elif isinstance(event, Compacting):
            self._compacting = True
            _line(_status("compacting", session_id))
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
            _line(
                {
                    "type": "system",
                    "subtype": "compact_boundary",
                    "session_id": session_id,
                    "compact_metadata": metadata,
                }
            )
        super().event(event)


def _status(status: str | None, session_id: str) -> dict[str, Any]:
    return {"type": "system", "subtype": "status", "status": status, "session_id": session_id}


def _snake(record: dict[str, Any]) -> dict[str, Any]:
    """A transcript record (camelCase) in stream-json's snake_case."""
    return {re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower(): value for key, value in record.items()}


def _envelope(kind: str, message: dict[str, Any], uuid: str, session_id: str) -> dict[str, Any]:
    return {
        "type": kind,
        "message": message,
        "parent_tool_use_id": None,
        "session_id": session_id,
        "uuid": uuid,
    }


def _mcp_servers(session: Any) -> list[dict[str, Any]]:
    """Each server with its status, as Claude Code's init line has them (and its error)."""
    if session.mcp is None:
        return []
    out = []
    for server in session.mcp.statuses():
        entry: dict[str, Any] = {"name": server.name, "status": server.status}
        if server.error:
            entry["error"] = server.error
        out.append(entry)
    return out
