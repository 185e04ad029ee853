"""Completion in the input: `/` completes the registry's commands (built-in, custom, any
provider's), `@` completes file paths of the project, .gitignore respected (ripgrep lists
them, once, in the background)."""

from __future__ import annotations

import os
import re
import subprocess
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from codeloop.commands import Command

MAX_FILES = 50_000
MAX_SHOWN = 30
_AT = re.compile(r'(?:^|\s)@("?[^\s"]*)$')


class InputCompleter(Completer):
    def __init__(self, commands: Callable[[], list[Command]], cwd: Callable[[], Path]) -> None:
        self._commands = commands
        self._cwd = cwd
        self._files: list[str] | None = None
        self._listing: threading.Thread | None = None

    def get_completions(self, document: Document, event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor
        if text.startswith("/") and " " not in text and "\n" not in text:
            yield from self._command_completions(text[1:])
            return
        match = _AT.search(text)
        if match is not None:
            yield from self._file_completions(match.group(1))

    def _command_completions(self, typed: str) -> Iterable[Completion]:
        lowered = typed.lower()
        commands = self._commands()
        starts = [c for c in commands if c.name.lower().startswith(lowered)]
        inside = [c for c in commands if lowered in c.name.lower() and c not in starts]
        for command in [*starts, *inside]:
            hint = f" {command.argument_hint}" if command.argument_hint else ""
            yield Completion(
                command.name,
                start_position=-len(typed),
                display=f"/{command.name}{hint}",
                display_meta=command.description,
            )

    def _file_completions(self, raw: str) -> Iterable[Completion]:
        typed, start = raw.lstrip('"'), -len(raw)
        files = self.files()
        lowered = typed.lower()
        shown = 0
        folders: set[str] = set()
        for path in files:
            if shown >= MAX_SHOWN:
                break
            low = path.lower()
            if not (low.startswith(lowered) or (lowered and lowered in low)):
                continue
            # A folder on the way to the match completes first, then the file.
            rest = path[len(typed) :] if low.startswith(lowered) else ""
            if "/" in rest:
                folder = path[: len(typed) + rest.index("/") + 1]
                if folder not in folders:
                    folders.add(folder)
                    shown += 1
                    yield Completion(_quoted(folder), start_position=start, display=folder)
                continue
            shown += 1
            yield Completion(_quoted(path), start_position=start, display=path)

    def files(self) -> list[str]:
        """The project's files (cached; listed in the background on first use)."""
        if self._files is not None:
            return self._files
        if self._listing is None:
            self._listing = threading.Thread(target=self._list, daemon=True)
            self._listing.start()
        self._listing.join(timeout=0.5)
        return self._files or []

    def _list(self) -> None:
        from codeloop.tools.search import rg_binary

        cwd = self._cwd()
        rg = rg_binary()
        found: list[str] = []
        if rg is not None:
            try:
                run = subprocess.run(
                    [rg, "--files", "--no-require-git", "--hidden", "--glob", "!.git"],
                    cwd=cwd,
                    capture_output=True,
                    text=True,
                    timeout=10,
                )
                found = run.stdout.splitlines()[:MAX_FILES]
            except (OSError, subprocess.TimeoutExpired):
                found = []
        if not found:
            for root, dirs, names in os.walk(cwd):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                found += [os.path.relpath(os.path.join(root, n), cwd) for n in names]
                if len(found) >= MAX_FILES:
                    break
        self._files = sorted(found, key=lambda p: (p.count("/"), p))


def _quoted(path: str) -> str:
    return f'"{path}"' if " " in path else path
