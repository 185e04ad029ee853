"""The problems an edit brought, told to the model next to the edit.

A Workspace attach seam (`FileInstructions`): after an Edit, Write, MultiEdit or NotebookEdit
of a file a configured server handles, the server gets the file (`didChange` and `didSave`, or
`didOpen`), and the diagnostics it then publishes for it are compared with those it had before
the edit: only the new ones are told, in a reminder naming the file, with the server's own
message, severity, position and rule. The edit's result waits for them a bounded time
(`wait`); what comes later is told with the next tool result. A Read of such a file opens it
in the background, so that the problems already there are known before an edit and not told
as new. Bounded: a file with 500 errors does not flood the window.
"""

from __future__ import annotations

import asyncio
import collections
import functools
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codeloop.context.lazy_memory import touched_file
from codeloop.context.memory import system_reminder
from codeloop.lsp.errors import LspError
from codeloop.lsp.places import characters, read_text, relative
from codeloop.lsp.servers import LanguageServers
from codeloop.system.valueclass import valueclass

if TYPE_CHECKING:
    from lsprotocol import types as lsp

    from codeloop.lsp.server import LanguageServer

EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
# How long an edit's result waits for the server's diagnostics (CODELOOP_LSP_DIAGNOSTICS_MS).
DEFAULT_WAIT_SECONDS = 10.0
MAX_PER_FILE = 10
MAX_TOTAL = 30
MAX_MESSAGE_CHARS = 300
SYMBOLS = {1: "✘", 2: "⚠", 3: "ℹ", 4: "★"}  # Error, Warning, Information, Hint

Key = tuple[Any, ...]


@valueclass(frozen=False)
class _Pending:
    """An edited file whose diagnostics are awaited: what was there before the edit."""

    server: LanguageServer
    path: Path
    count: int
    version: int
    before: collections.Counter[Key] = field(default_factory=collections.Counter)


class EditDiagnostics:
    """One per session, shared by its agents (`fork` is itself): the servers are. `wait`:
    CODELOOP_LSP_DIAGNOSTICS_MS, else DEFAULT_WAIT_SECONDS."""

    def __init__(self, servers: LanguageServers, *, wait: float = DEFAULT_WAIT_SECONDS) -> None:
        self.servers = servers
        self.wait = wait
        self._pending: dict[Path, _Pending] = {}
        # Files being opened in the background as they were read, by path.
        self._opening: dict[Path, asyncio.Task[None]] = {}
        # Why a server could not check an edit, each told once (with the next result).
        self._failures: list[str] = []
        self._told: set[str] = set()

    def fork(self) -> EditDiagnostics:
        return self

    async def attach(self, tool_name: str, tool_input: dict[str, Any]) -> str:
        """After a call: an edited file goes to its server (whose problems the result waits
        for); whatever new problems have arrived are returned as a reminder."""
        path = touched_file(tool_name, tool_input, self.servers.root)
        if path is not None and self.servers.handles(path):
            if tool_name in EDIT_TOOLS:
                await self._edited(path)
            elif path not in self._pending:
                # What the model read: the server is to judge the file before any edit, even
                # one made while it starts.
                text = read_text(path)
                task = asyncio.ensure_future(self._open(path, text))
                self._opening[path] = task
                task.add_done_callback(functools.partial(self._opened, path))
        return self.take()

    def _opened(self, path: Path, task: asyncio.Task[None]) -> None:
        if self._opening.get(path) is task:
            del self._opening[path]

    async def _open(self, path: Path, text: str | None) -> None:
        """A file read: the server holds it, and says what is wrong with it already."""
        try:
            server = await self.servers.server_for(path)
            if text is not None and not server.is_open(path):
                server.open(path, self.servers.language(path), text)
        except LspError as exc:
            self._failed(str(exc))

    async def _edited(self, path: Path) -> None:
        if (opening := self._opening.get(path)) is not None:
            await asyncio.shield(opening)  # the text that was read goes first
        try:
            server = await self.servers.server_for(path)
        except LspError as exc:
            self._failed(str(exc))
            return
        uri = path.as_uri()
        if server.is_open(path) and uri not in server.published and not server.silent:
            # Opened when it was read, not judged yet: what was wrong before comes first.
            await server.published_after(uri, 0, 1, self.wait)
        entry = server.published.get(uri)
        earlier = self._pending.get(path)
        before = (
            earlier.before
            if earlier is not None  # an edit before the last one's problems came: the same base
            else collections.Counter(_key(d) for d in entry.diagnostics)
            if entry is not None and server.is_open(path)
            else collections.Counter()
        )
        count = entry.count if entry is not None else 0
        try:
            server.open(path, self.servers.language(path))
        except LspError as exc:
            self._failed(str(exc))
            return
        pending = _Pending(server, path, count, server.version(path), before)
        self._pending[path] = pending
        if server.published or not server.silent:
            fresh = await server.published_after(uri, count, pending.version, self.wait)
            # A server that has never published a diagnostic does not hold up every edit.
            server.silent = not fresh and not server.published

    def _failed(self, why: str) -> None:
        if why not in self._told:
            self._told.add(why)
            self._failures.append(why)

    def take(self) -> str:
        """The new problems of the edited files whose diagnostics have come (a reminder), or
        ""; those files are no longer awaited."""
        reports: list[tuple[Path, list[lsp.Diagnostic]]] = []
        for path, pending in list(self._pending.items()):
            uri = path.as_uri()
            server = pending.server
            if not server.running:
                del self._pending[path]
                continue
            if not server.fresh(uri, pending.count, pending.version):
                continue
            del self._pending[path]
            left = collections.Counter(pending.before)
            new = []
            for diagnostic in server.published[uri].diagnostics:
                key = _key(diagnostic)
                if left[key] > 0:
                    left[key] -= 1
                else:
                    new.append(diagnostic)
            if new:
                reports.append((path, new))
        parts = [self._written(reports)] if reports else []
        if self._failures:
            parts.append(
                "Edits are not checked by the language server: " + "\n".join(self._failures)
            )
            self._failures.clear()
        return system_reminder("\n\n".join(parts)) if parts else ""

    def _written(self, reports: list[tuple[Path, list[lsp.Diagnostic]]]) -> str:
        lines = ["<new-diagnostics>The language server reports new problems after your edit:"]
        total = 0
        for path, found in reports:
            lines.append(f"{relative(path, self.servers.root)}:")
            texts = _lines_of(path)
            ordered = sorted(found, key=lambda d: (d.severity or 1, d.range.start.line))
            for diagnostic in ordered[:MAX_PER_FILE]:
                if total == MAX_TOTAL:
                    break
                total += 1
                lines.append(f"  {_line(diagnostic, texts)}")
            hidden = len(found) - min(len(found), MAX_PER_FILE)
            if hidden:
                lines.append(f"  ... and {hidden} more")
        lines.append("</new-diagnostics>")
        return "\n".join(lines)


def _key(diagnostic: lsp.Diagnostic) -> Key:
    """A problem as compared across an edit: without its position, which edits move."""
    return (diagnostic.severity, diagnostic.message, diagnostic.code, diagnostic.source)


def _line(diagnostic: lsp.Diagnostic, texts: list[str]) -> str:
    start = diagnostic.range.start
    text = texts[start.line] if 0 <= start.line < len(texts) else ""
    column = characters(text, start.character)
    message = "; ".join(part.strip() for part in diagnostic.message.splitlines() if part.strip())
    if len(message) > MAX_MESSAGE_CHARS:
        message = message[: MAX_MESSAGE_CHARS - 1] + "…"
    symbol = SYMBOLS.get(int(diagnostic.severity or 1), "✘")
    rule = f" [{diagnostic.code}]" if diagnostic.code is not None else ""
    source = f" ({diagnostic.source})" if diagnostic.source else ""
    return f"{symbol} [Line {start.line + 1}:{column + 1}] {message}{rule}{source}"


def _lines_of(path: Path) -> list[str]:
    return (read_text(path) or "").splitlines()
