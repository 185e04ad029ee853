"""Options: everything a caller can set for a session; builder.py assembles it from them.

The CLI maps its flags onto Options; library users fill it in directly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from codeloop.permissions.modes import PermissionMode
from codeloop.system.valueclass import valueclass

if TYPE_CHECKING:
    from codeloop.mcp.server_config import ServerConfig
    from codeloop.mcp.tunnel import Tunnel
    from codeloop.models.retry import RateLimiter


@valueclass(frozen=False)
class Options:
    model: str | None = None
    cwd: Path | None = None
    add_dirs: Sequence[str] = ()
    # None: the settings' permissions.defaultMode, else "default".
    permission_mode: PermissionMode | None = None
    # --settings: a settings file, or inline JSON, above every settings file.
    settings: str | None = None
    # Run Bash under bubblewrap (also the settings key sandbox.enabled).
    sandbox: bool = False
    allowed_tools: Sequence[str] = ()
    disallowed_tools: Sequence[str] = ()
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    max_turns: int | None = None
    # A sub-agent's turn limit when its agent sets none (default 200, or
    # CODELOOP_SUBAGENT_MAX_TURNS); custom agents set their own with maxTurns.
    subagent_max_turns: int | None = None
    max_budget_usd: float | None = None
    # Used when the model stays overloaded (same provider, e.g. a smaller Claude).
    fallback_model: str | None = None
    token_budget: int | None = None
    # --task-budget: tokens the task may take, told to the model (Anthropic's APIs only).
    task_budget: int | None = None
    # Write every model call to this cassette; or serve the calls from one, with no model.
    record: str | None = None
    replay: str | None = None
    # A new session's id (a UUID), or with fork_session the fork's; default: a fresh one.
    session_id: str | None = None
    # Continue the project's latest session, or the session `resume` names (id or its start).
    continue_conversation: bool = False
    resume: str | None = None
    # With continue/resume: copy the history into a new session instead of appending to it.
    fork_session: bool = False
    # None: the process environment.
    env: Mapping[str, str] | None = None
    # --setting-sources: which settings files load (user, project, local); None: all.
    setting_sources: Sequence[str] | None = None
    # --agents: custom agents as JSON (the Agent SDK passes them so).
    agents: str | None = None
    # --plugin-dir: plugin folders loaded for this session only.
    plugin_dirs: Sequence[str] = ()
    # --agent (or the settings' `agent`): run the session as this agent, with its prompt,
    # tools, model and permission mode.
    agent: str | None = None
    # --effort: low, medium, high, xhigh or max (else the effortLevel setting).
    effort: str | None = None
    # --compact-profile: on, off or auto (else the compactProfile setting, else auto): the
    # core tools and a short prompt for small windows (tools/profile.py).
    compact_profile: str | None = None
    # --thinking: "adaptive" (think, as much as the model sees fit) or "disabled" (never).
    thinking: str | None = None
    # --betas: Anthropic beta features sent with every request (Anthropic's APIs only).
    betas: Sequence[str] = ()
    # Sampling for the session's requests (its sub-agents' too; not the summaries'): each
    # provider's own field (Chat Completions' `stop`, Anthropic's `stop_sequences`). None and
    # (): the provider's default (the local model's temperature is 0.2).
    temperature: float | None = None
    stop_sequences: Sequence[str] = ()
    # --mcp-config values (a file or inline JSON, each {"mcpServers": {...}}); with
    # strict_mcp_config, the only servers started.
    mcp_config: Sequence[str] = ()
    strict_mcp_config: bool = False
    # More servers for a library caller (mcp/server_config.py parse_servers builds them).
    mcp_servers: Sequence[ServerConfig] = ()
    # How "sdk" servers are reached: the Agent SDK driving this session (mcp/tunnel.py).
    mcp_tunnel: Tunnel | None = None
    # Shared by sessions that draw on one quota (a batch): a 429/529 pauses them all, and
    # the summary calls wait on it too.
    limiter: RateLimiter | None = None
    # Side requests on the small fast model (side_requests.py): after each answer, what the
    # user might type next (--prompt-suggestions, the SDK's promptSuggestions); about every
    # 30 s of a running sub-agent, what it does (the SDK's agentProgressSummaries).
    prompt_suggestions: bool = False
    agent_progress_summaries: bool = False
