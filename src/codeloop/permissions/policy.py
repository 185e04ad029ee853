"""Who may run which tool, before the full rule engine exists.

Modes follow Claude Code: `default` (read-only tools run; anything else would be asked, and a
headless run cannot ask, so it is denied with a reason the model can read), `acceptEdits` (file
edits too), `plan` (read-only only), `bypassPermissions` (everything). `allowed` / `disallowed`
hold tool names from --allowedTools / --disallowedTools; a rule with a specifier such as
`Bash(git diff:*)` is matched on its tool name only until the rule engine lands.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from codeloop.tools.base import AnyTool, ToolContext
from codeloop.tools.executor import PermissionDecision

PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions"]
PERMISSION_MODES: tuple[PermissionMode, ...] = (
    "default",
    "acceptEdits",
    "plan",
    "bypassPermissions",
)

EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})


def rule_tool_name(rule: str) -> str:
    """`Bash(npm test:*)` → `Bash`."""
    return rule.split("(", 1)[0].strip()


def parse_tool_list(values: Iterable[str]) -> frozenset[str]:
    """Flags may repeat and hold comma- or space-separated names; parentheses group."""
    names: set[str] = set()
    for value in values:
        depth, current = 0, ""
        for char in value:
            if char == "(":
                depth += 1
            elif char == ")":
                depth = max(0, depth - 1)
            if depth == 0 and char in ", ":
                if current.strip():
                    names.add(rule_tool_name(current))
                current = ""
            else:
                current += char
        if current.strip():
            names.add(rule_tool_name(current))
    return frozenset(names)


@dataclass(frozen=True)
class Policy:
    mode: PermissionMode = "default"
    allowed: frozenset[str] = frozenset()
    disallowed: frozenset[str] = frozenset()

    def decide(self, tool: AnyTool, args: Any) -> PermissionDecision:
        name = tool.name
        if name in self.disallowed:
            return PermissionDecision(False, f"Permission denied: {name} is disallowed.")
        if self.mode == "bypassPermissions" or name in self.allowed:
            return PermissionDecision(True)
        if tool.is_read_only(args):
            return PermissionDecision(True)
        if self.mode == "acceptEdits" and name in EDIT_TOOLS:
            return PermissionDecision(True)
        if self.mode == "plan":
            return PermissionDecision(
                False, f"Permission denied: {name} is not allowed in plan mode (read-only)."
            )
        return PermissionDecision(
            False,
            f"Permission to use {name} was denied: this run cannot ask the user. "
            f"The user can allow it with --allowedTools {name} or a --permission-mode.",
        )

    async def can_use_tool(self, tool: AnyTool, args: Any, ctx: ToolContext) -> PermissionDecision:
        return self.decide(tool, args)
