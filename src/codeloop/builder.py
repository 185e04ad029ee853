"""Assemble a Session from Options in one step: settings, extensions, model, tools, agents,
permissions, hooks and the transcript (new or resumed: resume.py), then the prompt context
(git state and memory, gathered concurrently), so that the session is constructed with the
system prompt it keeps and a config that no longer changes.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from codeloop.context.auto_memory import auto_memory_dir
from codeloop.context.compact import SummaryModel
from codeloop.context.environment import GitProbe
from codeloop.context.lazy_memory import InstructionTracker
from codeloop.context.memory import Memory, load_memory
from codeloop.context.pipeline import ContextManager, ContextSettings
from codeloop.context.system_prompt import STYLE_BASE, PromptContext, gather_prompt_context
from codeloop.context.tokens import ContextLimits, context_limits
from codeloop.deps import CallModel, LoopDeps
from codeloop.errors import ConfigError, SettingsError, UsageError
from codeloop.events import Notice, RequestEnd
from codeloop.extensions.agents import AgentDefinition, choose_tools, task_description
from codeloop.extensions.loader import Extensions, load_extensions
from codeloop.extensions.output_styles import style_section
from codeloop.extensions.skill_discovery import SkillDiscovery, nested_skills_exist
from codeloop.extensions.skills import substitute
from codeloop.hooks.hook_config import merge_hooks
from codeloop.hooks.hook_handlers import HttpPolicy, model_judge
from codeloop.hooks.hook_runner import HookRunner, instructions_loaded
from codeloop.mcp.agent_servers import AgentMcp
from codeloop.mcp.names import MANAGER_TOOLS
from codeloop.mcp.server_policy import McpPolicy
from codeloop.mcp.setup import session_mcp, timeouts_from_env
from codeloop.mcp.sources import McpApproval, plugin_servers
from codeloop.models.aliases import small_fast_model
from codeloop.models.base import ModelClient
from codeloop.models.catalog import lookup, model_info
from codeloop.models.complete import QuickModel
from codeloop.models.factory import (
    check_capabilities,
    fallback_model_name,
    mode_models,
    model_notices,
    resolve_model,
)
from codeloop.models.prompt_size import prompt_tokens
from codeloop.models.retry import RetryPolicy
from codeloop.models.shaping import RequestShape, parse_overrides
from codeloop.models.thinking import ThinkingConfig
from codeloop.options import Options
from codeloop.permissions.decision import Decision
from codeloop.permissions.policy import (
    HookVerdict,
    Policy,
    settings_rules,
    split_rules,
)
from codeloop.permissions.rules import Rule, RuleError, memory_rule
from codeloop.session import Session
from codeloop.session_config import (
    DEFAULT_SUBAGENT_MAX_TURNS,
    DEFAULT_UNKNOWN_MODEL_MAX_TURNS,
    SessionConfig,
)
from codeloop.settings.settings_apply import (
    permission_mode,
    session_env,
    sweep_transcripts,
    unsupported_report,
)
from codeloop.settings.settings_files import Settings, config_sources, load_settings, user_dirs
from codeloop.shell.sandbox import sandbox_for
from codeloop.store.data_paths import codeloop_home
from codeloop.store.resume import Opened, open_transcript
from codeloop.store.session_store import SessionStore
from codeloop.store.transcript import TranscriptWriter
from codeloop.subagents import (
    DEFAULT_MAX_PARALLEL_AGENTS,
    VERIFIER,
    AgentRunner,
    SpawnTeammate,
    run_agent,
)
from codeloop.system.env_values import flag, milliseconds
from codeloop.teams.task_list import TaskList
from codeloop.telemetry import StartType, start_telemetry
from codeloop.tool_names import AGENT, canonical
from codeloop.tools.base import (
    AgentCall,
    AnyTool,
    InstructionSeams,
    ToolContext,
    ToolResult,
    Workspace,
)
from codeloop.tools.profile import (
    PROFILE_CHOICES,
    ProfileChoice,
    compact_tools,
    compact_wanted,
)
from codeloop.tools.registry import (
    BUILTINS,
    ON_DEMAND,
    Offered,
    ToolFactory,
    default_tools,
    described,
    on_demand_tool,
    switched_tools,
    uses_teams,
)
from codeloop.tools.services import ToolServices
from codeloop.tools.skill_runtime import SkillRuntime
from codeloop.types import new_uuid
from codeloop.workspace.background import BackgroundShells

if TYPE_CHECKING:
    from codeloop.checkpoints.manager import Checkpoints
    from codeloop.lsp.servers import LanguageServers
    from codeloop.mcp.server_manager import McpManager
    from codeloop.side_requests import SideRequests


async def build_session(options: Options) -> Session:
    """Load the settings; resolve the model, tools, workspace, policy and hooks; open the
    transcript. Raises a CodeloopError (errors.py) with a message for the user."""
    cwd = (options.cwd or Path.cwd()).resolve()
    git = GitProbe(cwd)
    try:
        await asyncio.sleep(0)  # git's processes start now: they run while the session is built
        return await _assemble(options, cwd, git)
    except BaseException:
        git.cancel()
        raise


async def _assemble(options: Options, cwd: Path, git: GitProbe) -> Session:
    base_env = os.environ if options.env is None else options.env
    settings = load_settings(
        cwd, cli=options.settings, env=base_env, sources=options.setting_sources
    )
    warnings: list[str | Notice] = [*settings.warnings, *unsupported_report(settings)]
    env = session_env(settings, base_env, cwd)
    add_dirs = [_existing_dir(cwd, d) for d in options.add_dirs]
    extra_dirs = [*add_dirs, *_additional_dirs(settings, cwd, warnings)]
    roots = [cwd, *extra_dirs]
    ext = load_extensions(
        cwd,
        settings,
        env,
        agents_json=options.agents,
        plugin_dirs=[(cwd / d).resolve() for d in options.plugin_dirs],
        extra_dirs=add_dirs,  # --add-dir folders' skills load; additionalDirectories' do not
        sources=options.setting_sources,
    )
    warnings += [Notice("info", note) for note in ext.notes]
    warnings += ext.warnings
    main = _main_agent(options, settings, ext, warnings)
    requested = options.permission_mode or (main.permission_mode if main else None)
    mode = requested or settings.permissions.default_mode or "default"
    thinking = _thinking(options, settings, env)
    profile = _profile_choice(options, settings)
    client, model = _client(options, settings, env, cwd, main, mode == "plan", thinking, warnings)
    limits = await _limits(client.provider, model, env, warnings)
    if ext.bin_dirs:  # a plugin's bin/ is on the Bash tool's PATH
        env["PATH"] = os.pathsep.join([*map(str, ext.bin_dirs), env.get("PATH", "")])
    skills = SkillRuntime(ext.skills, "", cwd, shell_disabled=settings.skill_shell_disabled)
    listing = ext.skills.listing(settings.skill_overrides)
    with_skill = _offers_skill_tool(ext, listing, cwd)
    services = ToolServices(  # filled once the session exists (_connect_tools)
        search_endpoint=settings.web_search_url,
        server_search=client.provider == "anthropic",
        language_servers=_language_servers(ext, env, cwd, warnings),
    )
    tools = _tools(options, settings, ext, main, roots, skills, with_skill, services, warnings)
    tools = switched_tools(tools, env)  # the task list, agent teams
    warnings += check_capabilities(
        model, tools=bool(tools), thinking=thinking, effort_flag=options.effort is not None
    )
    warnings += model_notices(model, client.provider, env)
    memory_dir = auto_memory_dir(cwd, env, settings)
    policy = _policy(options, settings, tools, roots, warnings, requested, memory_dir)
    tools, compact = _profiled(tools, profile, limits.window, client, policy, warnings)
    override, append = _prompt_parts(options, settings, ext, main)
    store = _session_store(cwd, env, settings)
    opened = _open_transcript(options, store)
    transcript = opened.transcript
    session_dir = store.directory / transcript.session_id
    workspace = _workspace(cwd, extra_dirs, env, session_dir, opened)
    hooks = _hooks(
        settings, ext, transcript, cwd, env, policy, tools, client.stream, model, workspace
    )
    memory = _memory(settings, cwd, env, workspace, hooks, memory_dir)
    mcp = _mcp(options, settings, ext, cwd, env, limits.window, warnings)
    try:
        if mcp is not None:  # the servers come up while the prompt context is gathered
            mcp.begin()
        # The git state and the memory, gathered concurrently: the system prompt, once.
        prompt = await gather_prompt_context(
            cwd,
            model,
            extra_dirs=extra_dirs,
            override=override,
            append=append,
            env=env,
            memory=memory,
            reminders=(listing,) if listing else (),
            git=git,
            brief=compact,
            memory_dir=memory_dir,
        )
        warnings += prompt.warnings
        config = _config(
            options, settings, env, client.provider, model, prompt, policy, main, limits
        )
        context = _context_manager(
            config, settings, env, client, limits, tools, workspace, session_dir, hooks
        )
        deps = LoopDeps(call_model=client.stream, can_use_tool=policy.can_use_tool)
        # OpenTelemetry, when the environment (settings' env included) asks for it.
        start: StartType = (
            "continue" if options.continue_conversation else "resume" if options.resume else "fresh"
        )
        telemetry = start_telemetry(env, transcript.session_id, model, start)
        session = Session(
            client,
            tools,
            workspace,
            config,
            checkpoints=_checkpoints(settings, store, transcript.session_id, roots, env),
            deps=deps,
            history=opened.history,
            transcript=transcript,
            notices=[*warnings, *opened.warnings, *telemetry.warnings],
            context=context,
            hooks=hooks,
            mcp=mcp,
            user_context=[prompt.user_context] if prompt.user_context is not None else [],
        )
        session.agents = _agent_runner(ext, skills, settings, env, cwd)
        _connect_skills(skills, session, policy, tools, hooks)
        _connect_hooks(hooks, session, client.stream, model)
        _connect_auto_mode(session, hooks, settings, prompt.memory.text())
        side_model = _connect_tools(services, session, client, env)
        session.side = _side_requests(side_model, options, env, session.notify)
        _connect_language_servers(services, session, env, warnings)
        session.memory_files = tuple(prompt.memory.files)
        session.memory_dir = memory_dir
        _describe(session, ext, settings, memory)
        if telemetry.observer is not None:
            session.observers.append(telemetry.observer)
        return session
    except BaseException:
        if mcp is not None:  # no session holds them: nothing else would stop them
            await mcp.aclose()
        raise


def _offers_skill_tool(ext: Extensions, listing: str, cwd: Path) -> bool:
    """The Skill tool is offered when a skill is listed, held for its `paths:`, or waits in
    a subfolder's .claude/skills."""
    return (
        bool(listing)
        or any(skill.paths for skill in ext.skills.by_name.values())
        or nested_skills_exist(cwd)
    )


def _memory(
    settings: Settings,
    cwd: Path,
    env: dict[str, str],
    workspace: Workspace,
    hooks: HookRunner,
    memory_dir: Path | None,
) -> Memory:
    """The memory files loaded at start; the workspace's tracker loads the nested and
    path-scoped ones as the model's tools touch their folders."""
    memory = load_memory(
        cwd,
        env=env,
        excludes=settings.claude_md_excludes,
        managed_text=settings.managed_claude_md,
        auto_memory=memory_dir,
    )
    workspace.instructions = InstructionTracker(
        memory,
        cwd,
        user_dirs(env).home,
        excludes=settings.claude_md_excludes,
        on_load=functools.partial(instructions_loaded, hooks),
    )
    return memory


def _tools(
    options: Options,
    settings: Settings,
    ext: Extensions,
    main: AgentDefinition | None,
    roots: list[Path],
    skills: SkillRuntime,
    with_skill: bool,
    services: ToolServices,
    warnings: list[str | Notice],
) -> dict[str, AnyTool]:
    """The built-in tools (WebSearch when there is a search backend), the Skill tool when
    there are skills, the Agent tool listing the custom agents; an agent run as the main one
    keeps only its own."""
    tools = default_tools(_sandboxed_bash(options, settings, roots, warnings), services)
    if with_skill:
        tools["Skill"] = on_demand_tool("Skill", functools.partial(_skill_tool, skills))
    if len(ext.agents.by_name) > 1:  # custom agents: the Agent tool lists them
        task = tools[AGENT]
        tools[AGENT] = described(task, task_description(task.description, ext.agents, list(tools)))
    if main is not None and (main.tools is not None or main.disallowed_tools):
        kept = choose_tools(main, list(tools), keep_task=True).names
        tools = {name: tool for name, tool in tools.items() if name in kept}
    return tools


def _mcp(
    options: Options,
    settings: Settings,
    ext: Extensions,
    cwd: Path,
    env: Mapping[str, str],
    window: int,
    warnings: list[str | Notice],
) -> McpManager | None:
    """The session's MCP servers: the configured ones, the plugins', --mcp-config's."""
    roots = {p.name: (p.root, p.data_dir) for p in ext.plugins}
    plugin_mcp, notes = plugin_servers(ext.mcp_servers, roots)
    manager = session_mcp(
        cwd,
        env,
        McpApproval.of(settings),
        notes,
        mcp_config=options.mcp_config,
        strict=options.strict_mcp_config,
        extra=[*plugin_mcp, *options.mcp_servers],
        window=window,
        tunnel=options.mcp_tunnel,
        policy=McpPolicy(settings.allowed_mcp_servers, settings.denied_mcp_servers),
    )
    warnings += notes
    return manager


def _agent_runner(
    ext: Extensions, skills: SkillRuntime, settings: Settings, env: Mapping[str, str], cwd: Path
) -> AgentRunner:
    """Runs Agent calls: the custom agents, their skills and their own MCP servers, at most
    CODELOOP_MAX_PARALLEL_AGENTS at once."""
    return AgentRunner(
        ext.agents,
        skills=functools.partial(_skill_body, skills),
        bypass_disabled=settings.permissions.disable_bypass,
        mcp=_agent_mcp(settings, env, cwd),
        max_parallel=_positive_int(env.get("CODELOOP_MAX_PARALLEL_AGENTS"))
        or DEFAULT_MAX_PARALLEL_AGENTS,
        teammates=_teammates(env),
    )


def _teammates(env: Mapping[str, str]) -> SpawnTeammate | None:
    """What starts a teammate when agent teams are on (loaded only then); None when off."""
    if not uses_teams(env):
        return None
    from codeloop.teams.teammates import spawn_teammate

    return spawn_teammate


def _agent_mcp(settings: Settings, env: Mapping[str, str], cwd: Path) -> AgentMcp:
    """What custom agents' own `mcpServers` start with (mcp/agent_servers.py)."""
    policy = McpPolicy(settings.allowed_mcp_servers, settings.denied_mcp_servers)
    timeouts = timeouts_from_env(env, [])  # a bad value is said once, by the session's servers
    return AgentMcp(env, cwd, McpApproval.of(settings), policy, timeouts)


def _connect_tools(
    services: ToolServices, session: Session, client: ModelClient, env: Mapping[str, str]
) -> QuickModel:
    """What the tools that need the session act through, now that it exists; the side model
    they ask, which the side requests use too."""
    config = session.config
    services.leave_plan_mode = config.policy.leave_plan_mode
    services.host_allowed = functools.partial(config.policy.names_host, "WebFetch")
    services.questions = session.questions  # a frontend that can ask sets `.ask`
    small = _small_model(client.provider, config.model, env)
    side_model = QuickModel(client.stream, small, config.retry, session.ledger.add)
    services.side_model = side_model
    return side_model


def _side_requests(
    model: QuickModel,
    options: Options,
    env: Mapping[str, str],
    warn: Callable[[str], None],
) -> SideRequests | None:
    """The side requests the session asked for, on the tools' side model (the same client,
    retries and usage ledger); None when none is on. CODELOOP_AGENT_PROGRESS_MS: the period
    of a sub-agent's progress reports (Claude Code's 30 s by default), read only then."""
    tool_summaries = flag(env, "CLAUDE_CODE_EMIT_TOOL_USE_SUMMARIES")
    if not (tool_summaries or options.agent_progress_summaries or options.prompt_suggestions):
        return None  # a session without side requests never loads them
    from codeloop.side_requests import PROGRESS_EVERY_SECONDS, SideRequests

    notes: list[str] = []
    every = milliseconds(
        env, "CODELOOP_AGENT_PROGRESS_MS", int(PROGRESS_EVERY_SECONDS * 1000), notes
    )
    for note in notes:
        warn(note)
    return SideRequests(
        replace(model, stream=False),  # short answers, each read in one piece
        tool_summaries=tool_summaries,
        agent_progress=options.agent_progress_summaries,
        prompt_suggestions=options.prompt_suggestions,
        progress_every=every / 1000,
    )


def _small_model(provider: str, model: str, env: Mapping[str, str]) -> str:
    """The model for tools' side questions: Claude's small, fast one (ANTHROPIC_SMALL_FAST_MODEL
    / ANTHROPIC_DEFAULT_HAIKU_MODEL, else the newest haiku) where the session runs Claude;
    elsewhere the session's own model, the one sure to be there."""
    if provider in ("anthropic", "bedrock", "vertex"):
        return small_fast_model(env)
    return model


def _workspace(
    cwd: Path, extra_dirs: list[Path], env: dict[str, str], session_dir: Path, opened: Opened
) -> Workspace:
    """The tools' shared state: the session's folder holds the hooks' env file and the
    background shells' output; a resumed session gets its task list back."""
    return Workspace(
        cwd=cwd,
        extra_dirs=extra_dirs,
        env=env,
        env_file=session_dir / "env.sh",
        todos=[dict(t) for t in opened.todos],
        shells=BackgroundShells(session_dir / "tasks"),
        tasks=TaskList(session_dir / "task-list.json"),
    )


def _additional_dirs(settings: Settings, cwd: Path, warnings: list[str | Notice]) -> list[Path]:
    """The settings' additionalDirectories that exist (a missing one is a warning)."""
    found = []
    for raw in settings.permissions.additional_directories:
        path = (cwd / Path(raw).expanduser()).resolve()
        if path.is_dir():
            found.append(path)
        else:
            warnings.append(f"permissions.additionalDirectories: {raw}: no such directory")
    return found


def _config(
    options: Options,
    settings: Settings,
    env: Mapping[str, str],
    provider: str,
    model: str,
    prompt: PromptContext,
    policy: Policy,
    main: AgentDefinition | None,
    limits: ContextLimits,
) -> SessionConfig:
    info = model_info(model, env)
    fallback = options.fallback_model or next(iter(settings.fallback_models), None)
    return SessionConfig(
        model=model,
        system=prompt.system,
        # No more than the window keeps free for the answer (a small window keeps less).
        max_tokens=min(info.default_output_tokens, limits.output_reserve),
        max_output_tokens=info.max_output_tokens,
        max_turns=options.max_turns
        or settings.max_turns
        or (DEFAULT_UNKNOWN_MODEL_MAX_TURNS if provider == "local" or not info.known else None),
        max_budget_usd=options.max_budget_usd,
        fallback_model=fallback_model_name(fallback, provider, env) if fallback else None,
        token_budget=options.token_budget,
        task_budget=_task_budget(options.task_budget, provider),
        retry=replace(
            RetryPolicy.from_env(dict(env), local=_runs_locally(provider, env)),
            limiter=options.limiter,
        ),
        policy=policy,
        start_source=_start_source(options),
        subagent_max_turns=options.subagent_max_turns
        or _positive_int(env.get("CODELOOP_SUBAGENT_MAX_TURNS"))
        or DEFAULT_SUBAGENT_MAX_TURNS,
        mode_models=mode_models(
            options.model or (main.model if main else None), env, settings_model=settings.model
        ),
        environment=prompt.environment,
        temperature=_temperature(options.temperature, provider),
        stop_sequences=_stop_sequences(options.stop_sequences),
    )


def _temperature(value: float | None, provider: str) -> float | None:
    """Checked against the provider's range (Claude's is 0 to 1, OpenAI's 0 to 2) before
    anything is sent."""
    if value is None:
        return None
    top = 1 if provider in ("anthropic", "bedrock", "vertex") else 2
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= top:
        raise UsageError(f"temperature must be a number from 0 to {top} for {provider}: {value!r}")
    return float(value)


def _stop_sequences(values: Sequence[str]) -> tuple[str, ...]:
    if isinstance(values, str) or not all(isinstance(v, str) and v for v in values):
        raise UsageError(f"stop_sequences must be a list of non-empty strings, got {values!r}")
    return tuple(values)


def _context_manager(
    config: SessionConfig,
    settings: Settings,
    env: Mapping[str, str],
    client: ModelClient,
    limits: ContextLimits,
    tools: Mapping[str, AnyTool],
    workspace: Workspace,
    session_dir: Path,
    hooks: HookRunner,
) -> ContextManager:
    """The session's context window: its summary calls are the main call's, retried alike;
    its overhead counted as the client renders it."""
    specs = tuple(tool.spec() for tool in Offered(tools, config.policy.withholds).values())
    summarizer = SummaryModel(
        client.stream,
        config.model,
        config.system,
        specs,
        retry=config.retry,
        fallback_model=config.fallback_model,
        prompt_count=functools.partial(prompt_tokens, client),
    )
    return ContextManager(
        summarizer,
        limits,
        workspace,
        session_dir / "tool-results",
        # CODELOOP_AUTOCOMPACT=0: never summarise; a full window then ends the run instead.
        settings=ContextSettings(
            autocompact=env.get("CODELOOP_AUTOCOMPACT", "1") != "0"
            and settings.autocompact is not False
        ),
        pre_compact=hooks.pre_compact,
        post_compact=hooks.post_compact,
        todos=lambda: workspace.todos or None,  # the task list: compaction carries it
    )


def _main_agent(
    options: Options, settings: Settings, ext: Extensions, warnings: list[str | Notice]
) -> AgentDefinition | None:
    """The agent the session runs as (--agent, else the settings' `agent`)."""
    name = options.agent or settings.agent
    if not name:
        return None
    agent = ext.agents.get(name)
    if agent is None or agent.built_in:
        known = ", ".join(a for a in ext.agents.by_name if a != "general-purpose") or "none"
        raise SettingsError(f"agent {name!r} not found (agents: {known})")
    return agent


def _prompt_parts(
    options: Options, settings: Settings, ext: Extensions, main: AgentDefinition | None = None
) -> tuple[str | None, str | None]:
    """The system prompt's static part and addition: --system-prompt (or the session's
    agent's prompt), the output style (which replaces the coding instructions unless it keeps
    them), attribution, --append."""
    override = options.system_prompt
    if override is None and main is not None and main.prompt.strip():
        override = main.prompt.strip()
    append = _with_attribution(options.append_system_prompt, settings)
    style = ext.style
    if style is not None:
        if override is None and not style.keep_coding_instructions:
            override = STYLE_BASE
        append = "\n\n".join(p for p in (append, style_section(style)) if p)
    return override, append


def _connect_skills(
    runtime: SkillRuntime,
    session: Session,
    policy: Policy,
    tools: Mapping[str, AnyTool],
    hooks: HookRunner,
) -> None:
    """What the Skill tool acts through, once the session exists."""
    runtime.session_id = session.session_id
    runtime.grant = policy.grant

    def may_run(command: str, ctx: ToolContext) -> bool:
        bash = tools["Bash"]
        return policy.decide(bash, bash.parse({"command": command}), ctx.workspace).behavior == (
            "allow"
        )

    async def fork(call: AgentCall, ctx: ToolContext) -> ToolResult:
        return await session.agents(session, call, ctx)

    runtime.may_run = may_run
    runtime.add_hooks = lambda skill: hooks.add(skill.hooks)
    runtime.fork = fork
    workspace = session.workspace
    if "Skill" in tools and workspace.instructions is not None:  # nested and `paths:` skills
        discovery = SkillDiscovery(runtime, workspace.cwd)
        workspace.instructions = InstructionSeams((workspace.instructions, discovery))


def _language_servers(
    ext: Extensions, env: Mapping[str, str], cwd: Path, warnings: list[str | Notice]
) -> LanguageServers | None:
    """The language servers plugins configure (None: none, and nothing of them loads)."""
    if not ext.lsp_servers:
        return None
    from codeloop.lsp.servers import session_servers

    notes: list[str] = []
    roots = {p.name: (p.root, p.data_dir) for p in ext.plugins}
    servers = session_servers(ext.lsp_servers, roots, env, cwd, notes)
    warnings += notes
    return servers


def _connect_language_servers(
    services: ToolServices, session: Session, env: Mapping[str, str], warnings: list[str | Notice]
) -> None:
    """The session stops the servers; an edit of a file they handle tells the model the
    problems it brought (lsp/diagnostics.py)."""
    servers = services.language_servers
    if servers is None:
        return
    from codeloop.lsp.diagnostics import DEFAULT_WAIT_SECONDS, EditDiagnostics

    session.language_servers = servers
    notes: list[str] = []
    wait = milliseconds(env, "CODELOOP_LSP_DIAGNOSTICS_MS", int(DEFAULT_WAIT_SECONDS * 1000), notes)
    warnings += notes
    edits = EditDiagnostics(servers, wait=wait / 1000)
    workspace = session.workspace
    parts = (workspace.instructions, edits) if workspace.instructions is not None else (edits,)
    workspace.instructions = InstructionSeams(parts)


def _connect_hooks(hooks: HookRunner, session: Session, call_model: CallModel, model: str) -> None:
    """Prompt hooks' model calls count towards the session's cost; agent hooks run a
    read-only verifier as a sub-agent (with no hooks of its own, so it cannot set itself off)."""

    def judged(request: RequestEnd) -> None:  # counted in the cost, and recorded as a request
        session.ledger.add(request.request.model, request.usage)
        session.record_aside(request)

    hooks.judge = model_judge(call_model, model, judged)

    async def verify(hook_model: str | None, text: str) -> str:
        agent = VERIFIER if hook_model is None else replace(VERIFIER, model=hook_model)
        # Recorded as a sub-agent of its own: no tool call carries its answer.
        ctx = ToolContext(session.workspace, tool_use_id=f"hook-{new_uuid()}")
        call = AgentCall("hook verification", text, agent.name)
        result = await run_agent(session, agent, call, ctx, with_hooks=False)
        return result.content if isinstance(result.content, str) else ""

    hooks.agent_judge = verify
    if session.mcp is not None:  # a server asking the user for input meets the hooks first
        session.mcp.elicitations.hooks = hooks


def _skill_tool(runtime: SkillRuntime) -> AnyTool:
    from codeloop.tools.skill import SkillTool  # loaded on first use

    return SkillTool(runtime)


def _skill_body(runtime: SkillRuntime, name: str) -> str | None:
    """A skill's text for an agent's `skills:` (preloaded in full)."""
    skill = runtime.skills.get(name)
    if skill is None or not skill.model_invocable:
        return None
    return substitute(skill, "", session_id=runtime.session_id, project_dir=runtime.project_dir)


def _describe(session: Session, ext: Extensions, settings: Settings, memory: Memory) -> None:
    """What the session was built from, for frontends: the extensions, the settings (the UI's
    statusLine, editorMode), and what stream-json's init line reports as loaded."""
    session.extensions = ext
    session.settings = settings
    session.inventory = _inventory(ext, memory)


def _inventory(ext: Extensions, memory: Memory) -> dict[str, Any]:
    """What stream-json's init message reports as loaded (the slash commands are the
    registry's: headless adds them)."""
    return {
        "agents": list(ext.agents.by_name),
        "skills": [s.name for s in ext.skills.by_name.values() if s.model_invocable],
        "plugins": [{"name": p.name, "id": p.id, "path": str(p.root)} for p in ext.plugins],
        "output_style": ext.style.name if ext.style is not None else "default",
        "memory_files": [{"path": str(f.path), "type": f.kind} for f in memory.files],
    }


def _with_attribution(append: str | None, settings: Settings) -> str | None:
    """The settings' `attribution` text, as instructions for the commits and pull requests
    the model makes (codeloop adds no byline of its own)."""
    lines = []
    if settings.commit_attribution:
        lines.append(
            f"When you create a git commit, end its message with:\n{settings.commit_attribution}"
        )
    if settings.pr_attribution:
        lines.append(
            f"When you open a pull request, end its description with:\n{settings.pr_attribution}"
        )
    if not lines:
        return append
    return "\n\n".join([*([append] if append else []), *lines])


def _runs_locally(provider: str, env: Mapping[str, str]) -> bool:
    """A model on this machine (in-process, or a server on loopback) reads the prompt before it
    answers at a speed that makes long prompts slow to begin: its first wait grows with them."""
    if provider == "local":
        return True
    host = urlsplit(env.get("OPENAI_BASE_URL", "")).hostname or ""
    return provider == "openai" and (host == "localhost" or host.startswith("127."))


def _positive_int(raw: str | None) -> int | None:
    return int(raw) if raw and raw.isdigit() and int(raw) > 0 else None


def _start_source(options: Options) -> str:
    if options.fork_session:
        return "fork"
    return "resume" if options.continue_conversation or options.resume else "startup"


def _hooks(
    settings: Settings,
    ext: Extensions,
    transcript: TranscriptWriter,
    cwd: Path,
    env: Mapping[str, str],
    policy: Policy,
    tools: Mapping[str, AnyTool],
    call_model: CallModel,
    model: str,
    workspace: Workspace,
) -> HookRunner:
    """The session's hooks, with everything they act through: the policy's rule matching
    for `if`, the model for prompt hooks, the env file SessionStart hooks export into."""

    def if_matcher(rule: str, name: str, tool_input: Mapping[str, Any], where: Path) -> bool:
        tool = tools.get(name)
        if tool is None:
            return True
        return policy.rule_matches(rule, tool, tool.parse(dict(tool_input)), Workspace(where))

    configured = merge_hooks(settings.hooks, ext.hooks) if settings.plugin_hooks else settings.hooks
    runner = HookRunner(
        configured,
        transcript.session_id,
        transcript.path,
        cwd,
        env=env,
        permission_mode=lambda: policy.mode,
        if_matcher=if_matcher,
        http=HttpPolicy(settings.allowed_http_hook_urls, settings.http_hook_env_vars),
        env_file=workspace.env_file,
        config_files=config_sources(cwd, env),
    )
    policy.request_hook = functools.partial(_permission_request, runner)
    policy.denied_hook = functools.partial(_permission_denied, runner)
    return runner


async def _permission_request(
    runner: HookRunner, tool_name: str, tool_input: dict[str, Any], decision: Decision
) -> HookVerdict | None:
    suggestions = decision.suggested_updates("localSettings")
    outcome = await runner.run(
        "PermissionRequest",
        {"tool_input": tool_input, "permission_suggestions": suggestions},
        tool_name,
    )
    if outcome.request_behavior is None:
        return None
    return HookVerdict(
        outcome.request_behavior, outcome.request_message, outcome.updated_input, outcome.interrupt
    )


async def _permission_denied(
    runner: HookRunner, tool_name: str, tool_input: dict[str, Any], tool_use_id: str, reason: str
) -> bool:
    payload = {"tool_input": tool_input, "tool_use_id": tool_use_id, "reason": reason}
    outcome = await runner.run("PermissionDenied", payload, tool_name)
    return any(specific.get("retry") is True for specific in outcome.specific)


def _connect_auto_mode(
    session: Session, hooks: HookRunner, settings: Settings, memory: str
) -> None:
    """Auto mode's classifier is the prompt hooks' judge (the session's model, its cost
    counted); it weighs each call against the user's requests and the project's CLAUDE.md.
    None when disabled."""
    if settings.permissions.disable_auto or hooks.judge is None:
        return
    from codeloop.permissions.auto_mode import AutoMode, AutoRules

    sections = {name: tuple(items) for name, items in settings.auto_mode.items()}
    rules = AutoRules(**sections)
    auto = AutoMode(hooks.judge, rules=rules, history=session.messages, instructions=memory)
    session.config.policy.auto = auto
    session.observers.append(auto)


def _checkpoints(
    settings: Settings,
    store: SessionStore,
    session_id: str,
    roots: list[Path],
    env: Mapping[str, str],
) -> Checkpoints | None:
    """The session's checkpoints, beside its transcript; off with `checkpoints.enabled: false`
    or CODELOOP_CHECKPOINTS=0."""
    wanted = settings.checkpoints
    if not wanted.enabled or env.get("CODELOOP_CHECKPOINTS", "1") == "0":
        return None
    from codeloop.checkpoints.limits import Limits
    from codeloop.checkpoints.manager import Checkpoints

    limits = Limits(int(wanted.max_file_mb * 1024 * 1024), wanted.max_files)
    return Checkpoints(
        store.directory / session_id / "checkpoints",
        roots,
        limits=limits,
        exclude=[codeloop_home(env)],
    )


def _client(
    options: Options,
    settings: Settings,
    env: Mapping[str, str],
    cwd: Path,
    main: AgentDefinition | None,
    plan_mode: bool,
    thinking: ThinkingConfig,
    warnings: list[str | Notice],
) -> tuple[ModelClient, str]:
    """The model's client, every request shaped by the thinking asked for and the settings'
    requestOverrides; the model named by --model, the --agent, the environment or settings."""
    overrides, bad = parse_overrides(settings.request_overrides)
    warnings += bad
    client, model = resolve_model(
        options.model or (main.model if main else None),
        env,
        settings_model=settings.model,
        plan_mode=plan_mode,
        shape=RequestShape(thinking, overrides, tuple(options.betas)),
        record=options.record,
        replay=options.replay,
        cwd=cwd,
    )
    if options.betas and client.provider not in ANTHROPIC_APIS:
        raise ConfigError(
            f"--betas: the {client.provider} provider has no Anthropic beta features; run "
            "without it"
        )
    return client, model


# The providers speaking Anthropic's Messages API: beta features, the task budget.
ANTHROPIC_APIS = frozenset({"anthropic", "vertex", "bedrock"})


def _task_budget(total: int | None, provider: str) -> int | None:
    """--task-budget, refused where it cannot be told to the model (never silently dropped)."""
    if total is None:
        return None
    if isinstance(total, bool) or not isinstance(total, int) or total < 1:
        raise ConfigError(f"task budget {total!r}: must be a positive integer")
    if provider not in ANTHROPIC_APIS:
        raise ConfigError(
            f"--task-budget: the {provider} provider's API has no task budget (Anthropic's "
            "output_config.task_budget); run without it, or use --token-budget"
        )
    return total


async def _limits(
    provider: str, model: str, env: Mapping[str, str], warnings: list[str | Notice]
) -> ContextLimits:
    """The window, as the model's server or file says when the catalog does not know the
    model and CODELOOP_CONTEXT_WINDOW does not say (asked before the first request); what was
    found, or why nothing was, is a line for --verbose."""
    found = None
    # A model the catalog knows is never asked (discover_window says so too): its probes do
    # not even load.
    if not env.get("CODELOOP_CONTEXT_WINDOW", "").strip() and not lookup(model).known:
        from codeloop.models.window_discovery import discover_window

        discovery = await discover_window(provider, model, env)
        found = discovery.window
        if discovery.note:
            warnings.append(Notice("info", f"context window: {discovery.note}"))
    limits = context_limits(model, env, found)
    said = f" ({limits.source})" if limits.source else ""
    warnings.append(Notice("info", f"context window: {limits.window:,} tokens{said}"))
    return limits


def _profiled(
    tools: dict[str, AnyTool],
    profile: ProfileChoice,
    window: int,
    client: ModelClient,
    policy: Policy,
    warnings: list[str | Notice],
) -> tuple[dict[str, AnyTool], bool]:
    """The tools the session offers, the core ones it does not withhold when the compact
    profile is on (and whether it is)."""
    if not compact_wanted(profile, window):
        return tools, False
    offered = Offered(tools, policy.withholds)
    tools = compact_tools(offered, functools.partial(prompt_tokens, client, ""))
    warnings.append(Notice("info", f"compact profile: {', '.join(tools)}"))
    return tools, True


def _session_store(cwd: Path, env: Mapping[str, str], settings: Settings) -> SessionStore:
    """This project's transcripts, the ones past cleanupPeriodDays swept first."""
    store = SessionStore(cwd, env)
    if settings.cleanup_period_days is not None:
        sweep_transcripts(store.directory.parent, settings.cleanup_period_days)
    return store


def _profile_choice(options: Options, settings: Settings) -> ProfileChoice:
    """--compact-profile, else the compactProfile setting, else auto (tools/profile.py)."""
    choice = options.compact_profile or settings.compact_profile or "auto"
    if choice not in PROFILE_CHOICES:
        raise UsageError(f"compact_profile must be one of on, off, auto: {choice!r}")
    return choice


def _thinking(options: Options, settings: Settings, env: Mapping[str, str]) -> ThinkingConfig:
    raw = env.get("MAX_THINKING_TOKENS", "").strip()
    budget = None
    if raw:
        try:
            budget = int(raw.replace("_", ""))
        except ValueError:
            budget = -1
        if budget < 0:
            raise ValueError(f"MAX_THINKING_TOKENS must be a number of tokens, got {raw!r}")
    effort = options.effort or settings.effort_level
    always = settings.always_thinking or options.thinking == "adaptive"
    return ThinkingConfig(effort, budget or None, always, options.thinking == "disabled")


def _sandboxed_bash(
    options: Options, settings: Settings, roots: list[Path], warnings: list[str | Notice]
) -> dict[str, ToolFactory]:
    """Bash under bubblewrap when --sandbox or the settings ask for it (and bwrap can run)."""
    if not (options.sandbox or settings.sandbox):
        return {}
    sandbox, warning = sandbox_for(roots, allow_network=settings.sandbox_network)
    if warning and settings.sandbox_required:
        raise SettingsError(f"{warning} (the settings' sandbox.failIfUnavailable forbids that)")
    if warning:
        warnings.append(warning)
    if sandbox is None:
        return {}

    def bash() -> AnyTool:
        from codeloop.tools.bash import BashTool

        return BashTool(sandbox)

    return {"Bash": bash}


def _policy(
    options: Options,
    settings: Settings,
    tools: Mapping[str, AnyTool],
    roots: list[Path],
    warnings: list[str | Notice],
    requested: str | None = None,
    memory_dir: Path | None = None,
) -> Policy:
    """Rules from the flags (checked: a mistake there is the user's to fix now) and from every
    settings file (checked as they loaded), each tagged with where it came from; and the
    auto-memory folder's, where the model may write its notes (deny rules still win)."""
    cli_allow = _flag_rules(options.allowed_tools, "--allowedTools")
    cli_deny = _flag_rules(options.disallowed_tools, "--disallowedTools")
    for rule in (*cli_allow, *cli_deny):
        known = (*tools, *MANAGER_TOOLS)
        if canonical(rule.tool) not in known and not rule.tool.startswith("mcp__"):
            raise UsageError(f"unknown tool {rule.tool!r} (tools: {', '.join(tools)})")
    every_tool = {*tools, *MANAGER_TOOLS, *(name for name, _ in (*BUILTINS, *ON_DEMAND))}
    rules = settings_rules(settings.rule_sets, roots[0], every_tool, warnings.append)
    notices: list[Notice] = []
    mode = permission_mode(requested, settings, notices)
    warnings += notices
    memory = [memory_rule(memory_dir)] if memory_dir else []
    return Policy(
        mode,  # type: ignore[arg-type]  # one of PERMISSION_MODES: settings and flags check it
        [*cli_allow, *rules["allow"], *memory],
        [*cli_deny, *rules["deny"]],
        rules["ask"],
        roots=roots,
    )


def _flag_rules(values: Sequence[str], flag: str) -> list[Rule]:
    try:
        return [Rule.parse(text, flag) for text in split_rules(values)]
    except RuleError as exc:
        raise UsageError(f"{flag}: {exc}") from None


def _open_transcript(options: Options, store: SessionStore) -> Opened:
    return open_transcript(
        store,
        session_id=options.session_id,
        continue_latest=options.continue_conversation,
        resume=options.resume,
        fork=options.fork_session,
    )


def _existing_dir(cwd: Path, raw: str) -> Path:
    path = (cwd / Path(raw).expanduser()).resolve()
    if not path.is_dir():
        raise UsageError(f"--add-dir {raw}: no such directory")
    return path
