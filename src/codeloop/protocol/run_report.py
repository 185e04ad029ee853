"""What every format reports on stderr, and how a run's end becomes an exit status."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from codeloop.events import (
    CompactBoundary,
    Event,
    LoopEnd,
    MediaRemoved,
    Notice,
    Retrying,
    SubagentEvent,
)
from codeloop.tools.base import AnyTool, Workspace
from codeloop.types import Usage

SUBTYPES = {
    "completed": "success",
    "max_turns": "error_max_turns",
    "max_budget": "error_max_budget_usd",
}


class SessionView(Protocol):
    """What a renderer reads of the session (a Session satisfies it)."""

    @property
    def session_id(self) -> str: ...

    @property
    def workspace(self) -> Workspace: ...

    @property
    def tools(self) -> Mapping[str, AnyTool]: ...

    @property
    def config(self) -> Any: ...

    @property
    def api_duration_ms(self) -> float: ...

    @property
    def cost_usd(self) -> float: ...

    @property
    def usage(self) -> Usage: ...

    @property
    def inventory(self) -> Mapping[str, Any]: ...

    @property
    def observers(self) -> list[Any]: ...

    @property
    def subagent_runs(self) -> Sequence[Any]: ...

    def model_usage(self) -> dict[str, dict[str, Any]]: ...


class StderrReport:
    """Retries, warnings, compactions and removed images, one line each, for people."""

    def __init__(self, also: Callable[[str], None] | None = None) -> None:
        """`also` hears every line printed (the live text counts the rows they take)."""
        self.also = also
        self.prefix = ""  # names the sub-agent a line comes from

    def line(self, text: str) -> None:
        print(text, file=sys.stderr)
        if self.also is not None:
            self.also(text)

    def event(self, event: Event) -> bool:
        """Report `event` if it is one of these; whether it was."""
        if isinstance(event, SubagentEvent):
            inner = event.event
            if isinstance(inner, Retrying | Notice) and not (
                isinstance(inner, Notice) and inner.level == "info"
            ):
                self.prefix = f"[{event.agent.description or event.agent.agent_type}] "
                try:
                    return self.event(inner)
                finally:
                    self.prefix = ""
            return False
        if isinstance(event, CompactBoundary):
            for text in compaction_report(event):
                self.line(text)
        elif isinstance(event, MediaRemoved):
            self.line(
                f"codeloop: warning: removed {event.removed} image(s) the API refused "
                f"({event.reason}); sending again without them"
            )
        elif isinstance(event, Retrying):
            self.line(
                f"codeloop: {self.prefix}{event.error}; retrying in {event.wait_seconds:.1f} s "
                f"(attempt {event.attempt + 1} of {event.max_attempts})"
            )
        elif isinstance(event, Notice) and event.level != "info":
            self.line(f"codeloop: {self.prefix}{event.level}: {event.text}")
        else:
            return False
        return True

    def end(self, end: LoopEnd) -> int:
        """The exit status; a run that did not succeed says why in one line."""
        if SUBTYPES.get(end.reason) == "success":
            return 0
        print(f"codeloop: {_end_message(end)}", file=sys.stderr)
        return 130 if end.reason.startswith("aborted") else 1


def compaction_report(boundary: CompactBoundary) -> list[str]:
    """What a compaction did, and the summary the model goes on from, for people to review."""
    fates = Counter(r.fate for r in boundary.results)
    taken = ", ".join(
        f"{n} {fate}" for fate in ("folded", "saved", "summarized") if (n := fates[fate])
    )
    summarized = boundary.messages_replaced - len(boundary.kept)
    lines = [
        f"codeloop: compacted the conversation ({boundary.trigger}): "
        f"{boundary.tokens_before:,} → {boundary.tokens_after:,} tokens; summarized "
        f"{summarized} message{'' if summarized == 1 else 's'}"
        + (f" ({len(boundary.results)} tool results: {taken})" if boundary.results else "")
        + f", kept {len(boundary.kept)} word for word. The summary:"
    ]
    lines += [f"  {line}".rstrip() for line in boundary.summary.splitlines()]
    return lines


def _end_message(end: LoopEnd) -> str:
    if end.reason == "max_turns":
        return end.error or "reached the turn limit"
    if end.reason.startswith("aborted"):
        return "interrupted"
    return end.error or end.reason.replace("_", " ")
