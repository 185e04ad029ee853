"""Instructions that load while the model works: a folder's CLAUDE.md (and its rules) below the
working directory the first time the model reads or edits a file in it, and a rule with
`paths:` globs the first time it touches a file those globs match.

Each comes back once, as a `<system-reminder>` added to the tool result that triggered it, so
the model reads it next to the file it concerns; InstructionsLoaded hooks hear of each one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from codeloop.context.globs import matches
from codeloop.context.memory import Loader, Memory, MemoryFile, ScopedRule, folder_candidates
from codeloop.context.memory import system_reminder as reminder

# Tools whose `file_path` (or `notebook_path`) brings a file's instructions into play.
FILE_TOOLS = frozenset({"Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "NotebookRead"})
_INTRO = "Instructions that apply to files in this folder follow; follow them here:"
# Tells the hooks a file loaded: (the file) -> None.
OnLoad = Callable[[MemoryFile], Awaitable[None]]


class InstructionTracker:
    """One per conversation: remembers what is loaded, so each file comes once."""

    def __init__(
        self,
        memory: Memory,
        cwd: Path,
        home: Path,
        *,
        excludes: tuple[str, ...] = (),
        on_load: OnLoad | None = None,
    ) -> None:
        self.cwd = cwd
        self._loader = Loader(home, excludes=excludes)
        self._loader.seen = {f.path.resolve() for f in memory.files}
        self._scoped: list[ScopedRule] = list(memory.scoped)
        self._visited: set[Path] = set()
        self.on_load = on_load

    def fork(self) -> InstructionTracker:
        """A sub-agent's tracker: it starts from what the session started with."""
        other = InstructionTracker.__new__(InstructionTracker)
        other.__dict__.update(self.__dict__)
        other._loader = Loader(self._loader.home, excludes=self._loader.excludes)
        other._loader.seen = set(self._loader.seen)
        other._scoped = list(self._scoped)
        other._visited = set(self._visited)
        return other

    async def attach(self, tool_name: str, tool_input: dict[str, Any]) -> str:
        """The Workspace's attach seam: what newly applies to the file this call touched."""
        target = touched_file(tool_name, tool_input, self.cwd)
        if target is None:
            return ""
        new = self.load_for(target)
        if self.on_load is not None:
            for item in new:
                await self.on_load(item)
        if not new:
            return ""
        return reminder("\n\n".join([_INTRO, *(f.section() for f in new)]))

    def load_for(self, target: Path) -> list[MemoryFile]:
        before = len(self._loader.files)
        self._nested(target)
        self._matching(target)
        return self._loader.files[before:]

    def _nested(self, target: Path) -> None:
        """Folders between the working directory (exclusive) and the file."""
        for folder in new_folders(self.cwd, target.parent, self._visited):
            for path, kind in folder_candidates(folder):
                start = len(self._loader.scoped)
                self._loader.load_any(path, kind, reason="nested_traversal", trigger=target)
                self._scoped += self._loader.scoped[start:]

    def _matching(self, target: Path) -> None:
        for rule in list(self._scoped):
            try:
                relative = target.relative_to(rule.base).as_posix()
            except ValueError:
                continue
            if matches(rule.globs, relative):
                self._scoped.remove(rule)
                self._loader.load_rule(
                    rule.path, rule.kind, rule.base, "path_glob_match", trigger=target, scoped=True
                )


def touched_file(tool_name: str, tool_input: dict[str, Any], cwd: Path) -> Path | None:
    """The file a Read/Edit/Write-like call touched, absolute and normalised (None: none)."""
    raw = tool_input.get("file_path", tool_input.get("notebook_path"))
    if tool_name not in FILE_TOOLS or not isinstance(raw, str) or not raw:
        return None
    import os

    return Path(os.path.normpath(Path(raw) if Path(raw).is_absolute() else cwd / raw))


def new_folders(cwd: Path, folder: Path, visited: set[Path]) -> Iterator[Path]:
    """The folders from below `cwd` down to `folder` not seen yet (marked seen as they come)."""
    try:
        relative = folder.relative_to(cwd)
    except ValueError:
        return
    current = cwd
    for part in relative.parts:
        current = current / part
        if current not in visited:
            visited.add(current)
            yield current
