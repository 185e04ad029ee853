"""What a tool call did, in the terms Claude Code's telemetry counts: lines of code added and
removed, commits and pull requests made, the language of an edited file, and the call's
parameters (only exported with OTEL_LOG_TOOL_DETAILS=1)."""

from __future__ import annotations

import difflib
import json
from pathlib import PurePath
from typing import Any

from codeloop.types import ToolUseBlock

# git's global options that take a value as the next word.
_GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
_PULL_REQUESTS = (("gh", "pr", "create"), ("glab", "mr", "create"))
_LANGUAGES = {
    ".py": "Python",
    ".pyi": "Python",
    ".js": "JavaScript",
    ".jsx": "JavaScript",
    ".mjs": "JavaScript",
    ".ts": "TypeScript",
    ".tsx": "TypeScript",
    ".md": "Markdown",
    ".json": "JSON",
    ".go": "Go",
    ".rs": "Rust",
    ".java": "Java",
    ".kt": "Kotlin",
    ".c": "C",
    ".h": "C",
    ".cc": "C++",
    ".cpp": "C++",
    ".hpp": "C++",
    ".cs": "C#",
    ".rb": "Ruby",
    ".php": "PHP",
    ".swift": "Swift",
    ".sh": "Shell",
    ".bash": "Shell",
    ".yml": "YAML",
    ".yaml": "YAML",
    ".toml": "TOML",
    ".html": "HTML",
    ".css": "CSS",
    ".sql": "SQL",
}
EDIT_TOOLS = frozenset({"Edit", "Write", "NotebookEdit", "MultiEdit"})


def lines_changed(use: ToolUseBlock) -> tuple[int, int]:
    """(added, removed) by a successful Edit or Write. A Write counts its whole content as
    added: what it replaced is not known once it ran."""
    if use.name == "Write":
        return _line_count(str(use.input.get("content") or "")), 0
    if use.name == "Edit":
        return _diff(str(use.input.get("old_string") or ""), str(use.input.get("new_string") or ""))
    if use.name == "MultiEdit":
        added = removed = 0
        for edit in use.input.get("edits") or ():
            if isinstance(edit, dict):
                a, r = _diff(str(edit.get("old_string") or ""), str(edit.get("new_string") or ""))
                added, removed = added + a, removed + r
        return added, removed
    return 0, 0


def _diff(old: str, new: str) -> tuple[int, int]:
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed


def _line_count(text: str) -> int:
    return text.count("\n") + (not text.endswith("\n") and text != "")


def is_commit(command: str) -> bool:
    """Whether the command line runs `git commit` (behind `cd x &&`, `git -C dir`, ...)."""
    for argv in _commands(command):
        if PurePath(argv[0]).name != "git":
            continue
        i = 1
        while i < len(argv) and argv[i].startswith("-"):
            i += 2 if argv[i] in _GIT_VALUE_OPTIONS else 1
        if i < len(argv) and argv[i] == "commit":
            return True
    return False


def is_pull_request(command: str) -> bool:
    """Whether it creates a pull request (`gh pr create`) or merge request (`glab`)."""
    return any(
        (PurePath(argv[0]).name, *argv[1:3]) in _PULL_REQUESTS for argv in _commands(command)
    )


def _commands(command: str) -> list[list[str]]:
    """The simple commands bash would run for the line, as words (a real shell parse)."""
    from codeloop.shell.bash_parse import parse_command

    return [c.argv for c in parse_command(command).commands if c.argv]


def language(path: str) -> str:
    return _LANGUAGES.get(PurePath(path).suffix.lower(), "unknown")


def tool_parameters(use: ToolUseBlock) -> str:
    """Claude Code's `tool_parameters`: the Bash command, the sub-agent type."""
    params: dict[str, Any] = {}
    if use.name == "Bash":
        command = str(use.input.get("command") or "")
        params = {
            "bash_command": command.split()[0] if command.split() else "",
            "full_command": command,
            "timeout": use.input.get("timeout"),
            "description": use.input.get("description"),
        }
    elif use.name == "Task":
        params = {"subagent_type": use.input.get("subagent_type", "general-purpose")}
    elif use.name.startswith("mcp__"):
        _, server, tool = ([*use.name.split("__", 2), "", ""])[:3]
        params = {"mcp_server_name": server, "mcp_tool_name": tool}
    return json.dumps({k: v for k, v in params.items() if v is not None}, ensure_ascii=False)


def tool_input(use: ToolUseBlock) -> str:
    """The call's arguments, each value cut at 512 characters and the whole at about 4K."""
    cut = {
        k: (v[:512] + "…" if isinstance(v, str) and len(v) > 512 else v)
        for k, v in use.input.items()
    }
    text = json.dumps(cut, ensure_ascii=False)
    return text if len(text) <= 4096 else text[:4095] + "…"
