"""Running one Agent (Task) call: the general-purpose sub-agent or a custom agent, as a fresh
loop.

A custom agent runs with its own system prompt (the agent file's body, plus the environment),
only the tools its definition allows, its own model and permission mode where it sets them,
its preloaded skills, and its hooks for as long as it runs. Like the general-purpose agent it
sees the memory but none of the conversation; only its final answer comes back, and its cost
spends from the session's budget as it goes (the session's ledger), so the budget holds at
every turn of every agent; a runaway one stops at its turn limit (maxTurns, else the session's
200). SubagentStart and SubagentStop hooks fire around it.

Several run at once (up to CODELOOP_MAX_PARALLEL_AGENTS); each stops with the session's abort
and with its own call's, writes its own transcript (a sidechain, transcript.py), hands every
event up wrapped in a SubagentEvent (so frontends show it under its call), and leaves a
SubagentRun with what it spent.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from codeloop.context.memory import system_reminder
from codeloop.context.system_prompt import build_system_prompt
from codeloop.deps import BeforeWrite, LoopDeps, TrimOnly
from codeloop.events import (
    AssistantTurn,
    Event,
    LoopEnd,
    SubAgent,
    SubagentEvent,
    TaskProgress,
    UserTurn,
)
from codeloop.extensions.agents import GENERAL, AgentDefinition, Agents, choose_tools
from codeloop.hooks.hook_runner import HookRunner
from codeloop.loop import LoopParams, query_loop
from codeloop.models.aliases import resolve_alias
from codeloop.permissions.policy import Policy
from codeloop.session_config import SessionConfig
from codeloop.store.transcript import TranscriptWriter
from codeloop.system.aio import linked_abort
from codeloop.system.valueclass import valueclass
from codeloop.tools.base import AgentCall, AnyTool, ToolContext, ToolResult, Workspace
from codeloop.types import Message, ToolUseBlock, Usage, new_uuid
from codeloop.usage.costs import Ledger, total_cost_usd

if TYPE_CHECKING:
    from codeloop.mcp.agent_servers import AgentMcp
    from codeloop.side_requests import SideRequests

# Skill name -> its rendered body, for an agent's `skills:` (None: no such skill).
SkillBodies = Callable[[str], str | None]
# (runner, session, agent, call, the call's context) -> the spawn's result (teammates.py).
SpawnTeammate = Callable[
    ["AgentRunner", "AgentHost", AgentDefinition, AgentCall, ToolContext], Awaitable[ToolResult]
]


class AgentHost(Protocol):
    """What an agent needs of the session it runs in (the Session is one): its settings, tools
    and workspace, a loop's parameters and collaborators, and where its transcript, events,
    warnings and spending go. Typed against this, not Session, so the session sits above."""

    @property
    def config(self) -> SessionConfig: ...
    @property
    def tools(self) -> Mapping[str, AnyTool]: ...
    @property
    def workspace(self) -> Workspace: ...
    @property
    def hooks(self) -> HookRunner | None: ...
    @property
    def ledger(self) -> Ledger: ...
    @property
    def user_context(self) -> tuple[Message, ...]: ...
    @property
    def subagent_runs(self) -> list[SubagentRun]: ...
    @property
    def side(self) -> SideRequests | None: ...

    def run_params(self, messages: tuple[Message, ...], **changes: Any) -> LoopParams: ...
    def run_deps(self) -> LoopDeps: ...
    def sidechain(self, agent: SubAgent) -> TranscriptWriter | None: ...
    def observe_subagent(self, event: Event, agent: SubAgent) -> None: ...
    def notify(self, text: str) -> None: ...


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
# How many sub-agents may run at once, session-wide (CODELOOP_MAX_PARALLEL_AGENTS).
DEFAULT_MAX_PARALLEL_AGENTS = 10
# Parent modes a sub-agent's own permissionMode cannot loosen or change.
_PARENT_WINS = ("bypassPermissions", "acceptEdits", "auto")


@valueclass
class SubagentRun:
    """One sub-agent this session ran, and what it spent (its share of the session's cost)."""

    agent: SubAgent
    reason: str
    turns: int
    duration_ms: float
    usage_by_model: dict[str, Usage]
    cost_by_model: dict[str, float]
    transcript: Path | None = None

    @property
    def usage(self) -> Usage:
        return sum(self.usage_by_model.values(), Usage())

    @property
    def cost_usd(self) -> float:
        return total_cost_usd(self.cost_by_model)

    def summary(self) -> dict[str, Any]:
        """As the json result lists it (`subagents`)."""
        return {
            "agent_id": self.agent.agent_id,
            "agent_type": self.agent.agent_type,
            "description": self.agent.description,
            "tool_use_id": self.agent.tool_use_id,
            "terminal_reason": self.reason,
            "num_turns": self.turns,
            "duration_ms": round(self.duration_ms),
            "total_cost_usd": round(self.cost_usd, 6),
            "usage": self.usage.to_dict(),
            "transcript": str(self.transcript) if self.transcript else None,
        }


class AgentRunner:
    """The session's Agent spawner: knows the agents, runs the one a call names, at most
    `max_parallel` at once (CODELOOP_MAX_PARALLEL_AGENTS)."""

    def __init__(
        self,
        agents: Agents,
        *,
        skills: SkillBodies | None = None,
        bypass_disabled: bool = False,
        mcp: AgentMcp | None = None,
        max_parallel: int = DEFAULT_MAX_PARALLEL_AGENTS,
        teammates: SpawnTeammate | None = None,
    ) -> None:
        self.agents = agents
        # Agent teams (teammates.py): starts a teammate in the background; None: teams are off.
        self.teammates = teammates
        self.skills = skills
        self.bypass_disabled = bypass_disabled
        # Starts an agent's own `mcpServers` for the time it runs.
        self.mcp = mcp
        self.max_parallel = max_parallel
        self._slots: asyncio.Semaphore | None = None

    async def __call__(self, session: AgentHost, call: AgentCall, ctx: ToolContext) -> ToolResult:
        agent = self.agents.get(call.agent_type or GENERAL.name)
        if agent is None:
            known = ", ".join(self.agents.by_name)
            return ToolResult.error(
                f"Agent type {call.agent_type!r} not found. Available agents: {known}"
            )
        if call.team_name or call.name:  # an agent team's teammate, in the background
            if self.teammates is None:
                return ToolResult.error(
                    "Agent teams are off: set CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1 to spawn "
                    "teammates."
                )
            return await self.teammates(self, session, agent, call, ctx)
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.max_parallel)
        if self._slots.locked():
            ctx.progress(f"waiting: {self.max_parallel} agents are already running")
        async with self._slots:
            servers: contextlib.AbstractAsyncContextManager[Mapping[str, AnyTool]] = (
                self.mcp.servers(agent, session.tools, session.notify)
                if self.mcp is not None and agent.mcp_servers
                else contextlib.nullcontext({})
            )
            async with servers as own_tools:
                return await run_agent(
                    session,
                    agent,
                    call,
                    ctx,
                    skills=self.skills,
                    bypass_disabled=self.bypass_disabled,
                    own_tools=own_tools,
                )


@valueclass
class PreparedAgent:
    """An agent ready to run: who it is, its loop's parameters and dependencies."""

    sub: SubAgent
    params: LoopParams
    deps: LoopDeps


async def run_agent(
    session: AgentHost,
    agent: AgentDefinition,
    call: AgentCall,
    ctx: ToolContext | None = None,
    *,
    skills: SkillBodies | None = None,
    bypass_disabled: bool = False,
    with_hooks: bool = True,
    own_tools: Mapping[str, AnyTool] | None = None,
) -> ToolResult:
    """Run `agent` on `call` as a fresh loop, in the context of the tool call that asked
    (`ctx`: its id, its abort, where its events go). `with_hooks=False`: no hooks at all (an
    agent hook's verifier, which must not set off the hook that started it). `own_tools`: its
    own MCP servers' tools, which it gets whatever its `tools:` list says (less its
    `disallowedTools`)."""
    ctx = ctx or ToolContext(session.workspace)
    prepared = await prepare_agent(
        session,
        agent,
        call,
        ctx,
        skills=skills,
        bypass_disabled=bypass_disabled,
        with_hooks=with_hooks,
        own_tools=own_tools,
    )
    if isinstance(prepared, ToolResult):
        return prepared
    end = await drive(session, prepared, ctx)
    answer = end.final_text
    if end.reason != "completed":
        why = end.error or end.reason.replace("_", " ")
        return ToolResult.error(f"The sub-agent ({call.description}) stopped: {why}\n{answer}")
    return ToolResult(answer or f"The sub-agent ({call.description}) gave no answer.")


async def prepare_agent(
    session: AgentHost,
    agent: AgentDefinition,
    call: AgentCall,
    ctx: ToolContext,
    *,
    skills: SkillBodies | None = None,
    bypass_disabled: bool = False,
    with_hooks: bool = True,
    own_tools: Mapping[str, AnyTool] | None = None,
    workspace: Workspace | None = None,
) -> PreparedAgent | ToolResult:
    """Everything `run_agent` sets up before the loop (its SubagentStart hooks run here), or
    the error that keeps it from starting. `workspace`: its own, made by the caller (a
    teammate's names it); else a fork of the session's."""
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
    sub = SubAgent(
        ctx.tool_use_id,
        call.description,
        agent.name,
        built_in=agent.built_in,
        agent_id=f"a{new_uuid().replace('-', '')[:16]}",
    )
    hooks = None
    if session.hooks is not None and with_hooks:
        hooks = session.hooks.for_agent(sub.agent_id, agent.name, agent.hooks)
    context = list(session.user_context)
    if hooks is not None:
        started = await hooks.run(
            "SubagentStart", {"agent_id": sub.agent_id, "agent_type": agent.name}
        )
        if text := started.for_model():
            context.append(Message.user(system_reminder(text), is_meta=True))
    for name in agent.skills:
        body = skills(name) if skills is not None else None
        if body:
            context.append(Message.user(system_reminder(body), is_meta=True))
    # A model the call or the frontmatter names may be an alias: the one resolver names it.
    chosen = call.model or agent.model
    model = resolve_alias(chosen) if chosen else session.config.model
    params = session.run_params(
        (Message.user(call.prompt),),
        model=model,
        tools={name: session.tools[name] for name in choice.names} | _own(agent, own_tools),
        # Its own working directory, read state and task list: its `cd` does not move the
        # caller.
        workspace=workspace or session.workspace.fork(),
        system=_system(session, agent, model),
        # A runaway agent stops at its own limit, else the session's (200 by default).
        max_turns=agent.max_turns or session.config.subagent_max_turns,
        fallback_model=session.config.fallback_model if chosen is None else None,
        user_context=tuple(context),
        stop_event="SubagentStop",
        task_budget=None,  # the main conversation's: the task is the user's prompt
    )
    # The session's context manager belongs to the main history; a sub-agent trims its own.
    # Its writes wait for the checkpoint its Agent call's turn takes (the caller's executor).
    deps = replace(
        session.run_deps(),
        can_use_tool=_policy(session, agent, bypass_disabled).can_use_tool,
        context=TrimOnly(),
        hooks=hooks,
        spawn_agent=None,
        before_write=_caller_checkpoint(ctx),
        summarize_tools=None,  # the labels are the main conversation's (Claude Code's too)
    )
    return PreparedAgent(sub, params, deps)


async def drive(session: AgentHost, agent: PreparedAgent, ctx: ToolContext) -> LoopEnd:
    """The agent's loop: stopped by the session's abort or its call's, each event written to
    its own transcript and handed up to the frontends, its spending recorded at the end. A
    teammate drives again with its history and a new message (the last one is written)."""
    sub, params, deps = agent.sub, agent.params, agent.deps
    transcript = session.sidechain(sub)
    started = time.monotonic()
    end: LoopEnd | None = None
    seen = [params.messages[-1]]  # what its progress reports describe
    async with (
        linked_abort(params.abort, ctx.abort) as abort,
        _reporting_progress(session, sub, ctx, seen),
    ):
        params = replace(params, abort=abort)
        _write(transcript, params.messages[-1])
        async for event in query_loop(params, deps):
            _write(transcript, event)
            session.observe_subagent(event, sub)  # its requests recorded, observers told
            ctx.emit(SubagentEvent(sub, event))
            if isinstance(event, AssistantTurn | UserTurn):
                seen.append(event.message)
            elif isinstance(event, LoopEnd):
                end = event
    assert end is not None
    run = SubagentRun(
        sub,
        end.reason,
        end.turns,
        (time.monotonic() - started) * 1000,
        dict(end.usage_by_model),
        dict(end.cost_by_model),
        transcript.path if transcript is not None else None,
    )
    session.subagent_runs.append(run)
    if transcript is not None:
        with contextlib.suppress(OSError):
            transcript.note(
                "subagent_end",
                reason=run.reason,
                turns=run.turns,
                durationMs=round(run.duration_ms),
                costUSD=round(run.cost_usd, 6),
                usage=run.usage.to_dict(),
                modelUsage={m: u.to_dict() for m, u in run.usage_by_model.items()},
            )
            transcript.close()
    return end


@contextlib.asynccontextmanager
async def _reporting_progress(
    session: AgentHost, sub: SubAgent, ctx: ToolContext, seen: list[Message]
) -> AsyncIterator[None]:
    """While the agent runs, about every 30 s, a few words on its latest action go up as a
    TaskProgress (the SDK's agentProgressSummaries), the way its own events do."""
    side = session.side
    if side is None or not side.agent_progress:
        yield
        return

    def report(summary: str) -> None:
        progress = TaskProgress(summary, sub.tool_use_id)
        session.observe_subagent(progress, sub)
        ctx.emit(SubagentEvent(sub, progress))

    reporting = asyncio.ensure_future(side.report_progress(lambda: tuple(seen), report))
    try:
        yield
    finally:
        reporting.cancel()


def _write(transcript: TranscriptWriter | None, item: Message | Event) -> None:
    """A failing disk costs the sub-agent's transcript, never its run."""
    if transcript is not None:
        with contextlib.suppress(OSError):
            transcript.record(item)


def _caller_checkpoint(ctx: ToolContext) -> BeforeWrite | None:
    checkpoint = ctx.checkpoint
    if checkpoint is None:
        return None

    async def before_write(history: tuple[Message, ...], call: ToolUseBlock) -> str | None:
        await checkpoint()
        return None  # a failure is the caller's warning

    return before_write


def _own(agent: AgentDefinition, tools: Mapping[str, AnyTool] | None) -> dict[str, AnyTool]:
    if not tools:
        return {}
    allowed = choose_tools(replace(agent, tools=None), list(tools)).names
    return {name: tools[name] for name in allowed}


def _system(session: AgentHost, agent: AgentDefinition, model: str) -> str:
    """General-purpose: the session's prompt; a custom agent: its own, with the environment
    (the one the session gathered, without its git state, while it works in the same folder)."""
    if agent.built_in:
        return f"{session.config.system}\n\n{SUBAGENT_NOTE}"
    workspace = session.workspace
    own = f"{agent.prompt.strip()}\n\n{SUBAGENT_NOTE}" if agent.prompt.strip() else SUBAGENT_NOTE
    gathered = session.config.environment
    environment = (
        replace(gathered, model=model, git=None)
        if gathered is not None and gathered.cwd == workspace.cwd
        else None
    )
    return build_system_prompt(
        workspace.cwd, model, extra_dirs=workspace.extra_dirs, override=own, environment=environment
    )


def _policy(session: AgentHost, agent: AgentDefinition, bypass_disabled: bool) -> Policy:
    """The agent's permissionMode, unless the parent's bypass, acceptEdits or auto wins (in
    auto mode the classifier judges the sub-agent's calls too), or the mode is not available
    (bypass or auto disabled by the settings: the parent's mode applies)."""
    policy = session.config.policy
    mode = agent.permission_mode
    if mode is None or policy.mode in _PARENT_WINS or (mode == "auto" and policy.auto is None):
        return policy
    if mode == "bypassPermissions" and bypass_disabled:
        return policy
    return policy.with_mode(mode)  # type: ignore[arg-type]  # MODES, less manual
