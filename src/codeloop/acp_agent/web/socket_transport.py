"""One WebSocket as the SDK's message transport (`acp._transport.Transport`): JSON-RPC text
frames in; out through a bounded queue of its own, so sending to a client never waits on its
network. A client that falls SEND_QUEUE messages behind is cut off (and told why), never waited
for: the sessions it watches go on for everyone else."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

log = logging.getLogger("codeloop.serve")

# Messages a client may fall behind before it is dropped (the SDK's own per-connection queue
# holds as many, but blocks the agent instead).
SEND_QUEUE = 1024
# WebSocket close code for a client dropped for reading too slowly: "try again later".
TOO_SLOW = 1013
TOO_SLOW_REASON = f"fell {SEND_QUEUE} messages behind; reconnect and load the session"


class SocketTransport:
    def __init__(self, websocket: WebSocket) -> None:
        self._socket = websocket
        self._outbox: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(maxsize=SEND_QUEUE)
        self._closed = False
        self.stalled = asyncio.Event()

    async def send(self, message: dict[str, Any]) -> None:
        """Queued, never awaited on the network; ConnectionError once the client is gone or
        stalled (the session then stops sending to it)."""
        if self._closed:
            raise ConnectionError("the client has gone")
        try:
            self._outbox.put_nowait(message)
        except asyncio.QueueFull:
            self._closed = True
            self.stalled.set()
            raise ConnectionError(f"the client {TOO_SLOW_REASON}") from None

    async def receive(self) -> dict[str, Any] | None:
        """The next JSON-RPC message; None when the client closed the socket."""
        while True:
            try:
                frame = await self._socket.receive()
            except (WebSocketDisconnect, RuntimeError):
                return None
            if frame["type"] == "websocket.disconnect":
                return None
            text = frame.get("text")
            if text is None:
                log.warning("a binary frame ignored (ACP speaks text frames)")
                continue
            try:
                message = json.loads(text)
            except ValueError:
                log.warning("a frame that is not JSON ignored")
                continue
            if isinstance(message, dict):
                return message
            log.warning("a frame that is not a JSON-RPC object ignored")

    async def close(self) -> None:
        self._closed = True
        with contextlib.suppress(asyncio.QueueFull):
            self._outbox.put_nowait(None)

    async def write(self) -> None:
        """Sends the queued messages, in order, until closed."""
        while (message := await self._outbox.get()) is not None:
            await self._socket.send_text(json.dumps(message, separators=(",", ":")))
