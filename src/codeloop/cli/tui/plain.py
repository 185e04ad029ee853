"""The interactive session as plain lines, for when there is no terminal to draw on (stdin or
stdout piped, TERM=dumb): each input line is a prompt (a line ending in `\\` goes on to the
next), the answer prints paragraph by paragraph as it completes, tool calls one line each, no
colours and no cursor movement. Questions are asked on the terminal when there is one;
without one, what would be asked is denied, as in headless runs."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from codeloop.cli.tui.controller import Controller
from codeloop.cli.tui.presenter import Presenter
from codeloop.commands import Registry

if TYPE_CHECKING:
    from codeloop.options import Options
    from codeloop.permissions.policy import Answer, PermissionRequest


class PlainUI(Controller):
    def __init__(
        self,
        options: Options,
        registry: Registry,
        presenter: Presenter,
        *,
        first_prompt: str | None,
    ) -> None:
        super().__init__(options, registry, presenter)
        self.first_prompt = first_prompt
        self._done = False

    @property
    def interactive(self) -> bool:
        return sys.stdin.isatty()

    async def main(self) -> int:
        try:
            await self.open()
        except Exception as exc:
            from codeloop.cli.tui import startup_error, startup_status

            print(startup_error(exc), file=sys.stderr)
            return startup_status(exc)
        self.flush()
        try:
            if self.first_prompt:
                await self.handle(self.first_prompt)
            while not self._done:
                text = await self._read("> ")
                if text is None:
                    break
                await self.handle(text)
        finally:
            session_id = self.conversation.session_id
            await self.close()
            print(f"Session saved. Resume it with: codeloop -r {session_id}")
        return 0

    async def _read(self, prompt: str) -> str | None:
        """One input, joining lines that end in a backslash; None at the end of input."""
        lines: list[str] = []
        while True:
            if sys.stdin.isatty():
                sys.stdout.write(prompt if not lines else "… ")
                sys.stdout.flush()
            line = await asyncio.to_thread(sys.stdin.readline)
            if not line:
                return "\n".join(lines) if lines else None
            line = line.rstrip("\n")
            if line.endswith("\\"):
                lines.append(line[:-1])
                continue
            lines.append(line)
            return "\n".join(lines)

    def flush(self) -> None:
        out = self.presenter.take_output()
        if out:
            sys.stdout.write(out)
            sys.stdout.flush()

    def suggested(self, suggestion: str) -> None:
        """No input to draw it in: a line of its own."""
        self.show(f"Suggested next: {suggestion}")

    async def choose(self, title: str, options: Sequence[str]) -> int | None:
        if not self.interactive or not options:
            return None
        lines = [title, *(f"  {i + 1}. {option}" for i, option in enumerate(options))]
        self.show("\n".join(lines))
        answer = await self._read("number (Enter: none)> ")
        if answer is None or not answer.strip().isdigit():
            return None
        index = int(answer.strip()) - 1
        return index if 0 <= index < len(options) else None

    async def ask(self, request: PermissionRequest) -> Answer:
        from codeloop.cli.tui.dialogs import preview
        from codeloop.permissions.policy import Answer

        if not self.interactive:
            return Answer("deny", "nobody is at a terminal to allow it")
        rules = request.decision.suggestions
        lines = [f"{request.tool_name}: {line}" for line in preview(request)[:8]]
        lines.append(request.decision.explain())
        always = f", a = yes, always ({', '.join(rules)})" if rules else ""
        lines.append(f"Allow? y = yes{always}, anything else = no (it is told to the model)")
        self.show("\n".join(lines))
        reply = (await self._read("allow> ") or "").strip()
        if reply.lower() in ("y", "yes"):
            return Answer("allow_once")
        if rules and reply.lower() in ("a", "always"):
            return Answer("allow_always")
        message = "" if reply.lower() in ("", "n", "no") else reply
        return Answer("deny", message)

    async def edit(self, path: Path) -> None:
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        path.parent.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(subprocess.run, [*editor.split(), str(path)])

    def exit(self) -> None:
        self._done = True
