"""A markdown file's YAML frontmatter (between `---` lines) and its body.

Real files are written by hand, so the reader is liberal: PyYAML first (imported on first
use), and when that fails (an unquoted `description: Use when: ...`, a stray tab) a line reader
that takes `key: value` pairs, list items and indented continuations as they are written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_OPEN = re.compile(r"\A\ufeff?---[ \t]*\r?\n")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.MULTILINE)
_KEY = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+(.*)|[ \t]*)$")
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


@dataclass(frozen=True)
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
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _KEY.match(line)
        if match and not raw[:1].isspace():
            key, value = match.group(1), (match.group(2) or "").strip()
            meta[key] = _unquote(value) if value not in ("|", ">", "|-", ">-") else ""
            continue
        if key is None:
            continue
        item = line.strip()
        if item.startswith("- "):
            current = meta.get(key)
            items = current if isinstance(current, list) else ([current] if current else [])
            meta[key] = [*items, _unquote(item[2:].strip())]
        elif isinstance(meta.get(key), str):
            meta[key] = f"{meta[key]} {item}".strip()
    return meta


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
