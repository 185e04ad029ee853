"""Assemble a session's MCP manager from its configuration: the manager loads only when a
server is configured, the SDK only when one starts."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from codeloop.mcp.server_config import ServerConfig, Timeouts
from codeloop.mcp.server_policy import McpPolicy, allowed_servers
from codeloop.mcp.sources import McpApproval, approval_hint, configured_servers
from codeloop.system.env_values import milliseconds

if TYPE_CHECKING:
    import httpx

    from codeloop.mcp.server_manager import McpManager
    from codeloop.mcp.tunnel import Tunnel

DEFAULT_CONNECT_MS = 30_000
DEFAULT_TOOL_MS = 600_000


def session_mcp(
    cwd: Path,
    env: Mapping[str, str],
    approval: McpApproval,
    warnings: list[str],
    *,
    mcp_config: Sequence[str] = (),
    strict: bool = False,
    extra: Sequence[ServerConfig] = (),
    window: int = 200_000,
    tunnel: Tunnel | None = None,
    policy: McpPolicy | None = None,
) -> McpManager | None:
    """The manager for a session's servers, or None when none is configured. A bad
    --mcp-config raises ConfigError; everything else becomes one of `warnings`."""
    configured = configured_servers(
        cwd, env, approval, mcp_config=mcp_config, strict=strict, extra=extra
    )
    warnings += configured.warnings
    if configured.unapproved:
        names = [s.name for s in configured.unapproved]
        warnings.append(
            f"the project's MCP servers {', '.join(names)} (.mcp.json) were not started: they "
            f"are not approved yet; to approve, {approval_hint(names)}"
        )
    servers = configured.servers
    if policy is not None:
        servers, blocked = allowed_servers(servers, policy, env)
        warnings += blocked
    if not servers:
        return None
    from codeloop.mcp.server_manager import McpManager  # a session without servers never loads it
    from codeloop.mcp.tool_search import search_mode

    return McpManager(
        servers,
        env=env,
        cwd=cwd,
        timeouts=timeouts_from_env(env, warnings),
        window=window,
        search=search_mode(env, warnings),
        auth=oauth_factory(env),
        tunnel=tunnel,
    )


def timeouts_from_env(env: Mapping[str, str], warnings: list[str]) -> Timeouts:
    """MCP_TIMEOUT (connect) and MCP_TOOL_TIMEOUT (each call), in milliseconds."""
    connect = milliseconds(env, "MCP_TIMEOUT", DEFAULT_CONNECT_MS, warnings)
    tool = milliseconds(env, "MCP_TOOL_TIMEOUT", DEFAULT_TOOL_MS, warnings)
    return Timeouts(connect / 1000, tool / 1000)


def oauth_factory(env: Mapping[str, str]) -> Callable[[ServerConfig], httpx.Auth | None]:
    """OAuth for remote servers with stored tokens (auth.py loads with the first one)."""

    def make(config: ServerConfig) -> httpx.Auth | None:
        from codeloop.mcp.auth import session_auth

        return session_auth(env)(config)

    return make
