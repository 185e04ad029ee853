"""A session's MCP servers: started together, offered as tools, closed together.

`start` connects every server at once, each within MCP_TIMEOUT, so the first model request
waits at most that long; the SDK itself (over a second to import) loads in a thread meanwhile.
`tools` is a live mapping the session lays over its built-ins: it changes when a server's
`list_changed` notification arrives, and `offered` (awaited before each request) gives
what the model sees, with tool search applied.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from codeloop.mcp.elicit import Elicitations
from codeloop.mcp.names import SEARCH_TOOL
from codeloop.mcp.server_config import ServerConfig, Timeouts
from codeloop.mcp.tool_search import SearchMode, ToolSearchTool
from codeloop.models.base import ToolSpec
from codeloop.system.valueclass import valueclass
from codeloop.tools.base import AnyTool

if TYPE_CHECKING:
    from codeloop.mcp.connection import AuthFactory, Connection
    from codeloop.mcp.tunnel import Tunnel


@valueclass
class ServerStatus:
    name: str
    status: str
    error: str | None
    tools: tuple[str, ...]
    scope: str
    transport: str = "stdio"


class McpManager:
    def __init__(
        self,
        configs: Sequence[ServerConfig],
        *,
        env: Mapping[str, str],
        cwd: Path,
        timeouts: Timeouts | None = None,
        window: int = 200_000,
        search: SearchMode | None = None,
        auth: AuthFactory | None = None,
        tunnel: Tunnel | None = None,
    ) -> None:
        self.configs = list(configs)
        self._tunnel = tunnel
        self._env = env
        self._cwd = cwd
        self._timeouts = timeouts
        self.window = window
        self.search = search or SearchMode()
        self._auth = auth
        self.connections: dict[str, Connection] = {}
        # Live: the session's tool mapping reads it, so changes show from the next request on.
        self.tools: dict[str, AnyTool] = {}
        # What the model may see: the session sets its own view (its built-ins with these,
        # less what its deny rules withhold), which requests and tool search read.
        self.visible: Mapping[str, AnyTool] = self.tools
        self.deferred = False
        # The servers' own tools (not the resource or search tools): name -> server.
        self._server_tools: dict[str, str] = {}
        self._loaded: set[str] = set()
        self.notices: list[str] = []
        # Servers asking the user for input: the session gives it its hooks, a UI its `ask`.
        self.elicitations = Elicitations(notices=self.notices)
        self._started: asyncio.Task[None] | None = None

    # --- starting --------------------------------------------------------------------------

    def begin(self) -> None:
        """Start connecting every server in the background (once): the session's builder does
        it before gathering the prompt context, so the two overlap."""
        if self._started is None:
            self._started = asyncio.ensure_future(self._start_all())

    async def start(self) -> None:
        """Connect every server (once; later calls wait for the first)."""
        self.begin()
        assert self._started is not None
        await asyncio.shield(self._started)

    async def _start_all(self) -> None:
        connection = await asyncio.to_thread(importlib.import_module, "codeloop.mcp.connection")
        timeouts = self._timeouts or Timeouts()
        for config in self.configs:
            self.connections[config.name] = connection.Connection(
                config,
                env=self._env,
                cwd=self._cwd,
                timeouts=timeouts,
                auth=self._auth,
                on_change=self._changed,
                tunnel=self._tunnel,
                elicit=self.elicitations.answer,
            )
        await asyncio.gather(*(c.connect() for c in self.connections.values()))
        for conn in self.connections.values():
            if conn.status == "failed":
                self.notices.append(f"MCP server {conn.name} failed to start: {conn.error}")
            elif conn.status == "needs-auth":
                self.notices.append(
                    f"MCP server {conn.name} needs you to log in ({conn.error}): run "
                    f"`codeloop mcp login {conn.name}`"
                )
        self._rebuild()

    def _changed(self, _: Connection) -> None:
        self._rebuild()

    def _rebuild(self) -> None:
        from codeloop.mcp.tools import ListResourcesTool, McpTool, ReadResourceTool

        tools: dict[str, AnyTool] = {}
        mcp_specs: list[ToolSpec] = []
        server_tools: dict[str, str] = {}
        for conn in self.connections.values():
            if not conn.connects:
                continue  # never came up: nothing to offer
            for tool in conn.tools:
                adapted = McpTool(conn, tool)
                tools[adapted.name] = adapted
                server_tools[adapted.name] = conn.name
                mcp_specs.append(adapted.spec())
        if any(c.capabilities and c.capabilities.resources for c in self.connections.values()):
            tools["ListMcpResourcesTool"] = ListResourcesTool(self._resource_servers)
            tools["ReadMcpResourceTool"] = ReadResourceTool(self._resource_servers)
        self.deferred = self.search.defers(mcp_specs, self.window)
        if self.deferred:
            tools[SEARCH_TOOL] = ToolSearchTool(self._deferred_specs, self._loaded.update)
        self._server_tools = server_tools
        self.tools.clear()
        self.tools.update(tools)

    def _resource_servers(self) -> dict[str, Connection]:
        return {
            name: c
            for name, c in self.connections.items()
            if c.connects and c.capabilities and c.capabilities.resources
        }

    def _deferred_specs(self) -> list[ToolSpec]:
        return [t.spec() for name, t in self.visible.items() if name in self._server_tools]

    # --- what the model sees ---------------------------------------------------------------

    def offered(self) -> Callable[[], Awaitable[list[ToolSpec]]]:
        """For LoopParams: before every request, the specs of the visible tools as they are
        then, with tool search on less the servers' tools it has not loaded. Waits for list
        refreshes already under way."""

        async def specs() -> list[ToolSpec]:
            await asyncio.gather(*(c.settled() for c in self.connections.values()))
            return [
                tool.spec()
                for name, tool in self.visible.items()
                if not (self.deferred and name in self._server_tools and name not in self._loaded)
            ]

        return specs

    async def reconnect(self, name: str) -> None:
        """Start one server again; its tools are offered anew from the next request."""
        await self.start()
        await self.connections[name].restart()
        self._rebuild()

    def statuses(self) -> list[ServerStatus]:
        out = []
        for config in self.configs:
            conn = self.connections.get(config.name)
            status = conn.status if conn else "pending"
            tools = tuple(t for t, server in self._server_tools.items() if server == config.name)
            error = conn.error if conn else None
            out.append(
                ServerStatus(config.name, status, error, tools, config.scope, config.transport)
            )
        return out

    def take_notices(self) -> list[str]:
        notices = list(self.notices)
        self.notices.clear()  # the same list the elicitations add to
        return notices

    async def aclose(self) -> None:
        if self._started is not None and not self._started.done():
            self._started.cancel()
            await asyncio.gather(self._started, return_exceptions=True)
        await asyncio.gather(*(c.aclose() for c in self.connections.values()))
