"""Running one Task call: the general-purpose sub-agent or a custom agent, as a fresh loop.

A custom agent runs with its own system prompt (the agent file's body, plus the environment),
only the tools its definition allows, its own model and permission mode where it sets them,
its preloaded skills, and its hooks for as long as it runs. Like the general-purpose agent it
sees the memory but none of the conversation; only its final answer comes back, and its cost
spends from the session's budget as it goes (the session's ledger), so the budget holds at
every turn of every agent; a runaway one stops at its turn limit (maxTurns, else the session's
200). SubagentStart and SubagentStop hooks fire around it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from codeloop.context.memory import system_reminder
from codeloop.context.system_prompt import build_system_prompt
from codeloop.deps import TrimOnly
from codeloop.events import LoopEnd, SubAgent
from codeloop.extensions.agents import GENERAL, AgentDefinition, Agents, choose_tools
from codeloop.loop import query_loop
from codeloop.models.aliases import resolve_alias
from codeloop.permissions.policy import Policy
from codeloop.tools.base import AnyTool, ToolResult
from codeloop.types import Message, new_uuid

if TYPE_CHECKING:
    from codeloop.mcp.agent_servers import AgentMcp
    from codeloop.session import Session

# Skill name -> its rendered body, for an agent's `skills:` (None: no such skill).
SkillBodies = Callable[[str], str | None]

SUBAGENT_NOTE = (
    "You are a sub-agent: another agent gave you the task in the user's message. Carry it out "
    "on your own, then answer with a concise report of what you found or did; that report is "
    "all the other agent will see."
)
# Runs an agent hook: a read-only investigator that answers with a verdict.
VERIFIER = AgentDefinition(
    "hook-verifier",
    "Verifies a hook's condition by reading the codebase",
    "You verify a condition for a hook of a coding agent. Investigate with the tools you have "
    '(they only read), then answer with one JSON object and nothing else: {"ok": true} '
    'when the condition holds, or {"ok": false, "reason": "what is missing"}.',
    tools=("Read", "Grep", "Glob"),
    max_turns=50,
    source="codeloop",
)
# Parent modes a sub-agent's own permissionMode cannot loosen or change.
_PARENT_WINS = ("bypassPermissions", "acceptEdits")


class AgentRunner:
    """The session's Task spawner: knows the agents, runs the one a call names."""

    def __init__(
        self,
        agents: Agents,
        *,
        skills: SkillBodies | None = None,
        bypass_disabled: bool = False,
        mcp: AgentMcp | None = None,
    ) -> None:
        self.agents = agents
        self.skills = skills
        self.bypass_disabled = bypass_disabled
        # Starts an agent's own `mcpServers` for the time it runs.
        self.mcp = mcp

    async def __call__(self, session: Session, call: SubAgent, prompt: str) -> ToolResult:
        agent = self.agents.get(call.agent_type or GENERAL.name)
        if agent is None:
            known = ", ".join(self.agents.by_name)
            return ToolResult.error(
                f"Agent type {call.agent_type!r} not found. Available agents: {known}"
            )
        servers: contextlib.AbstractAsyncContextManager[Mapping[str, AnyTool]] = (
            self.mcp.servers(agent, session.tools, session.notify)
            if self.mcp is not None and agent.mcp_servers
            else contextlib.nullcontext({})
        )
        async with servers as own_tools:
            return await run_agent(
                session,
                agent,
                replace(call, agent_type=agent.name, built_in=agent.built_in),
                prompt,
                skills=self.skills,
                bypass_disabled=self.bypass_disabled,
                own_tools=own_tools,
            )


async def run_agent(
    session: Session,
    agent: AgentDefinition,
    call: SubAgent,
    prompt: str,
    *,
    skills: SkillBodies | None = None,
    bypass_disabled: bool = False,
    with_hooks: bool = True,
    own_tools: Mapping[str, AnyTool] | None = None,
) -> ToolResult:
    """`with_hooks=False`: no hooks at all (an agent hook's verifier, which must not set off
    the hook that started it). `own_tools`: its own MCP servers' tools, which it gets whatever
    its `tools:` list says (less its `disallowedTools`)."""
    limit, spent = session.config.max_budget_usd, session.ledger.cost_usd()
    if limit is not None and spent >= limit:
        return ToolResult.error(
            f"The sub-agent was not started: the cost budget is spent (${spent:.4f} of "
            f"${limit:.4f})."
        )
    choice = choose_tools(agent, list(session.tools))
    if agent.tools is not None and not choice.names and not own_tools:
        listed = ", ".join(agent.tools)
        return ToolResult.error(
            f"Agent {agent.name} would run with no tools: none of {listed} is a tool of this "
            "session. Fix its tools list, or use another agent."
        )
    agent_id = f"a{new_uuid().replace('-', '')[:16]}"
    config = session.config
    hooks = None
    if session.hooks is not None and with_hooks:
        hooks = session.hooks.for_agent(agent_id, agent.name, agent.hooks)
    context = list(session.user_context)
    if hooks is not None:
        started = await hooks.run("SubagentStart", {"agent_id": agent_id, "agent_type": agent.name})
        if text := started.for_model():
            context.append(Message.user(system_reminder(text), is_meta=True))
    for name in agent.skills:
        body = skills(name) if skills is not None else None
        if body:
            context.append(Message.user(system_reminder(body), is_meta=True))
    # A frontmatter model may be an alias (sonnet, opus, haiku): the one resolver names it.
    model = resolve_alias(agent.model) if agent.model else config.model
    params = session.run_params(
        (Message.user(prompt),),
        model=model,
        tools={name: session.tools[name] for name in choice.names} | _own(agent, own_tools),
        # Its own working directory and read state: its `cd` does not move the caller.
        workspace=session.workspace.fork(),
        system=_system(session, agent, model),
        # A runaway agent stops at its own limit, else the session's (200 by default).
        max_turns=agent.max_turns or config.subagent_max_turns,
        fallback_model=config.fallback_model if agent.model is None else None,
        user_context=tuple(context),
        stop_event="SubagentStop",
    )
    # The session's context manager belongs to the main history; a sub-agent trims its own.
    deps = replace(
        session.run_deps(),
        can_use_tool=_policy(session, agent, bypass_disabled).can_use_tool,
        context=TrimOnly(),
        hooks=hooks,
        spawn_agent=None,
        before_write=None,
    )
    end: LoopEnd | None = None
    async for event in query_loop(params, deps):
        session.observe_subagent(event, call)  # its requests recorded, observers told
        if isinstance(event, LoopEnd):
            end = event
    assert end is not None
    answer, description = end.final_text, call.description
    if end.reason != "completed":
        why = end.error or end.reason.replace("_", " ")
        return ToolResult.error(f"The sub-agent ({description}) stopped: {why}\n{answer}")
    return ToolResult(answer or f"The sub-agent ({description}) gave no answer.")


def _own(agent: AgentDefinition, tools: Mapping[str, AnyTool] | None) -> dict[str, AnyTool]:
    if not tools:
        return {}
    allowed = choose_tools(replace(agent, tools=None), list(tools)).names
    return {name: tools[name] for name in allowed}


def _system(session: Session, agent: AgentDefinition, model: str) -> str:
    """General-purpose: the session's prompt; a custom agent: its own, with the environment."""
    if agent.built_in:
        return f"{session.config.system}\n\n{SUBAGENT_NOTE}"
    workspace = session.workspace
    own = f"{agent.prompt.strip()}\n\n{SUBAGENT_NOTE}" if agent.prompt.strip() else SUBAGENT_NOTE
    return build_system_prompt(workspace.cwd, model, extra_dirs=workspace.extra_dirs, override=own)


def _policy(session: Session, agent: AgentDefinition, bypass_disabled: bool) -> Policy:
    """The agent's permissionMode, unless the parent's bypass or acceptEdits wins, or bypass
    is disabled by the settings (then the parent's mode applies)."""
    policy = session.config.policy
    mode = agent.permission_mode
    if mode is None or policy.mode in _PARENT_WINS or mode == "auto":
        return policy
    if mode == "bypassPermissions" and bypass_disabled:
        return policy
    return policy.with_mode(mode)  # type: ignore[arg-type]  # MODES, less auto and manual
