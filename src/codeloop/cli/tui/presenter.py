"""A run's events, as the screen shows them: text that is final goes to `pending` (printed to
the scrollback once, then never touched), and the rest — the answer's unfinished tail, the
tools still running, the spinner — is the live region, redrawn in place. The terminal UI and
the plain line mode both use it; neither looks at anything but the Session's events."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from codeloop.cli.tui import tool_views
from codeloop.cli.tui.markdown_stream import Block, MarkdownStream
from codeloop.events import (
    AssistantTurn,
    CompactBoundary,
    Compacting,
    Event,
    LoopEnd,
    Notice,
    RequestStart,
    ResponseDiscarded,
    Retrying,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolProgress,
    ToolStarted,
)
from codeloop.system.valueclass import valueclass
from codeloop.types import ToolUseBlock

if TYPE_CHECKING:
    from codeloop.cli.tui.render import Renderer

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
LIVE_TOOL_LINES = 3
THINKING_LINES = 3
STALL_NOTICE = 10.0  # seconds without an event before the spinner says the stream is quiet


@valueclass(frozen=False)
class RunningTool:
    tool_use: ToolUseBlock
    started: float
    output: str = ""
    asking: bool = False  # its permission dialog is open: it has not started running


@valueclass(frozen=False)
class Presenter:
    cwd: Path
    width: int = 80
    color: bool = True
    clock: Callable[[], float] = time.monotonic
    pending: list[str] = field(default_factory=list)
    tools: dict[str, RunningTool] = field(default_factory=dict)
    # The last output shown folded (a long tool result, a thinking block): ctrl+o prints it.
    folded: str = ""
    status: str = ""
    busy: bool = False

    def __post_init__(self) -> None:
        self._renderer: Renderer | None = None
        self._stream = MarkdownStream()
        self._first = True  # the next block of the answer carries the bullet
        self._thinking = ""
        self._thinking_started: float | None = None
        self._retry_until: float | None = None
        self._run_started = self.clock()
        self._last_event = self._run_started
        self._streamed_chars = 0
        self._output_tokens = 0
        self._items = 0

    @property
    def renderer(self) -> Renderer:
        """rich loads with the first thing to render, not before the prompt is drawn."""
        if self._renderer is None:
            from codeloop.cli.tui.render import Renderer

            self._renderer = Renderer(self.width, color=self.color)
        self._renderer.width = self.width
        return self._renderer

    # --- input from the frontend --------------------------------------------------------

    def begin(self, shown: str | None = None, status: str = "Thinking") -> None:
        """A run starts (a prompt, or a command): `shown` is echoed into the scrollback."""
        if shown is not None:
            self.echo(shown)
        self.busy = True
        self.status = status
        self._run_started = self._last_event = self.clock()
        self._streamed_chars = self._output_tokens = 0
        self._items = 0 if shown is None else 1

    def end(self) -> None:
        self._finish_text()
        self.tools.clear()
        self.busy = False
        self.status = ""

    def asking(self, tool_use_id: str, asking: bool) -> None:
        """A call's permission dialog opens or closes: it runs (and its time counts) from
        the answer on."""
        running = self.tools.get(tool_use_id)
        if running is not None:
            running.asking = asking
            running.started = self.clock()
            verb = "Waiting for permission to run" if asking else "Running"
            self.status = f"{verb} {running.tool_use.name}"

    def echo(self, text: str) -> None:
        """What the user sent, into the scrollback."""
        self.pending.append("\n" + self.renderer.user(text))

    def show(self, text: str) -> None:
        self.pending.append(self.renderer.output(text))

    def note(self, level: str, text: str) -> None:
        self.pending.append(self.renderer.notice(level, text))

    def take_output(self) -> str:
        return self.take(len(self.pending))

    def take(self, count: int) -> str:
        """The first `count` pieces of final text, now printed."""
        out = "".join(self.pending[:count])
        del self.pending[:count]
        return out

    # --- events ---------------------------------------------------------------------------

    def event(self, event: Event) -> None:
        self._last_event = self.clock()
        if not isinstance(event, Retrying):
            self._retry_until = None  # the wait is over once anything else happens
        if isinstance(event, TextDelta):
            self._end_thinking()
            self._streamed_chars += len(event.text)
            self.status = "Responding"
            self._blocks(self._stream.feed(event.text))
        elif isinstance(event, ThinkingDelta):
            if self._thinking_started is None:
                self._thinking_started = self.clock()
            self._thinking += event.text
            self._streamed_chars += len(event.text)
            self.status = "Thinking"
        elif isinstance(event, RequestStart):
            self.status = (
                "Thinking" if event.attempt == 1 else f"Retrying (attempt {event.attempt})"
            )
        elif isinstance(event, AssistantTurn):
            self._end_thinking()
            self._finish_text()
            self._output_tokens += event.usage.output_tokens
            self._streamed_chars = 0
            self._first = True
        elif isinstance(event, ToolStarted):
            self._end_thinking()
            self._finish_text()
            self.tools[event.tool_use.id] = RunningTool(event.tool_use, self.clock())
            self.status = f"Running {event.tool_use.name}"
        elif isinstance(event, ToolProgress):
            running = self.tools.get(event.tool_use_id)
            if running is not None:
                running.output = (running.output + event.text)[-4000:]
        elif isinstance(event, ToolFinished):
            self.tools.pop(event.tool_use.id, None)
            self._tool_done(event)
        elif isinstance(event, Notice):
            self.note(event.level, event.text)
        elif isinstance(event, Retrying):
            self._retry_until = self.clock() + event.wait_seconds
            self.status = f"{event.error}; retry {event.attempt + 1} of {event.max_attempts}"
        elif isinstance(event, ResponseDiscarded):
            self._stream = MarkdownStream()
            self._thinking, self._thinking_started = "", None
            self.note("warning", f"The answer so far was dropped ({event.reason}); it is resent.")
        elif isinstance(event, Compacting):
            self.status = f"Compacting the conversation ({event.tokens:,} tokens)"
        elif isinstance(event, CompactBoundary):
            self.note(
                "info",
                f"Compacted the conversation ({event.trigger}): {event.tokens_before:,} → "
                f"{event.tokens_after:,} tokens",
            )
        elif isinstance(event, LoopEnd):
            self._end_thinking()
            self._finish_text()
            if event.reason.startswith("aborted"):
                self.note("warning", "Interrupted: what ran so far is kept.")
            elif event.reason != "completed":
                self.note("error", event.error or event.reason.replace("_", " "))

    # --- the live region ------------------------------------------------------------------

    def live(self) -> str:
        """Everything not yet in the scrollback: final text waiting to be printed, the
        thinking and answer in progress, the running tools."""
        parts = list(self.pending)
        if not (self._thinking or self._stream.tail.strip() or self.tools):
            return "".join(parts)
        r = self.renderer
        if self._thinking:
            lines = self._thinking.strip().splitlines()[-THINKING_LINES:]
            parts.append(r.thinking("\n".join(lines)))
        code, language = self._stream.in_code
        tail = self._stream.tail
        if tail.strip():
            # Drawn as it will be printed once final (the same gap above it), so the rows
            # on the screen stay where they are when it is.
            rendered = r.tail(tail, code=code, language=language, first=self._first)
            gap = "" if code else ("\n" if not self._first else ("\n" if self._items else ""))
            parts.append(gap + rendered)
        now = self.clock()
        for running in self.tools.values():
            argument = tool_views.argument(running.tool_use, self.cwd)
            parts.append(r.tool_line(running.tool_use.name, argument, running=True))
            lines = running.output.rstrip("\n").splitlines()[-LIVE_TOOL_LINES:]
            if running.asking:
                elapsed = "waiting for your answer"
            else:
                elapsed = f"running for {now - running.started:.0f} s"
            parts.append(r.result_lines([*lines, elapsed] if lines else [elapsed]))
        return "".join(parts)

    def spinner(self) -> str:
        """One line: what is happening, for how long, how much has streamed."""
        if not self.busy:
            return ""
        now = self.clock()
        frame = SPINNER[int(now * 10) % len(SPINNER)]
        elapsed = now - self._run_started
        tokens = self._output_tokens + self._streamed_chars // 4
        status = self.status or "Working"
        if self._retry_until is not None:
            status = f"{status} in {max(0.0, self._retry_until - now):.0f} s"
        elif not self.tools and now - self._last_event >= STALL_NOTICE:
            status = f"{status} (nothing from the model for {now - self._last_event:.0f} s)"
        details = [f"{elapsed:.0f} s"]
        if tokens:
            details.append(f"↓ {tokens:,} tokens")
        details.append("esc to interrupt")
        return f"{frame} {status}… ({' · '.join(details)})"

    # --- helpers --------------------------------------------------------------------------

    def _blocks(self, blocks: list[Block]) -> None:
        for block in blocks:
            rendered = self.renderer.block(block, first=self._first)
            if not rendered:
                continue
            if not self._first and (block.kind == "markdown" or block.opens):
                rendered = "\n" + rendered  # a blank line between paragraphs, around code
            elif self._first:
                rendered = self._gap() + rendered
            self.pending.append(rendered)
            self._first = False

    def _finish_text(self) -> None:
        self._blocks(self._stream.finish())

    def _end_thinking(self) -> None:
        if not self._thinking:
            return
        seconds = self.clock() - (self._thinking_started or self.clock())
        self.folded = self._thinking.strip()
        self.pending.append(
            self.renderer.styled(f"✻ Thought for {seconds:.0f} s (ctrl+o to show)", "dim italic")
        )
        self._thinking, self._thinking_started = "", None

    def _tool_done(self, event: ToolFinished) -> None:
        r = self.renderer
        summary = tool_views.summarize(event.tool_use, event.result, event.data)
        argument = tool_views.argument(event.tool_use, self.cwd)
        out = [r.tool_line(event.tool_use.name, argument, failed=summary.error)]
        out.append(r.result_lines(summary.lines, error=summary.error, more=summary.more))
        hunks = (event.data or {}).get("structuredPatch") if not summary.error else None
        if hunks:
            out.append(r.diff(hunks))
            self.folded = r.diff(hunks, limit=10**9)
        elif summary.full:
            self.folded = summary.full
        self.pending.append(self._gap() + "".join(out))

    def _gap(self) -> str:
        """A blank line between the items of a run (the answer, each tool call)."""
        gap = "\n" if self._items else ""
        self._items += 1
        return gap
