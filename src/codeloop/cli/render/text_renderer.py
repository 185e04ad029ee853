"""Text for people: the answer streams to a terminal (and is taken back if the loop discards
it); a pipe gets the final answer alone. With --verbose, tool calls go to stderr."""

from __future__ import annotations

import json
import sys

from codeloop.cli.live import LiveText
from codeloop.events import (
    AssistantTurn,
    Event,
    LoopEnd,
    MediaRemoved,
    Notice,
    ResponseDiscarded,
    Retrying,
    SubagentEvent,
    TextDelta,
    ToolStarted,
)
from codeloop.protocol.run_report import SessionView, StderrReport


class TextRenderer:
    def __init__(self, session: SessionView, *, verbose: bool) -> None:
        self.verbose = verbose
        # A person watching gets the text as it streams; a pipe gets only the final answer.
        self.live = (
            LiveText(sys.stdout, shares_screen=sys.stderr.isatty()) if sys.stdout.isatty() else None
        )
        self.report = StderrReport(self.live.other_line if self.live else None)

    def start(self) -> None:
        return None

    def event(self, event: Event) -> None:
        if self.live is not None:
            self._stream(self.live, event)
        if not self.report.event(event) and self.verbose and (line := progress_line(event)):
            self.report.line(line)

    def _stream(self, live: LiveText, event: Event) -> None:
        if isinstance(event, TextDelta):
            live.write(event.text)
        elif isinstance(event, ResponseDiscarded):
            live.discard(event.reason)  # never left on screen looking like the answer
        elif isinstance(event, AssistantTurn | ToolStarted | Notice | Retrying | MediaRemoved):
            # the turn ended, or a line is about to go to stderr: end the streamed line first
            live.end_line()
            if isinstance(event, AssistantTurn):
                live.settle()

    def finish(self, end: LoopEnd, elapsed: float) -> int:
        text = end.final_text
        if text and self.live is None:
            sys.stdout.write(text.rstrip("\n") + "\n")
            sys.stdout.flush()
        return self.report.end(end)


def progress_line(event: Event) -> str | None:
    """What --verbose shows on stderr for `event`: a tool call (a sub-agent's too)."""
    if isinstance(event, SubagentEvent):
        inner = progress_line(event.event)
        who = event.agent.description or event.agent.agent_type
        return f"  ⎿ {who}: {inner.strip()}" if inner else None
    if isinstance(event, ToolStarted):
        args = json.dumps(event.tool_use.input, ensure_ascii=False)
        return f"⏺ {event.tool_use.name}({args[:120]})"
    if isinstance(event, Notice):
        return f"  {event.level}: {event.text}"
    return None
