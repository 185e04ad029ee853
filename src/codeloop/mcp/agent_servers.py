"""A custom agent's own `mcpServers`, connected for that sub-agent, as Claude Code does.

Each entry is a server name (the session's server of that name: its tools join the agent's
even when its `tools:` list does not name them) or an inline definition `{name: entry}` in
`.mcp.json`'s shape, started when the sub-agent starts and closed when it ends, so its tool
schemas never weigh on the main conversation. Inline servers pass the same checks as the
session's: the organization's allow/deny lists, and for an agent file inside the project the
project approval (`enableAllProjectMcpServers` / `enabledMcpjsonServers`), since that file
comes with the repository. Every server that does not start is named to the user.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from codeloop.mcp.names import prefix
from codeloop.mcp.server_config import ConfigError, ServerConfig, Timeouts, parse_server
from codeloop.mcp.server_policy import McpPolicy
from codeloop.mcp.sources import McpApproval, approval_hint, project_approval
from codeloop.system.valueclass import valueclass
from codeloop.tools.base import AnyTool

Notify = Any  # (text) -> None: a warning for the user


@valueclass
class AgentMcp:
    """What starting an agent's servers needs from the session's configuration."""

    env: Mapping[str, str]
    cwd: Path
    approval: McpApproval
    policy: McpPolicy
    timeouts: Timeouts

    @contextlib.asynccontextmanager
    async def servers(
        self,
        agent: Any,
        session_tools: Mapping[str, AnyTool],
        notify: Notify,
    ) -> AsyncIterator[dict[str, AnyTool]]:
        """The agent's MCP tools while the block runs (an AgentDefinition `agent`)."""
        tools: dict[str, AnyTool] = {}
        inline: list[ServerConfig] = []
        where = f"agent {agent.name}"
        for entry in agent.mcp_servers:
            if isinstance(entry, str):
                found = {n: t for n, t in session_tools.items() if n.startswith(prefix(entry))}
                if not found:
                    notify(f"{where}: MCP server {entry} is not one of this session's servers")
                tools |= found
                continue
            for config in self._inline(agent, entry, notify):
                inline.append(config)
        if not inline:
            yield tools
            return
        from codeloop.mcp.server_manager import McpManager  # with a server to start only
        from codeloop.mcp.tool_search import SearchMode

        manager = McpManager(
            inline, env=self.env, cwd=self.cwd, timeouts=self.timeouts, search=SearchMode(None)
        )
        try:
            await manager.start()
            for text in manager.take_notices():
                notify(f"{where}: {text}")
            yield tools | manager.tools
        finally:
            await manager.aclose()

    def _inline(self, agent: Any, entry: Any, notify: Notify) -> list[ServerConfig]:
        where = f"agent {agent.name}"
        if not isinstance(entry, dict):
            notify(f"{where}: an mcpServers entry must be a server name or {{name: entry}}")
            return []
        in_project = self._in_project(agent.source)
        approved = project_approval(self.approval, self.cwd, self.env)
        configs = []
        for name, raw in entry.items():
            try:
                config, warnings = parse_server(str(name), raw, scope="agent", source=agent.source)
                config = config.expanded(self.env)
            except ConfigError as exc:
                notify(str(exc))
                continue
            for text in warnings:
                notify(text)
            if in_project and not approved(config.name):
                notify(
                    f"{where}: MCP server {config.name} was not started: servers that come "
                    f"with the project need approval; to approve, {approval_hint([config.name])}"
                )
                continue
            if (why := self.policy.blocked(config, self.env)) is not None:
                notify(f"{where}: MCP server {config.name} was not started: {why}")
                continue
            configs.append(config)
        return configs

    def _in_project(self, source: str) -> bool:
        """An agent file inside the working folder came with the repository."""
        try:
            Path(source).resolve().relative_to(self.cwd.resolve())
        except (ValueError, OSError):
            return False
        return True
