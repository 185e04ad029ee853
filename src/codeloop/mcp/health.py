"""`codeloop mcp list` and `get`: is each server up? Connect to it (all at once) and say.

A project server that is not approved is not started just to be listed: the repository it came
with has not been trusted to run commands yet.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from codeloop.mcp.server_config import ConfigError, ServerConfig
from codeloop.mcp.setup import oauth_factory, timeouts_from_env
from codeloop.mcp.sources import McpApproval, project_approval
from codeloop.settings.settings_files import load_settings

if TYPE_CHECKING:
    from codeloop.mcp.connection import Connection


async def check_servers(
    servers: Sequence[ServerConfig], cwd: Path, env: Mapping[str, str]
) -> dict[str, str]:
    settings = load_settings(cwd, env=env)
    full_env = {**env, **settings.env}
    approved = project_approval(McpApproval.of(settings), cwd, full_env)
    warnings: list[str] = []
    timeouts = timeouts_from_env(full_env, warnings)
    out: dict[str, str] = {}
    runnable: list[ServerConfig] = []
    for server in servers:
        if server.scope == "project" and not approved(server.name):
            out[server.name] = "not approved (project servers start once approved)"
            continue
        try:
            runnable.append(server.expanded(full_env))
        except ConfigError as exc:
            out[server.name] = f"✗ {exc}"
    from codeloop.mcp.connection import Connection

    connections = [
        Connection(s, env=full_env, cwd=cwd, timeouts=timeouts, auth=oauth_factory(full_env))
        for s in runnable
    ]
    try:
        await asyncio.gather(*(c.connect() for c in connections))
        for conn in connections:
            out[conn.name] = status_line(conn)
    finally:
        await asyncio.gather(*(c.aclose() for c in connections))
    return out


def status_line(conn: Connection) -> str:
    """How a server is doing, for `codeloop mcp list` and the UI's /mcp."""
    if conn.status == "connected":
        return f"✓ connected ({len(conn.tools)} tools)"
    if conn.status == "needs-auth":
        return f"⚠ needs login: codeloop mcp login {conn.name}"
    first, *rest = (conn.error or "failed").splitlines()
    return "\n".join([f"✗ failed: {first}", *rest])
