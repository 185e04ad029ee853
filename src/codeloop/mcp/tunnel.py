"""An MCP server that lives in another program and is reached through a message tunnel: the
Agent SDK's in-process servers (`{"type": "sdk"}` in --mcp-config). Each JSON-RPC message the
client session writes goes out through the tunnel (the SDK frontend sends it as an
`mcp_message` control request) and the answer is fed back as if a transport had read it, so
the server is a Connection like any other: same handshake, tools, timeouts and errors.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
from mcp import types
from mcp.shared.message import SessionMessage

# (server name, a JSON-RPC message) -> the JSON-RPC answer (None, or any object without an
# id, for a notification). Raising fails the request with the error's text.
Tunnel = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]


@contextlib.asynccontextmanager
async def tunnel_transport(tunnel: Tunnel, server: str) -> AsyncIterator[tuple[Any, Any]]:
    """(read stream, write stream) for a ClientSession; requests travel concurrently."""
    to_client, client_reads = anyio.create_memory_object_stream[SessionMessage | Exception](32)
    client_writes, from_client = anyio.create_memory_object_stream[SessionMessage](32)

    async def forward(message: SessionMessage) -> None:
        data = message.message.model_dump(by_alias=True, mode="json", exclude_none=True)
        request_id = data.get("id") if "method" in data else None
        try:
            answer = await tunnel(server, data)
        except Exception as exc:
            if request_id is None:
                return
            error = {"code": types.INTERNAL_ERROR, "message": str(exc) or type(exc).__name__}
            answer = {"jsonrpc": "2.0", "id": request_id, "error": error}
        if request_id is None or not isinstance(answer, dict):
            return
        answer = {**answer, "id": answer.get("id", request_id)}
        try:
            parsed = types.JSONRPCMessage.model_validate(answer)
        except ValueError as exc:
            await to_client.send(exc)
            return
        await to_client.send(SessionMessage(parsed))

    async def pump(group: anyio.abc.TaskGroup) -> None:
        async with from_client:
            async for message in from_client:
                group.start_soon(forward, message)

    async with anyio.create_task_group() as group, to_client, client_reads, client_writes:
        group.start_soon(pump, group)
        try:
            yield client_reads, client_writes
        finally:
            group.cancel_scope.cancel()
