"""Memory files: CLAUDE.md and AGENTS.md instructions and rules, from the organization, the
user and the project.

Read, in order: the managed CLAUDE.md (and managed settings' `claudeMd`), the user's
(~/.claude and ~/.codeloop: CLAUDE.md, AGENTS.md, then rules/**/*.md), then each directory from
the repository root down to the working directory (CLAUDE.md, .claude/CLAUDE.md, AGENTS.md,
.claude/rules/**/*.md and .codeloop/rules/**/*.md, CLAUDE.local.md), so instructions closer to
the work come later and weigh more. A rule with `paths:` globs is not read now but kept in
`Memory.scoped`: it loads when the model reads or edits a matching file (lazy_memory.py), as
do the CLAUDE.md files of folders below the working directory. `claudeMdExcludes` globs skip
files (never the managed one); HTML comments outside code are left out of what the model reads.
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
from collections.abc import Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Literal

from codeloop.context.auto_memory import INDEX, read_index
from codeloop.settings.settings_files import managed_dir, user_dirs
from codeloop.store.data_paths import find_repo_root
from codeloop.system.valueclass import valueclass
from codeloop.types import Message

MemoryKind = Literal["managed", "user", "project", "local", "auto"]
MAX_IMPORT_DEPTH = 5

USER_FILES = ("CLAUDE.md", "AGENTS.md")
PROJECT_FILES: tuple[tuple[str, MemoryKind], ...] = (
    ("CLAUDE.md", "project"),
    (".claude/CLAUDE.md", "project"),
    ("AGENTS.md", "project"),
    ("CLAUDE.local.md", "local"),
)
RULE_DIRS = (".claude/rules", ".codeloop/rules")
_DESCRIPTIONS: dict[MemoryKind, str] = {
    "managed": "the organization's instructions, for every project",
    "user": "the user's own instructions, for every project",
    "project": "project instructions, checked into the codebase",
    "local": "the user's own instructions for this project, not checked in",
    "auto": "user's auto-memory, persists across conversations",
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
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


@valueclass
class MemoryFile:
    path: Path
    kind: MemoryKind
    content: str
    imported_from: Path | None = None
    # Why it loaded, in InstructionsLoaded's terms: session_start, include, nested_traversal,
    # path_glob_match.
    reason: str = "session_start"
    globs: tuple[str, ...] = ()
    trigger: Path | None = None  # the file whose reading loaded it (lazy loads)

    def section(self) -> str:
        return f"Contents of {self.path} ({_DESCRIPTIONS[self.kind]}):\n\n{self.content.strip()}"


@valueclass
class ScopedRule:
    """A rule with `paths:` globs, relative to `base` (the folder holding .claude/)."""

    path: Path
    kind: MemoryKind
    base: Path
    globs: tuple[str, ...]


@valueclass
class Memory:
    files: tuple[MemoryFile, ...] = ()
    warnings: tuple[str, ...] = ()
    scoped: tuple[ScopedRule, ...] = ()

    def text(self) -> str:
        """Every file, each under a header naming it; empty when there are none."""
        if not self.files:
            return ""
        return "\n\n".join([_INSTRUCTIONS_INTRO, *(f.section() for f in self.files)])


def system_reminder(text: str) -> str:
    return f"<system-reminder>\n{text.strip()}\n</system-reminder>"


def user_context_message(memory: Memory, extra: Sequence[str] = ()) -> Message | None:
    """The one meta user message that carries the memory (and `extra` sections, such as the
    skills the model may use), or None when there is nothing to carry."""
    text = memory.text()
    sections = [f"# claudeMd\n{text}"] if text else []
    sections += [part for part in extra if part]
    if not sections:
        return None
    body = f"{_CONTEXT_INTRO}\n" + "\n\n".join(sections) + f"\n\n{_CONTEXT_OUTRO}"
    return Message.user(system_reminder(body), is_meta=True)


def memory_candidates(
    cwd: Path, env: Mapping[str, str] | None = None
) -> list[tuple[Path, MemoryKind]]:
    """Where memory files may be, in reading order (existing or not); a rules folder stands
    for every .md file under it."""
    dirs = user_dirs(env)
    found: list[tuple[Path, MemoryKind]] = [(managed_dir(env) / "CLAUDE.md", "managed")]
    for directory in (dirs.claude, dirs.codeloop):
        found += [(directory / name, "user") for name in USER_FILES]
    found += [(d / "rules", "user") for d in (dirs.claude, dirs.codeloop)]
    for directory in _project_dirs(cwd):
        found += folder_candidates(directory)
    return found


def folder_candidates(directory: Path) -> list[tuple[Path, MemoryKind]]:
    """One folder's memory files in reading order: its rules beside .claude/CLAUDE.md."""
    files = [(directory / name, kind) for name, kind in PROJECT_FILES]
    rules: list[tuple[Path, MemoryKind]] = [(directory / d, "project") for d in RULE_DIRS]
    return [*files[:3], *rules, *files[3:]]


def _project_dirs(cwd: Path) -> list[Path]:
    """The repository root, each directory below it, down to `cwd` (just `cwd` outside a repo)."""
    root = find_repo_root(cwd)
    if root is None:
        return [cwd]
    dirs = [root]
    for part in cwd.relative_to(root).parts:
        dirs.append(dirs[-1] / part)
    return dirs


def load_memory(
    cwd: Path,
    *,
    env: Mapping[str, str] | None = None,
    excludes: Sequence[str] = (),
    managed_text: str | None = None,
    auto_memory: Path | None = None,
) -> Memory:
    """The memory a session starts with; `excludes` are claudeMdExcludes globs, `managed_text`
    the managed settings' claudeMd, `auto_memory` the project's auto-memory folder (its index
    comes last: auto_memory.py)."""
    home = user_dirs(env).home
    loader = Loader(home, excludes=tuple(excludes))
    for path, kind in memory_candidates(cwd, env):
        loader.load_any(path, kind)
        if kind == "managed" and managed_text:
            loader.files.append(
                MemoryFile(path.with_name("managed-settings.json"), kind, managed_text)
            )
    if auto_memory is not None and (index := read_index(auto_memory)) is not None:
        loader.files.append(MemoryFile(auto_memory / INDEX, "auto", index))
    return Memory(tuple(loader.files), tuple(loader.warnings), tuple(loader.scoped))


@valueclass(frozen=False)
class Loader:
    """Reads memory files with their imports, each once; rules folders file by file."""

    home: Path
    excludes: tuple[str, ...] = ()
    files: list[MemoryFile] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seen: set[Path] = field(default_factory=set)
    scoped: list[ScopedRule] = field(default_factory=list)

    def load_any(
        self,
        path: Path,
        kind: MemoryKind,
        reason: str = "session_start",
        trigger: Path | None = None,
    ) -> None:
        """A memory file, or a rules folder (every .md under it, path-scoped ones kept aside)."""
        if path.name == "rules" and path.is_dir():
            base = path.parent.parent  # the folder holding .claude/ (or ~ for the user's)
            for rule in sorted(path.rglob("*.md")):
                self.load_rule(rule, kind, base, reason, trigger=trigger)
        else:
            self.load(
                path,
                kind,
                depth=0,
                chain=frozenset(),
                imported_from=None,
                reason=reason,
                trigger=trigger,
            )

    def load_rule(
        self,
        path: Path,
        kind: MemoryKind,
        base: Path,
        reason: str,
        *,
        trigger: Path | None = None,
        scoped: bool = False,
    ) -> None:
        """A rule file: always-on ones load now, `paths:` ones are kept aside (or, `scoped`,
        load now because a file they match was touched)."""
        if not path.is_file() or self._excluded(path, kind):
            return
        from codeloop.extensions.frontmatter import name_list, parse

        try:
            doc = parse(path.read_text(encoding="utf-8", errors="replace"))
        except OSError as exc:
            self.warnings.append(f"{path}: cannot read: {exc}")
            return
        if doc.problem and not scoped:
            self.warnings.append(f"{path}: frontmatter {doc.problem}")
        globs = tuple(name_list(doc.meta.get("paths", doc.meta.get("globs"))) or ())
        if globs and not scoped:
            if path.resolve() not in self.seen:
                self.scoped.append(ScopedRule(path, kind, base, globs))
            return
        self.load(
            path,
            kind,
            depth=0,
            chain=frozenset(),
            imported_from=None,
            reason=reason,
            content=doc.body,
            globs=globs,
            trigger=trigger,
        )

    def _excluded(self, path: Path, kind: MemoryKind) -> bool:
        from codeloop.context.globs import matches

        return kind != "managed" and bool(self.excludes) and matches(self.excludes, str(path))

    def load(
        self,
        path: Path,
        kind: MemoryKind,
        *,
        depth: int,
        chain: frozenset[Path],
        imported_from: Path | None,
        reason: str = "session_start",
        content: str | None = None,
        globs: tuple[str, ...] = (),
        trigger: Path | None = None,
    ) -> None:
        if not path.is_file() or self._excluded(path, kind):
            return
        real = path.resolve()
        if real in chain:
            self.warnings.append(f"{imported_from}: @{path} imports a file that imports it back")
            return
        if real in self.seen:
            return  # found twice (a symlink, CLAUDE.md importing AGENTS.md): included once
        content = self._read(path) if content is None else strip_comments(content)
        if content is None or not content.strip():
            return
        self.seen.add(real)
        why = reason if imported_from is None else "include"
        self.files.append(MemoryFile(path, kind, content, imported_from, why, globs, trigger))
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
        return strip_comments(content) if content.strip() else None

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


def strip_comments(text: str) -> str:
    """HTML comments (notes for maintainers) left out, except inside code blocks."""
    if "<!--" not in text:
        return text
    out: list[str] = []
    prose: list[str] = []
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        marker = _FENCE.match(line)
        if fence is None and marker:
            out.append(_COMMENT.sub("", "".join(prose)))
            prose = []
            fence = marker.group(1)
            out.append(line)
        elif fence is not None:
            out.append(line)
            if marker and _closes(marker, fence):
                fence = None
        else:
            prose.append(line)
    out.append(_COMMENT.sub("", "".join(prose)))
    return "".join(out)


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
