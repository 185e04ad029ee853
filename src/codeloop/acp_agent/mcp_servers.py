"""The MCP servers an editor passes in `session/new` as codeloop's server configurations: they
start with the session, beside the project's own (.mcp.json, the user's, plugins')."""

from __future__ import annotations

from collections.abc import Sequence

from acp import schema

from codeloop.mcp.server_config import ServerConfig

EditorServer = (
    schema.HttpMcpServer | schema.SseMcpServer | schema.McpServerStdio | schema.AcpMcpServer
)


def server_configs(servers: Sequence[EditorServer]) -> tuple[list[ServerConfig], list[str]]:
    """The configurations, and a warning for each server codeloop cannot start."""
    configs: list[ServerConfig] = []
    skipped: list[str] = []
    for server in servers:
        match server:
            case schema.McpServerStdio():
                configs.append(
                    ServerConfig(
                        server.name,
                        "stdio",
                        command=server.command,
                        args=tuple(server.args),
                        env={e.name: e.value for e in server.env},
                        scope="editor",
                    )
                )
            case schema.HttpMcpServer() | schema.SseMcpServer():
                configs.append(
                    ServerConfig(
                        server.name,
                        server.type,
                        url=server.url,
                        headers={h.name: h.value for h in server.headers},
                        scope="editor",
                    )
                )
            case _:
                skipped.append(f"MCP server {server.name!r}: its transport is not supported")
    return configs, skipped
