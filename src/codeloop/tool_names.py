"""The names a tool goes by: Claude Code renamed some of its tools, and models trained on
earlier versions (and users' rules, hook matchers and agent files) still spell them the old
way. One table, read wherever a name is looked up: the executor (a call), permission rules,
hook matchers, agents' tool lists, --allowedTools. A leaf: it imports nothing.
"""

from __future__ import annotations

# Earlier name -> the name codeloop offers (Claude Code's current one).
ALIASES: dict[str, str] = {
    "Task": "Agent",
    "BashOutput": "TaskOutput",
    "AgentOutputTool": "TaskOutput",
    "KillShell": "TaskStop",
    "KillBash": "TaskStop",
}
AGENT = "Agent"


def canonical(name: str) -> str:
    """The current name of the tool `name` spells (itself when it is not an old name)."""
    return ALIASES.get(name, name)


def spellings(name: str) -> tuple[str, ...]:
    """Every name of the tool `name` spells, the current one first."""
    current = canonical(name)
    return (current, *(old for old, new in ALIASES.items() if new == current))
