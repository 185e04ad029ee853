"""A markdown file's YAML frontmatter (between `---` lines) and its body.

Real files are written by hand, so the reader is liberal: PyYAML first (imported on first
use), and when that fails (an unquoted `description: Use when: ...`, a stray tab) a line reader
that takes `key: value` pairs, list items and indented continuations as they are written.
"""

from __future__ import annotations

import re
from dataclasses import field
from pathlib import Path
from typing import Any

from codeloop.system.valueclass import valueclass

_OPEN = re.compile(r"\A\ufeff?---[ \t]*\r?\n")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.MULTILINE)
_KEY = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+(.*)|[ \t]*)$")
# Fields of Claude Code's agents, skills, commands, rules, styles: in hand-written frontmatter
# that YAML rejects, only these start a new field; any other `Word:` line (`Context:`,
# `user:` in a description's examples) continues the text before it.
KNOWN_KEYS = frozenset(
    [
        "name",
        "description",
        "tools",
        "disallowedTools",
        "disallowed-tools",
        "model",
        "color",
        "permissionMode",
        "permission-mode",
        "skills",
        "hooks",
        "maxTurns",
        "max-turns",
        "mcpServers",
        "memory",
        "background",
        "effort",
        "isolation",
        "initialPrompt",
        "allowed-tools",
        "argument-hint",
        "arguments",
        "disable-model-invocation",
        "user-invocable",
        "when_to_use",
        "when-to-use",
        "context",
        "agent",
        "paths",
        "globs",
        "shell",
        "metadata",
        "license",
        "compatibility",
        "version",
        "keep-coding-instructions",
        "force-for-plugin",
        "type",
        "author",
        "tags",
        "category",
        "alwaysApply",
    ]
)
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


@valueclass
class Document:
    meta: dict[str, Any]
    body: str
    # Why the frontmatter was read by the fallback reader, or why it was unreadable.
    problem: str | None = None
    has_frontmatter: bool = False
    keys: tuple[str, ...] = field(default_factory=tuple)


def parse(text: str) -> Document:
    opened = _OPEN.match(text)
    if opened is None:
        return Document({}, text.lstrip("\ufeff"))
    rest = text[opened.end() :]
    closed = _CLOSE.search(rest)
    if closed is None:
        return Document({}, text, "the frontmatter has no closing ---")
    header, body = rest[: closed.start()], rest[closed.end() :].lstrip("\r\n")
    meta, problem = _yaml(header)
    if meta is None:
        meta = _lines(header)
    return Document(meta, body, problem, True, tuple(meta))


def read(path: Path) -> Document:
    return parse(path.read_text(encoding="utf-8", errors="replace"))


def _yaml(header: str) -> tuple[dict[str, Any] | None, str | None]:
    import yaml

    try:
        data = yaml.safe_load(header)
    except yaml.YAMLError as exc:
        return None, f"not valid YAML ({str(exc).splitlines()[0]}); read line by line"
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return None, "the frontmatter is not a mapping; read line by line"
    return {str(k): v for k, v in data.items()}, None


def _lines(header: str) -> dict[str, Any]:
    """`key: value` lines; `- item` lines and indented lines continue the last key."""
    meta: dict[str, Any] = {}
    key: str | None = None
    for raw in header.splitlines():
        line = raw.rstrip()
        if not line.strip():
            if key is not None and isinstance(meta.get(key), str) and meta[key]:
                meta[key] += "\n"
            continue
        if line.lstrip().startswith("#") and key is None:
            continue
        match = _KEY.match(line)
        starts = match is not None and not raw[:1].isspace()
        if match and starts and (key is None or match.group(1) in KNOWN_KEYS):
            key, value = match.group(1), (match.group(2) or "").strip()
            meta[key] = _value(value)
            continue
        if key is None:
            continue
        item = line.strip()
        current = meta.get(key)
        if item.startswith("- ") and (isinstance(current, list) or not current):
            items = current if isinstance(current, list) else []
            meta[key] = [*items, _unquote(item[2:].strip())]
        elif isinstance(current, str):
            joiner = " " if raw[:1].isspace() else "\n"
            meta[key] = f"{current}{joiner}{item}".strip()
    return {k: v.strip() if isinstance(v, str) else v for k, v in meta.items()}


def _value(value: str) -> Any:
    """One line's value: a `[a, b]` flow list, a block marker (`|`, `>`), or text."""
    if value in ("|", ">", "|-", ">-", "|+", ">+"):
        return ""
    if value.startswith("[") and value.endswith("]"):
        return [_unquote(item.strip()) for item in value[1:-1].split(",") if item.strip()]
    return _unquote(value)


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def text_field(meta: dict[str, Any], *names: str) -> str | None:
    """The first of `names` holding text (numbers and lists are turned into text)."""
    for name in names:
        value = meta.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        if isinstance(value, list) and value:
            return " ".join(str(v) for v in value)
    return None


def flag(meta: dict[str, Any], name: str, default: bool = False) -> bool:
    """Booleans as Claude Code reads them: true/false, yes/no, on/off, 1/0, any case."""
    value = meta.get(name)
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value != 0
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
    return default


def name_list(value: Any) -> list[str] | None:
    """A tool or skill list: a YAML list, or a string split on commas and spaces (parentheses
    group: `Bash(git add:*), Read`). None when the field is absent."""
    if value is None:
        return None
    if isinstance(value, list):
        items = [str(v).strip() for v in value if str(v).strip()]
        return [part for item in items for part in _split(item)]
    if isinstance(value, str):
        return _split(value)
    return [str(value)]


def _split(text: str) -> list[str]:
    parts: list[str] = []
    depth, current = 0, ""
    for char in text:
        depth = max(depth + {"(": 1, ")": -1}.get(char, 0), 0)
        if depth == 0 and (char == "," or char.isspace()):
            if current.strip():
                parts.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current.strip())
    return parts
