"""How a tool call reads on one line, and its result in a few: the key argument of each tool,
and a short summary of what came back (the whole output stays a key press away)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from codeloop.system.valueclass import valueclass
from codeloop.types import ToolResultBlock, ToolUseBlock

MAX_ARGUMENT = 120
SHOWN_LINES = 3

# The input that says what a call does, per tool.
_KEY_ARGUMENT = {
    "Bash": "command",
    "Read": "file_path",
    "Write": "file_path",
    "Edit": "file_path",
    "NotebookEdit": "notebook_path",
    "Grep": "pattern",
    "Glob": "pattern",
    "Task": "description",
    "Skill": "skill",
    "WebFetch": "url",
    "WebSearch": "query",
}


def argument(tool_use: ToolUseBlock, cwd: Path) -> str:
    """The call's key argument, shortened: a command's first line, a path relative to cwd."""
    data = tool_use.input
    key = _KEY_ARGUMENT.get(tool_use.name)
    value = data.get(key) if key else next((v for v in data.values() if isinstance(v, str)), None)
    if value is None:
        text = json.dumps(data, ensure_ascii=False) if data else ""
    else:
        text = str(value)
    if key in ("file_path", "notebook_path"):
        text = _relative(text, cwd)
    if tool_use.name == "Grep" and isinstance(data.get("path"), str):
        text = f'"{text}" in {_relative(data["path"], cwd)}'
    first, *rest = text.splitlines() or [""]
    if rest:
        first += " …"
    return first if len(first) <= MAX_ARGUMENT else first[: MAX_ARGUMENT - 1] + "…"


@valueclass
class Summary:
    lines: tuple[str, ...]  # shown under the call
    more: int = 0  # lines folded away
    full: str = ""  # the whole output, for ctrl+o (empty: nothing folded)
    error: bool = False


def summarize(
    tool_use: ToolUseBlock, result: ToolResultBlock, data: Mapping[str, Any] | None
) -> Summary:
    text = result.text
    lines = text.splitlines()
    if result.is_error:
        return _folded(lines, text, error=True)
    name = tool_use.name
    if name in ("Edit", "Write") and data is not None:
        return Summary((_change_line(name, data),))
    if name == "Read":
        return Summary((f"Read {len(lines)} lines",), full=text)
    if name in ("Grep", "Glob"):
        found = [line for line in lines if line.strip()]
        what = "lines" if tool_use.input.get("output_mode") == "content" else "files"
        if not found or text.startswith("No "):
            return Summary((lines[0] if lines else "No matches",))
        return Summary((f"Found {len(found)} {what}",), full=text)
    if not text.strip():
        return Summary(("(no output)",))
    return _folded(lines, text)


def _folded(lines: list[str], text: str, *, error: bool = False) -> Summary:
    shown = tuple(lines[:SHOWN_LINES])
    more = max(0, len(lines) - SHOWN_LINES)
    return Summary(shown, more, text if more else "", error)


def _change_line(name: str, data: Mapping[str, Any]) -> str:
    hunks = data.get("structuredPatch") or []
    added = sum(1 for h in hunks for line in h["lines"] if line.startswith("+"))
    removed = sum(1 for h in hunks for line in h["lines"] if line.startswith("-"))
    path = Path(str(data.get("filePath", ""))).name
    if data.get("type") == "create":
        return f"Wrote {added} lines to {path}"
    parts = [f"{added} addition{'s' * (added != 1)}", f"{removed} removal{'s' * (removed != 1)}"]
    return f"Updated {path} with " + " and ".join(parts)


def _relative(path: str, cwd: Path) -> str:
    try:
        return str(Path(path).relative_to(cwd))
    except ValueError:
        return path
