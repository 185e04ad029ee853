"""How MCP things are named for the model: `mcp__<server>__<tool>`, as Claude Code names them.

Characters a model API refuses in a tool name become `_`; slash commands use the same names.
"""

from __future__ import annotations

from codeloop.system.lazy_pattern import LazyPattern

_UNSAFE = LazyPattern(r"[^A-Za-z0-9_-]")

SEARCH_TOOL = "ToolSearch"
# Tools the manager offers besides the servers' own; --allowedTools accepts their names.
MANAGER_TOOLS = ("ListMcpResourcesTool", "ReadMcpResourceTool", SEARCH_TOOL)


def safe(name: str) -> str:
    return _UNSAFE.sub("_", name)


def prefix(server: str) -> str:
    """What every tool (and prompt command) of `server` starts with."""
    return f"mcp__{safe(server)}__"


def tool_name(server: str, tool: str) -> str:
    return f"{prefix(server)}{safe(tool)}"
