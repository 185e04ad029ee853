"""Memory files: CLAUDE.md and AGENTS.md instructions, from the user and from the project.

Read, in order: the user's (~/.claude and ~/.codeloop: CLAUDE.md, AGENTS.md), then each
directory from the repository root down to the working directory (CLAUDE.md, .claude/CLAUDE.md,
AGENTS.md, CLAUDE.local.md), so instructions closer to the work come later and weigh more.
`@path` in a file imports another (relative to the importing file, `~` is home, at most
`MAX_IMPORT_DEPTH` levels, not inside code); each file is included once, however often it is
found or imported, which also ends import cycles.

The text goes to the model as one `<system-reminder>` user message ahead of the conversation,
not into the system prompt: the system prompt stays identical across projects and sessions and
keeps its cache, and the message is built once per session so every request repeats it
byte for byte.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from codeloop.context.environment import find_repo_root
from codeloop.settings import user_dirs
from codeloop.types import Message

MemoryKind = Literal["user", "project", "local"]
MAX_IMPORT_DEPTH = 5

USER_FILES = ("CLAUDE.md", "AGENTS.md")
PROJECT_FILES: tuple[tuple[str, MemoryKind], ...] = (
    ("CLAUDE.md", "project"),
    (".claude/CLAUDE.md", "project"),
    ("AGENTS.md", "project"),
    ("CLAUDE.local.md", "local"),
)
_DESCRIPTIONS: dict[MemoryKind, str] = {
    "user": "the user's own instructions, for every project",
    "project": "project instructions, checked into the codebase",
    "local": "the user's own instructions for this project, not checked in",
}
_INSTRUCTIONS_INTRO = (
    "Instructions from the user and from the codebase follow. Follow them: where they differ "
    "from your default behaviour, they take precedence."
)
_CONTEXT_INTRO = "Context for this conversation; use it where it helps with the user's requests:"
_CONTEXT_OUTRO = (
    "This context may not matter for every task: do not mention it unless it is relevant."
)

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")
_IMPORT = re.compile(r"(?:^|(?<=\s))@((?:[^\s\\]|\\ )+)")
_TRAILING_PUNCTUATION = ".,;:!?)]}'\""


@dataclass(frozen=True)
class MemoryFile:
    path: Path
    kind: MemoryKind
    content: str
    imported_from: Path | None = None


@dataclass(frozen=True)
class Memory:
    files: tuple[MemoryFile, ...] = ()
    warnings: tuple[str, ...] = ()

    def text(self) -> str:
        """Every file, each under a header naming it; empty when there are none."""
        if not self.files:
            return ""
        sections = [
            f"Contents of {f.path} ({_DESCRIPTIONS[f.kind]}):\n\n{f.content.strip()}"
            for f in self.files
        ]
        return "\n\n".join([_INSTRUCTIONS_INTRO, *sections])


def system_reminder(text: str) -> str:
    return f"<system-reminder>\n{text.strip()}\n</system-reminder>"


def user_context_message(memory: Memory) -> Message | None:
    """The one meta user message that carries the memory, or None when there is none."""
    text = memory.text()
    if not text:
        return None
    body = f"{_CONTEXT_INTRO}\n# claudeMd\n{text}\n\n{_CONTEXT_OUTRO}"
    return Message.user(system_reminder(body), is_meta=True)


def memory_candidates(
    cwd: Path, env: Mapping[str, str] | None = None
) -> list[tuple[Path, MemoryKind]]:
    """Where memory files may be, in reading order (existing or not)."""
    dirs = user_dirs(env)
    found: list[tuple[Path, MemoryKind]] = [
        (d / name, "user") for d in (dirs.claude, dirs.codeloop) for name in USER_FILES
    ]
    for directory in _project_dirs(cwd):
        found += [(directory / name, kind) for name, kind in PROJECT_FILES]
    return found


def _project_dirs(cwd: Path) -> list[Path]:
    """The repository root, each directory below it, down to `cwd` (just `cwd` outside a repo)."""
    root = find_repo_root(cwd)
    if root is None:
        return [cwd]
    dirs = [root]
    for part in cwd.relative_to(root).parts:
        dirs.append(dirs[-1] / part)
    return dirs


def load_memory(cwd: Path, *, env: Mapping[str, str] | None = None) -> Memory:
    home = user_dirs(env).home
    loader = _Loader(home)
    for path, kind in memory_candidates(cwd, env):
        loader.load(path, kind, depth=0, chain=frozenset(), imported_from=None)
    return Memory(tuple(loader.files), tuple(loader.warnings))


@dataclass
class _Loader:
    home: Path
    files: list[MemoryFile] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seen: set[Path] = field(default_factory=set)

    def load(
        self,
        path: Path,
        kind: MemoryKind,
        *,
        depth: int,
        chain: frozenset[Path],
        imported_from: Path | None,
    ) -> None:
        if not path.is_file():
            return
        real = path.resolve()
        if real in chain:
            self.warnings.append(f"{imported_from}: @{path} imports a file that imports it back")
            return
        if real in self.seen:
            return  # found twice (a symlink, CLAUDE.md importing AGENTS.md): included once
        content = self._read(path)
        if content is None:
            return
        self.seen.add(real)
        self.files.append(MemoryFile(path, kind, content, imported_from))
        targets = [t for raw in find_imports(content) if (t := self._target(path, raw))]
        if targets and depth >= MAX_IMPORT_DEPTH:
            self.warnings.append(
                f"{path}: imports nested deeper than {MAX_IMPORT_DEPTH} levels are not followed"
            )
            return
        for target in targets:
            self.load(target, kind, depth=depth + 1, chain=chain | {real}, imported_from=path)

    def _read(self, path: Path) -> str | None:
        try:
            content = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            self.warnings.append(f"{path}: cannot read: {exc}")
            return None
        if "\x00" in content:
            self.warnings.append(f"{path}: not a text file; skipped")
            return None
        return content if content.strip() else None

    def _target(self, importer: Path, raw: str) -> Path | None:
        """The existing file `@raw` names, or None (a mention such as @someone is not an
        import)."""
        for candidate in (raw, raw.rstrip(_TRAILING_PUNCTUATION)):
            if not candidate:
                continue
            if candidate.startswith("~/"):
                path = self.home / candidate[2:]
            elif candidate.startswith("/"):
                path = Path(candidate)
            else:
                path = importer.parent / candidate
            if path.is_file():
                return Path(os.path.normpath(path))
        return None


def find_imports(text: str) -> list[str]:
    """The `@path` references in markdown text, outside fenced code and code spans."""
    found: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        marker = _FENCE.match(line)
        if fence is not None:
            if marker and _closes(marker, fence):
                fence = None
            continue
        if marker:
            fence = marker.group(1)
            continue
        prose = _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)
        for match in _IMPORT.finditer(prose):
            if (path := _clean(match.group(1))) is not None:
                found.append(path)
    return found


def _closes(marker: re.Match[str], fence: str) -> bool:
    """A closing fence: the same character, at least as long, nothing after it."""
    run = marker.group(1)
    rest = marker.string[marker.end() :]
    return run[0] == fence[0] and len(run) >= len(fence) and not rest.strip()


def _clean(raw: str) -> str | None:
    path = raw.replace("\\ ", " ").split("#", 1)[0]
    if path.startswith(("./", "../", "~/")) or (path.startswith("/") and path != "/"):
        return path
    if path and (path[0].isalnum() or path[0] in "._-"):
        return path
    return None
