"""Custom agents (sub-agents) in Claude Code's format: markdown files with YAML frontmatter
(`name`, `description`, `tools`, `disallowedTools`, `model`, `permissionMode`, `skills`, `hooks`,
`maxTurns`) whose body is the agent's system prompt, and the `--agents` JSON the Agent SDK
passes.

Where they come from, highest priority first: managed (<managed dir>/.claude/agents), the
`--agents` flag, the project's .codeloop/agents and .claude/agents (every one from the working
directory up to the repository root, the closest winning), the user's ~/.codeloop/agents and
~/.claude/agents, then plugins (named `plugin:agent`). Folders are read recursively. A file
without a name is documentation kept beside the agents and is skipped quietly; anything else
that cannot be an agent is skipped with a note.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from codeloop.hooks.hook_config import HooksConfig, parse_hooks
from codeloop.system.valueclass import valueclass
from codeloop.tool_names import AGENT, canonical

GENERAL_PURPOSE = "general-purpose"
GENERAL_DESCRIPTION = (
    "General-purpose agent for researching complex questions, searching for code, and "
    "executing multi-step tasks on its own."
)
# Tools only the main conversation has: a sub-agent cannot start agents, leave the session's
# plan mode or ask the user.
MAIN_ONLY = frozenset({AGENT, "ExitPlanMode", "AskUserQuestion"})
MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto", "manual")


@valueclass
class AgentDefinition:
    name: str
    description: str
    prompt: str
    # None: every tool a sub-agent may have; else the names listed (possibly unresolvable).
    tools: tuple[str, ...] | None = None
    disallowed_tools: tuple[str, ...] = ()
    model: str | None = None  # None or "inherit": the session's model
    permission_mode: str | None = None
    skills: tuple[str, ...] = ()
    hooks: HooksConfig = field(default_factory=dict)
    max_turns: int | None = None
    # Inline MCP servers or names (for the MCP support to connect).
    mcp_servers: tuple[Any, ...] = ()
    source: str = "built-in"
    plugin: str | None = None

    @property
    def built_in(self) -> bool:
        return self.source == "built-in"


GENERAL = AgentDefinition(GENERAL_PURPOSE, GENERAL_DESCRIPTION, "")


@valueclass
class Agents:
    """Every agent the session can run, by name, and what was skipped (one line each)."""

    by_name: Mapping[str, AgentDefinition]
    notes: tuple[str, ...] = ()

    def get(self, name: str) -> AgentDefinition | None:
        found = self.by_name.get(name)
        if found is None:  # a model may drop a plugin's prefix, or change case
            matches = [a for a in self.by_name.values() if a.name.lower() == name.lower()]
            matches += [a for a in self.by_name.values() if a.name.split(":")[-1] == name]
            found = matches[0] if len(matches) >= 1 else None
        return found


def agent_dirs(
    cwd: Path, repo_root: Path | None, user_claude: Path, user_codeloop: Path, managed: Path
) -> list[tuple[Path, str]]:
    """Agent folders with their scope, lowest priority first."""
    project: list[tuple[Path, str]] = []
    top = repo_root or cwd
    current = cwd
    chain = [current]
    while current != top and top in current.parents:
        current = current.parent
        chain.append(current)
    for directory in reversed(chain):  # the root first: the closest is read last and wins
        project += [
            (directory / ".claude" / "agents", "project"),
            (directory / ".codeloop" / "agents", "project"),
        ]
    return [
        (user_claude / "agents", "user"),
        (user_codeloop / "agents", "user"),
        *project,
        (managed / ".claude" / "agents", "managed"),
    ]


def load_agents(
    dirs: Sequence[tuple[Path, str]],
    *,
    cli_json: str | None = None,
    plugins: Iterable[tuple[str, Path]] = (),
) -> Agents:
    """Every agent, lower sources overridden by higher ones: plugins, then `dirs` in order,
    with the `--agents` JSON above all but managed ones."""
    notes: list[str] = []
    found: dict[str, AgentDefinition] = {GENERAL_PURPOSE: GENERAL}
    for plugin, root in plugins:
        for agent in _from_folder(root, notes, plugin=plugin):
            found[agent.name] = agent
    managed = [d for d in dirs if d[1] == "managed"]
    for directory, _ in [d for d in dirs if d[1] != "managed"]:
        for agent in _from_folder(directory, notes):
            found[agent.name] = agent
    if cli_json:
        for agent in agents_from_json(cli_json, notes):
            found[agent.name] = agent
    for directory, _ in managed:
        for agent in _from_folder(directory, notes):
            found[agent.name] = agent
    return Agents(found, tuple(notes))


def agents_from_json(text: str | Mapping[str, Any], notes: list[str]) -> list[AgentDefinition]:
    """`{"name": {"description": ..., "prompt": ..., "tools": [...]}, ...}` (--agents, or the
    Agent SDK's initialize request)."""
    if isinstance(text, str):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            notes.append(f"--agents: not valid JSON ({exc.msg}); no agents from it")
            return []
    else:
        data = text
    if not isinstance(data, dict):
        notes.append("--agents: expected an object of agents by name")
        return []
    agents = []
    for name, spec in data.items():
        if not isinstance(spec, dict):
            notes.append(f"--agents: {name}: expected an object")
            continue
        meta = dict(spec)
        meta.setdefault("name", name)
        agent = _definition(meta, str(meta.pop("prompt", "") or ""), f"--agents {name}", notes)
        if agent is not None:
            agents.append(agent)
    return agents


def _from_folder(
    root: Path, notes: list[str], *, plugin: str | None = None
) -> list[AgentDefinition]:
    if root.is_file():  # a plugin manifest may list agent files one by one
        files, root = [root], root.parent
    elif root.is_dir():
        files = sorted(root.rglob("*.md"))
    else:
        return []
    from codeloop.extensions import frontmatter  # the parser loads where there are files to parse

    agents = []
    for path in files:
        if not path.is_file():
            continue
        try:
            doc = frontmatter.read(path)
        except OSError as exc:
            notes.append(f"{path}: cannot read: {exc}")
            continue
        meta = dict(doc.meta)
        if plugin is not None:
            # A plugin agent is named plugin:[folders:]name; some fields are not allowed there.
            base = frontmatter.text_field(meta, "name") or path.stem
            folders = path.relative_to(root).parent.parts
            meta["name"] = ":".join((plugin, *folders, base))
            dropped = [k for k in ("hooks", "mcpServers", "permissionMode") if k in meta]
            for key in dropped:
                meta.pop(key)
            if dropped:
                notes.append(f"{path}: {', '.join(dropped)} are ignored in a plugin's agent")
        elif not doc.has_frontmatter or frontmatter.text_field(meta, "name") is None:
            continue  # documentation beside the agents, as Claude Code treats it
        if doc.problem:
            notes.append(f"{path}: frontmatter {doc.problem}")
        agent = _definition(meta, doc.body.strip(), str(path), notes, plugin=plugin)
        if agent is not None:
            agents.append(agent)
    return agents


def _definition(
    meta: dict[str, Any],
    prompt: str,
    source: str,
    notes: list[str],
    *,
    plugin: str | None = None,
) -> AgentDefinition | None:
    from codeloop.extensions import frontmatter

    name = frontmatter.text_field(meta, "name")
    if name is None:
        return None
    if name.startswith("-") or (plugin is None and ":" in name):
        notes.append(f"{source}: the agent name {name!r} may not start with - or contain :")
        return None
    description = frontmatter.text_field(meta, "description")
    if description is None:
        notes.append(f"{source}: agent {name} has no description; skipped")
        return None
    tools = frontmatter.name_list(meta.get("tools"))
    if tools is not None and (tools == [] or tools == ["*"]):
        tools = None
    disallowed = frontmatter.name_list(meta.get("disallowedTools", meta.get("disallowed-tools")))
    model = frontmatter.text_field(meta, "model")
    mode = frontmatter.text_field(meta, "permissionMode", "permission-mode")
    if mode is not None and mode not in MODES:
        notes.append(f"{source}: permissionMode {mode!r} is not a mode; the session's applies")
        mode = None
    hooks: HooksConfig = {}
    if isinstance(meta.get("hooks"), dict):
        hooks = parse_hooks(meta["hooks"], lambda w, p: notes.append(f"{source}: {w}: {p}"))
    turns = meta.get("maxTurns", meta.get("max-turns"))
    servers = meta.get("mcpServers")
    return AgentDefinition(
        name=name,
        description=description,
        prompt=prompt,
        tools=None if tools is None else tuple(_named(t) for t in tools),
        disallowed_tools=tuple(_named(t) for t in disallowed or ()),
        model=None if model in (None, "inherit") else model,
        permission_mode="default" if mode == "manual" else mode,
        skills=tuple(frontmatter.name_list(meta.get("skills")) or ()),
        hooks=hooks,
        max_turns=turns if isinstance(turns, int) and turns > 0 else None,
        mcp_servers=tuple(servers) if isinstance(servers, list) else (),
        source=source,
        plugin=plugin,
    )


@valueclass
class ToolChoice:
    names: tuple[str, ...]
    # Entries that name no tool this session has.
    unresolved: tuple[str, ...] = ()


def choose_tools(
    agent: AgentDefinition, available: Sequence[str], *, keep_task: bool = False
) -> ToolChoice:
    """The agent's tools: everything available to sub-agents less `disallowedTools`, then,
    when `tools` is given, only those. An entry with a rule (`Bash(git *)`) names its tool.
    A sub-agent never gets the tools of the main conversation (Agent, ExitPlanMode,
    AskUserQuestion); the session's own agent (`keep_task`) may."""
    pool = [name for name in available if keep_task or name not in MAIN_ONLY]
    removed = {_tool_of(entry) for entry in agent.disallowed_tools}
    pool = [name for name in pool if name not in removed and not _mcp_removed(name, removed)]
    if agent.tools is None:
        return ToolChoice(tuple(pool))
    chosen: list[str] = []
    unresolved: list[str] = []
    for entry in agent.tools:
        tool = _tool_of(entry)
        hits = [n for n in pool if n == tool or (tool.startswith("mcp__") and n.startswith(tool))]
        if hits:
            chosen += [h for h in hits if h not in chosen]
        elif (keep_task or tool not in MAIN_ONLY) and tool not in removed:
            unresolved.append(entry)
    return ToolChoice(tuple(chosen), tuple(unresolved))


def _tool_of(entry: str) -> str:
    return canonical(entry.split("(", 1)[0].strip())


def _named(entry: str) -> str:
    """A tools-list entry under the tool's current name (`Task(x)` → `Agent(x)`)."""
    tool, paren, rest = entry.partition("(")
    return canonical(tool.strip()) + paren + rest


def _mcp_removed(name: str, removed: set[str]) -> bool:
    return name.startswith("mcp__") and any(
        r == "mcp__*" or (r.startswith("mcp__") and name.startswith(r.rstrip("*"))) for r in removed
    )


def task_description(base: str, agents: Agents, available: Sequence[str]) -> str:
    """The Task tool's description with the agents it can start, as Claude Code lists them."""
    lines = []
    for agent in agents.by_name.values():
        choice = choose_tools(agent, available)
        tools = (
            "All tools"
            if agent.tools is None and not agent.disallowed_tools
            else (", ".join(choice.names) or "none")
        )
        lines.append(f"- {agent.name}: {agent.description} (Tools: {tools})")
    return (
        f"{base}\n\nAvailable agent types and the tools they have access to:\n"
        + "\n".join(lines)
        + "\n\nWhen using the Agent tool, set subagent_type to one of these names."
    )
