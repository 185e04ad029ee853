"""The interactive terminal UI (prompt_toolkit), drawn in the bottom lines of the terminal,
never full screen: what is final is printed above it into the scrollback once, and only the
live region — the answer's unfinished tail, running tools, spinner, input, footer — is redrawn,
and only where it changed. So nothing flickers or jumps while an answer streams, and the
terminal's own scrolling, search and copy keep working.

The input takes typing at any time: a prompt sent while the model works goes to it with the
next tool results (the front door's Conversation.send), or, if the turn ends first, runs next;
a command waits in a queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from prompt_toolkit.application import Application, in_terminal
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.data_structures import Point
from prompt_toolkit.enums import EditingMode
from prompt_toolkit.filters import Condition, Filter, has_completions, has_focus
from prompt_toolkit.formatted_text import ANSI, StyleAndTextTuples
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.input.typeahead import store_typeahead
from prompt_toolkit.input.vt100_parser import Vt100Parser
from prompt_toolkit.key_binding import (
    KeyBindings,
    KeyBindingsBase,
    KeyPress,
    KeyPressEvent,
    merge_key_bindings,
)
from prompt_toolkit.layout import (
    ConditionalContainer,
    Float,
    FloatContainer,
    HSplit,
    Layout,
    VSplit,
    Window,
)
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.output import ColorDepth
from prompt_toolkit.renderer import Renderer
from prompt_toolkit.styles import Style

from codeloop.cli.tui import footer
from codeloop.cli.tui.completion import InputCompleter
from codeloop.cli.tui.controller import Controller
from codeloop.cli.tui.dialogs import PermissionDialog, Picker
from codeloop.cli.tui.early import PROMPT, STARTING
from codeloop.cli.tui.presenter import Presenter
from codeloop.commands import Registry

if TYPE_CHECKING:
    from codeloop.options import Options
    from codeloop.permissions.policy import Answer, PermissionRequest

TICK = 0.1  # spinner and countdown refresh while busy
# Terminals that know it show an update all at once (DEC mode 2026); others ignore it.
SYNC_BEGIN, SYNC_END = "\x1b[?2026h", "\x1b[?2026l"
LIVE_STEP = 6  # rows the live region grows by while an answer streams
EXIT_WINDOW = 2.0  # a second Ctrl+C within this many seconds exits
MODE_CYCLE = ("default", "acceptEdits", "plan")
STYLE = Style.from_dict(
    {
        "prompt": "bold",
        "footer": "ansibrightblack",
        "spinner": "ansiyellow",
        "queued": "ansibrightblack italic",
        "hint": "ansibrightblack",
    }
)


class TerminalUI(Controller):
    def __init__(
        self,
        options: Options,
        registry: Registry,
        presenter: Presenter,
        *,
        first_prompt: str | None,
        history: Path | None,
        color: bool,
    ) -> None:
        super().__init__(options, registry, presenter)
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self.queued: list[str] = []
        # Sent while the model worked, each with whether it reached the model then.
        self.sent: list[tuple[str, asyncio.Future[bool]]] = []
        self.dialog: PermissionDialog | None = None
        self.picker: Picker | None = None
        self.first_prompt = first_prompt
        self._exit_armed = 0.0
        self._rewind_armed = 0.0  # a first Esc on an empty input: a second opens /rewind
        self._started = time.monotonic()
        self._status_line = ""
        self._status_task: asyncio.Task[None] | None = None
        self._print_scheduled = False
        self._live_rows = 0
        self._drawn: list[str] = []  # the live region's lines in the last frame
        self._bypass = options.permission_mode == "bypassPermissions"
        self.buffer = Buffer(
            multiline=True,
            history=_history(history),
            completer=InputCompleter(self._commands, self._cwd),
            complete_while_typing=True,
        )
        self.deny_buffer = Buffer(multiline=False)
        self.app: Application[None] = Application(
            layout=self._layout(),
            key_bindings=self._keys(),
            style=STYLE,
            full_screen=False,
            mouse_support=False,
            color_depth=ColorDepth.DEPTH_24_BIT if color else ColorDepth.DEPTH_1_BIT,
            min_redraw_interval=0.03,
            max_render_postpone_time=0.05,
            erase_when_done=False,
        )
        self.app.after_render += self._after_render
        self.app.ttimeoutlen = 0.05  # Esc acts at once instead of waiting for a sequence
        self.app.timeoutlen = 0.5

    # --- running ----------------------------------------------------------------------------

    async def main(self, typed: str = "") -> int:
        """Run until exit; `typed`: the keys typed before the UI was up (early.py), which the
        input takes first."""
        self.app.editing_mode = EditingMode.EMACS
        keys: list[KeyPress] = []
        parser = Vt100Parser(keys.append)
        parser.feed(typed)
        parser.flush()
        store_typeahead(self.app.input, keys)
        opening = asyncio.create_task(self._open_then_work())
        try:
            await self.app.run_async()
        finally:
            self.closing = True
            if self.ready:
                self.conversation.interrupt()
            opening.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await opening
            session_id = self.conversation.session_id if self.ready else None
            await self.close()
            out = self.presenter.take_output()
            if out:
                self.app.output.write_raw(out)
            if session_id:
                self.app.output.write_raw(
                    self.presenter.renderer.styled(
                        f"Session saved. Resume it with: codeloop -r {session_id}", "dim"
                    )
                )
            self.app.output.flush()
        return self.exit_status

    async def _open_then_work(self) -> None:
        try:
            await self.open()
        except Exception as exc:
            from codeloop.cli.tui import startup_error, startup_status

            self.presenter.note("error", startup_error(exc))
            self.exit_status = startup_status(exc)
            self.app.exit()
            return
        settings = self.session.settings
        if settings is not None and settings.editor_mode == "vim":
            self.app.editing_mode = EditingMode.VI
        self._refresh_status()
        self.flush()
        if self.first_prompt:
            self.queue.put_nowait(self.first_prompt)
        ticker = asyncio.create_task(self._tick())
        undelivered: list[str] = []
        try:
            while True:
                text = undelivered.pop(0) if undelivered else await self.queue.get()
                if text in self.queued:
                    self.queued.remove(text)
                await self.handle(text)
                # Sent meanwhile, but the turn ended before a tool result could carry them.
                undelivered += [sent for sent, reached in self.sent if not reached.result()]
                self.sent.clear()
                self._refresh_status()
        finally:
            ticker.cancel()

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(TICK)
            if self.presenter.busy:
                self.app.invalidate()

    # --- the Controller's frontend part -----------------------------------------------------

    @property
    def interactive(self) -> bool:
        return True

    def flush(self) -> None:
        """Redraw the live region; what became final is moved to the scrollback right after
        the frame that shows it (`_after_render`)."""
        if not self.app.is_running:
            out = self.presenter.take_output()
            if out:
                self.app.output.write_raw(out)
                self.app.output.flush()
            return
        self.app.invalidate()

    def _after_render(self, app: Application[None]) -> None:
        if self.presenter.pending and not self._print_scheduled and not app.is_done:
            self._print_scheduled = True
            asyncio.get_running_loop().call_soon(self._print)

    def _print(self) -> None:
        """Put the final text above the UI, into the scrollback, once. Text the last frame
        drew at the top of the live region is already on the screen: the UI just starts
        below it (nothing is written twice); anything else is written after erasing the UI.
        Then the UI is drawn again below, in one synchronized update (no tearing)."""
        self._print_scheduled = False
        app, presenter = self.app, self.presenter
        if not presenter.pending or not app.is_running or app.is_done:
            return
        drawn, adopted = self._drawn, 0
        while adopted < len(presenter.pending):
            lines = presenter.pending[adopted].rstrip("\n").split("\n")
            if drawn[: len(lines)] != lines:
                break
            drawn = drawn[len(lines) :]
            adopted += 1
        rows = len(self._drawn) - len(drawn)
        output, renderer = app.output, app.renderer
        if adopted and _forget_top_rows(renderer, rows):
            presenter.take(adopted)
            self._live_rows = max(0, self._live_rows - rows)
            app.invalidate()
            return
        output.write_raw(SYNC_BEGIN)
        renderer.erase()
        output.write_raw(presenter.take_output())
        output.reset_attributes()
        renderer.reset()
        app._request_absolute_cursor_position()
        app._redraw()
        output.write_raw(SYNC_END)
        output.flush()

    async def choose(self, title: str, options: Sequence[str]) -> int | None:
        if not options:
            return None
        self.picker = Picker(title, options, asyncio.get_running_loop().create_future())
        self.app.invalidate()
        try:
            return await self.picker.answer
        finally:
            self.picker = None
            self.app.invalidate()

    async def ask(self, request: PermissionRequest) -> Answer:
        dialog = PermissionDialog(request, asyncio.get_running_loop().create_future())
        self.dialog = dialog
        self.presenter.asking(request.tool_use_id, True)
        self.flush()
        try:
            return await dialog.answer
        finally:
            self.dialog = None
            self.presenter.asking(request.tool_use_id, False)
            self.deny_buffer.reset()
            if self.app.layout.has_focus(self.deny_buffer):
                self.app.layout.focus(self.buffer)
            self.app.invalidate()

    async def edit(self, path: Path) -> None:
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        path.parent.mkdir(parents=True, exist_ok=True)
        async with in_terminal():
            await asyncio.to_thread(subprocess.run, [*shlex.split(editor), str(path)])

    def exit(self) -> None:
        if self.app.is_running and not self.app.is_done:
            self.app.exit()

    # --- what the layout draws --------------------------------------------------------------

    def _commands(self) -> list:  # type: ignore[type-arg]
        return self.registry.commands(self.session if self.ready else None)

    def _cwd(self) -> Path:
        return self.session.workspace.cwd if self.ready else Path.cwd()

    def _rows(self) -> int:
        return self.app.output.get_size().rows

    def _width(self) -> int:
        return max(20, self.app.output.get_size().columns)

    def _live(self) -> StyleAndTextTuples:
        self.presenter.width = self._width()
        lines = self.presenter.live().rstrip("\n").split("\n")
        if lines == [""]:
            lines = []
        room = max(3, self._rows() - 8)
        if len(lines) > room:  # only the newest lines fit: the rest prints when final
            lines = lines[-room:]
            self._drawn = []
        else:
            self._drawn = list(lines)
        # While a run streams, the region only grows, and in steps: each time it grows, all
        # below it (spinner, input, footer) must be drawn again one row lower.
        if self.presenter.busy:
            if len(lines) > self._live_rows:
                self._live_rows = min(room, -(-len(lines) // LIVE_STEP) * LIVE_STEP)
            lines += [""] * (self._live_rows - len(lines))
        else:
            self._live_rows = 0
        return ANSI("\n".join(lines)).__pt_formatted_text__()

    def _spinner(self) -> StyleAndTextTuples:
        return [("class:spinner", self.presenter.spinner()[: self._width()])]

    def _queued(self) -> StyleAndTextTuples:
        lines = [f"⧗ queued: {' '.join(q.split())}"[: self._width()] for q in self.queued]
        return [("class:queued", "\n".join(lines))]

    def _question(self) -> StyleAndTextTuples:
        if self.dialog is not None:
            rows = self.dialog.lines(self._width())
        elif self.picker is not None:
            rows = self.picker.lines(max(3, self._rows() - 8))
        else:
            return []
        out: StyleAndTextTuples = []
        for i, (style, text) in enumerate(rows):
            out.append((style, text + ("\n" if i < len(rows) - 1 else "")))
        return out

    def _footer(self) -> StyleAndTextTuples:
        width = self._width()
        now = time.monotonic()
        if now < self._exit_armed:
            return [("class:hint", "Press Ctrl+C again to exit")]
        if now < self._rewind_armed:
            return [("class:hint", "Press Esc again to rewind (/rewind)")]
        if not self.ready:
            return [("class:footer", STARTING)]
        if self._status_line:
            return [("", self._status_line[:width])]
        return [("class:footer", footer.footer(self.session, width))]

    def _refresh_status(self) -> None:
        """Run the statusLine command again (after each prompt, and when the mode changes)."""
        settings = self.session.settings if self.ready else None
        command = settings.status_line if settings is not None else None
        if not command or (self._status_task is not None and not self._status_task.done()):
            return
        data = footer.status_input(self.session, self._started)

        async def run() -> None:
            self._status_line = await footer.run_status_line(command, data, self._cwd())
            self.app.invalidate()

        self._status_task = asyncio.create_task(run())

    def _layout(self) -> Layout:
        asking = Condition(lambda: self.dialog is not None or self.picker is not None)
        writing = Condition(lambda: self.dialog is not None and self.dialog.writing)
        busy = Condition(lambda: self.presenter.busy)
        has_queue = Condition(lambda: bool(self.queued))
        # A blank row, not a drawn rule: the rows under the live region are drawn again each
        # time it grows, and a rule of box characters costs three bytes a column.
        gap = Window(height=1)
        prompt = Window(
            FormattedTextControl([("class:prompt", PROMPT)]),
            width=len(PROMPT),
            dont_extend_width=True,
        )
        editor = Window(
            BufferControl(self.buffer),
            wrap_lines=True,
            height=Dimension(min=1, max=12),
            dont_extend_height=True,
        )
        deny = VSplit(
            [
                Window(FormattedTextControl("│  "), width=3, dont_extend_width=True),
                Window(BufferControl(self.deny_buffer), height=1),
            ]
        )
        body = HSplit(
            [
                Window(FormattedTextControl(self._live), dont_extend_height=True, wrap_lines=False),
                ConditionalContainer(
                    Window(FormattedTextControl(self._spinner), height=1), filter=busy
                ),
                ConditionalContainer(
                    Window(FormattedTextControl(self._queued), dont_extend_height=True),
                    filter=has_queue,
                ),
                ConditionalContainer(
                    Window(FormattedTextControl(self._question), dont_extend_height=True),
                    filter=asking,
                ),
                ConditionalContainer(deny, filter=writing),
                gap,
                VSplit([prompt, editor]),
                Window(FormattedTextControl(self._footer), height=1),
            ]
        )
        root = FloatContainer(
            body,
            floats=[
                Float(
                    xcursor=True,
                    ycursor=True,
                    content=CompletionsMenu(max_height=8, scroll_offset=1),
                )
            ],
        )
        return Layout(root, focused_element=editor)

    # --- keys -------------------------------------------------------------------------------

    def _keys(self) -> KeyBindingsBase:
        dialog = Condition(lambda: self.dialog is not None and not self.dialog.writing)
        picking = Condition(lambda: self.picker is not None and self.dialog is None)
        writing = Condition(lambda: self.dialog is not None and self.dialog.writing)
        return merge_key_bindings(
            [self._question_keys(dialog | picking, writing), self._input_keys(dialog | picking)]
        )

    def _question_keys(self, asking: Filter, writing: Filter) -> KeyBindings:
        """The permission dialog's and the picker's keys, and Esc (which also stops a turn)."""
        kb = KeyBindings()
        busy = Condition(lambda: self.presenter.busy)

        @kb.add("escape", eager=True, filter=asking | writing | busy)
        def _escape(event: KeyPressEvent) -> None:
            if self.dialog is not None:
                self.dialog.deny(self.deny_buffer.text if self.dialog.writing else "")
            elif self.picker is not None:
                self.picker.cancel()
            elif self.presenter.busy:
                self._interrupt()

        @kb.add("up", filter=asking)
        @kb.add("c-p", filter=asking)
        def _up(event: KeyPressEvent) -> None:
            (self.dialog or self.picker).move(-1)  # type: ignore[union-attr]

        @kb.add("down", filter=asking)
        @kb.add("c-n", filter=asking)
        @kb.add("tab", filter=asking)
        def _down(event: KeyPressEvent) -> None:
            (self.dialog or self.picker).move(1)  # type: ignore[union-attr]

        for digit in "123456789":

            @kb.add(digit, filter=asking)
            def _number(event: KeyPressEvent) -> None:
                index = int(event.key_sequence[0].key) - 1
                if self.dialog is not None:
                    self.dialog.pick(index)
                    if self.dialog.writing:
                        event.app.layout.focus(self.deny_buffer)
                elif self.picker is not None and index < len(self.picker.options):
                    self.picker.pick(index)

        @kb.add("enter", filter=asking)
        def _choose(event: KeyPressEvent) -> None:
            if self.dialog is not None:
                self.dialog.pick()
                if self.dialog.writing:
                    event.app.layout.focus(self.deny_buffer)
            elif self.picker is not None:
                self.picker.pick()

        @kb.add("enter", filter=writing)
        def _deny(event: KeyPressEvent) -> None:
            assert self.dialog is not None
            self.dialog.deny(self.deny_buffer.text)

        return kb

    def _input_keys(self, asking: Filter) -> KeyBindings:
        """Sending, new lines, completion, Ctrl+C/D, the mode, the folded output."""
        kb = KeyBindings()
        in_input = has_focus(self.buffer)

        @kb.add("enter", filter=in_input & ~asking & has_completions)
        def _complete(event: KeyPressEvent) -> None:
            state = self.buffer.complete_state
            if state is not None and state.current_completion is not None:
                self.buffer.apply_completion(state.current_completion)
                if self.buffer.text.startswith("/") and " " not in self.buffer.text:
                    self.buffer.insert_text(" ")
            else:
                self._send()

        @kb.add("enter", filter=in_input & ~asking & ~has_completions)
        def _enter(event: KeyPressEvent) -> None:
            document = self.buffer.document
            if document.text_before_cursor.endswith("\\"):  # \ then Enter: a new line
                self.buffer.delete_before_cursor(1)
                self.buffer.insert_text("\n")
                return
            self._send()

        @kb.add("escape", "enter", filter=in_input)
        @kb.add("c-j", filter=in_input)
        def _newline(event: KeyPressEvent) -> None:
            self.buffer.insert_text("\n")

        @kb.add("c-c")
        def _ctrl_c(event: KeyPressEvent) -> None:
            if self.dialog is not None:
                self.dialog.deny()
                return
            if self.picker is not None:
                self.picker.cancel()
                return
            if self.buffer.text:
                self.buffer.reset()
                return
            if self.presenter.busy:
                self._interrupt()
                return
            now = time.monotonic()
            if now < self._exit_armed:
                self.exit()
                return
            self._exit_armed = now + EXIT_WINDOW
            asyncio.get_running_loop().call_later(EXIT_WINDOW, self.app.invalidate)

        idle = Condition(lambda: self.ready and not self.presenter.busy and not self.buffer.text)

        @kb.add("escape", filter=in_input & ~asking & idle)
        def _escape_twice(event: KeyPressEvent) -> None:
            now = time.monotonic()
            if now < self._rewind_armed:
                self._rewind_armed = 0.0
                self.queue.put_nowait("/rewind")
                return
            self._rewind_armed = now + EXIT_WINDOW
            asyncio.get_running_loop().call_later(EXIT_WINDOW, self.app.invalidate)

        @kb.add("c-d", filter=in_input)
        def _ctrl_d(event: KeyPressEvent) -> None:
            if not self.buffer.text:
                self.exit()
            else:
                self.buffer.delete(1)

        @kb.add("s-tab")
        def _cycle_mode(event: KeyPressEvent) -> None:
            if not self.ready:
                return
            auto = self.session.config.policy.auto is not None  # the settings may disable it
            cycle = (*MODE_CYCLE, *(("auto",) if auto else ()))
            cycle = (*cycle, "bypassPermissions") if self._bypass else cycle
            mode = self.conversation.mode
            index = cycle.index(mode) if mode in cycle else -1
            self.conversation.set_mode(cycle[(index + 1) % len(cycle)])
            self._refresh_status()

        @kb.add("c-o")
        def _expand(event: KeyPressEvent) -> None:
            folded = self.presenter.folded
            if folded:
                self.presenter.pending.append(self.presenter.renderer.output(folded))
                self.flush()

        return kb

    def _send(self) -> None:
        text = self.buffer.text
        if not text.strip():
            return
        self.buffer.reset(append_to_history=True)
        if self.presenter.busy or not self.ready:
            self.queued.append(text)
            if self.ready and not text.lstrip().startswith("/"):
                reached = self.conversation.send(text)
                if reached is not None:
                    reached.add_done_callback(lambda done: self._delivered(text, done))
                    self.sent.append((text, reached))
                    self.app.invalidate()
                    return
        self.queue.put_nowait(text)
        self.app.invalidate()

    def _delivered(self, text: str, reached: asyncio.Future[bool]) -> None:
        """A message sent while the model worked reached it: it leaves the queue for the
        conversation (one that did not stays queued, and runs next)."""
        if reached.cancelled() or not reached.result() or text not in self.queued:
            return
        self.queued.remove(text)
        self.presenter.echo(text)
        self.flush()

    def _interrupt(self) -> None:
        """Esc: stop the turn; what was queued comes back into the input to edit."""
        if self.ready:
            self.conversation.interrupt()
        if self.queued:
            while not self.queue.empty():
                self.queue.get_nowait()
            self.sent.clear()  # what the stopped turn did not take comes back to the input
            waiting = "\n".join(self.queued)
            self.queued.clear()
            if not self.buffer.text:
                self.buffer.text = waiting
                self.buffer.cursor_position = len(waiting)


def _forget_top_rows(renderer: Renderer, rows: int) -> bool:
    """Make the UI start `rows` lower, leaving what it drew there as scrollback: the
    renderer's picture of the screen moves up with it, so the next frame writes only what
    changed. Reaches into prompt_toolkit's renderer (3.0); False when its shape differs."""
    screen = getattr(renderer, "_last_screen", None)
    cursor = getattr(renderer, "_cursor_pos", None)
    if screen is None or not isinstance(cursor, Point) or cursor.y < rows:
        return False
    for table in (screen.data_buffer, screen.zero_width_escapes):
        kept = {y - rows: row for y, row in table.items() if y >= rows}
        table.clear()
        table.update(kept)
    screen.height = max(0, screen.height - rows)
    renderer._cursor_pos = Point(cursor.x, cursor.y - rows)
    if renderer._min_available_height > 0:
        renderer._min_available_height = max(0, renderer._min_available_height - rows)
    return True


def _history(path: Path | None) -> History:
    if path is None:
        return InMemoryHistory()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return FileHistory(str(path))
    except OSError:
        return InMemoryHistory()
