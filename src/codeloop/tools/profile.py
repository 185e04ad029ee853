"""The compact profile: what a session offers a model whose window is small.

The full tool set with its schemas takes about 4,000 tokens and the system prompt with a long
git status hundreds more: on an 8K or 16K window that leaves the conversation little or
nothing. The compact profile offers the core tools only (Bash, Read, Edit, Write, Grep, Glob,
and TodoWrite when it fits), each described by its first line and asked for its required
fields only, and the system prompt keeps a short git status: system prompt and tools stay
within COMPACT_BUDGET. It is on by itself at COMPACT_WINDOW or less (`auto`), or chosen with
--compact-profile / the `compactProfile` setting (`on`, `off`, `auto`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from codeloop.tools.base import AnyTool
from codeloop.tools.registry import described
from codeloop.types import ToolSpec

ProfileChoice = Literal["on", "off", "auto"]
PROFILE_CHOICES: tuple[ProfileChoice, ...] = ("on", "off", "auto")
COMPACT_WINDOW = 32_768
CORE_TOOLS = ("Bash", "Read", "Edit", "Write", "Grep", "Glob")
OPTIONAL_TOOLS = ("TodoWrite",)
# System prompt and tools together, in tokens; the system prompt (with its short git status)
# is given SYSTEM_ALLOWANCE of it, the tools the rest.
COMPACT_BUDGET = 1_500
SYSTEM_ALLOWANCE = 700


def compact_wanted(choice: ProfileChoice, window: int) -> bool:
    return choice == "on" or (choice == "auto" and window <= COMPACT_WINDOW)


def compact_tools(
    tools: Mapping[str, AnyTool], count: Callable[[tuple[ToolSpec, ...]], int]
) -> dict[str, AnyTool]:
    """The core tools among `tools`, trimmed; an optional one only while the set stays within
    the tools' part of the budget, as `count` (the client's rendering) weighs it."""
    kept = {name: _trimmed(tools[name]) for name in CORE_TOOLS if name in tools}
    for name in OPTIONAL_TOOLS:
        if name in tools:
            tried = {**kept, name: _trimmed(tools[name])}
            if count(tuple(t.spec() for t in tried.values())) <= COMPACT_BUDGET - SYSTEM_ALLOWANCE:
                kept = tried
    return kept


def _trimmed(tool: AnyTool) -> AnyTool:
    spec = tool.spec()
    lines = spec.description.strip().splitlines()
    return described(tool, lines[0] if lines else "", required_only(spec.input_schema))


def required_only(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with its required properties only (their own descriptions kept): a model
    with little room, or little sense, does better without the optional ones."""
    properties = schema.get("properties", {})
    required = [key for key in schema.get("required", ()) if key in properties]
    trimmed = {
        "type": "object",
        "properties": {key: properties[key] for key in required},
        "required": required,
    }
    if "$defs" in schema:
        trimmed["$defs"] = schema["$defs"]
    return trimmed
