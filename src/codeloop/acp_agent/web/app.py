"""The server's routes, every one behind the guard: ACP at /acp (WebSocket, and the SDK's
streamable HTTP on the same path) and the web UI's static files at /."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import cast

from acp.agent.connection import AgentSideConnection
from acp.http.asgi import AcpAsgiApp
from acp.http.server import AcpServer
from acp.interfaces import Agent
from starlette.applications import Starlette
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket

from codeloop.acp_agent.web.guard import App, Guard
from codeloop.acp_agent.web.hub import Hub
from codeloop.acp_agent.web.socket_transport import TOO_SLOW, TOO_SLOW_REASON, SocketTransport

log = logging.getLogger("codeloop.serve")

STATIC = Path(__file__).parent / "static"


class Server:
    """The app and what it owns (the hub's sessions, the SDK's HTTP connections)."""

    def __init__(self, hub: Hub, token: str, port: int, names: tuple[str, ...]) -> None:
        self.hub = hub
        self.http = AcpServer(lambda connection: cast(Agent, hub.agent()))
        routes = [
            WebSocketRoute("/acp", self._socket),
            Route("/acp", AcpAsgiApp(self.http), methods=["GET", "POST", "DELETE"]),
            Mount("/", StaticFiles(directory=STATIC, html=True)),
        ]
        self.app: App = Guard(Starlette(routes=routes), token, port, names)

    async def _socket(self, websocket: WebSocket) -> None:
        """One client's ACP connection, until it closes (or falls too far behind)."""
        await websocket.accept()
        transport = SocketTransport(websocket)
        agent = self.hub.agent()
        connection = AgentSideConnection(cast(Agent, agent), transport, listening=False)
        tasks = {
            asyncio.ensure_future(transport.write()),
            asyncio.ensure_future(connection.listen()),
            stalled := asyncio.ensure_future(transport.stalled.wait()),
        }
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await agent.close_all()
            with contextlib.suppress(Exception):
                await connection.close()
        if stalled.done() and not stalled.cancelled():
            log.warning("a client dropped: it %s", TOO_SLOW_REASON)
            with contextlib.suppress(Exception):  # sent once it reads again (or pings time out)
                await websocket.close(TOO_SLOW, TOO_SLOW_REASON)

    async def close(self) -> None:
        await self.http.close()
        await self.hub.close()
