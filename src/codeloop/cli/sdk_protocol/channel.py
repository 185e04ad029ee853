"""The control channel to the SDK: requests codeloop sends (can_use_tool, hook_callback,
mcp_message), each waiting for the SDK's matching control_response, and the responses
codeloop gives to the SDK's own requests.

A request never waits forever: its caller bounds the wait (the permission prompt's and the
hooks' time limits, the MCP timeouts), a wait given up cancels it (with a
control_cancel_request), and it fails at once when the SDK has closed its side. Failures
are ControlError, whose message says what happened.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
from collections.abc import Callable
from typing import Any

Emit = Callable[[dict[str, Any]], None]


class ControlError(Exception):
    """The SDK answered with an error, did not answer in time, or can no longer answer."""


class Channel:
    def __init__(self, emit: Emit) -> None:
        self.emit = emit
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._closed: str | None = None

    async def request(self, subtype: str, fields: dict[str, Any]) -> dict[str, Any]:
        """Send one request and wait for its answer (the `response` object of a success).
        The caller bounds the wait; a cancelled wait cancels the request."""
        if self._closed is not None:
            raise ControlError(self._closed)
        request_id = f"codeloop_{next(self._ids)}_{secrets.token_hex(4)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self.emit(
            {
                "type": "control_request",
                "request_id": request_id,
                "request": {"subtype": subtype, **fields},
            }
        )
        try:
            return await future
        except asyncio.CancelledError:
            self._cancel(request_id)
            raise
        finally:
            self._pending.pop(request_id, None)

    def _cancel(self, request_id: str) -> None:
        if self._closed is None:
            self.emit({"type": "control_cancel_request", "request_id": request_id})

    def answered(self, response: Any) -> str | None:
        """A control_response from the SDK; a problem with it, for the user, or None."""
        if not isinstance(response, dict):
            return "a control_response without a response object"
        request_id = response.get("request_id")
        future = self._pending.get(str(request_id))
        if future is None or future.done():
            return None  # answered after its time ran out, or never ours: nothing waits
        if response.get("subtype") == "error":
            future.set_exception(ControlError(str(response.get("error") or "error")))
        else:
            answer = response.get("response")
            future.set_result(answer if isinstance(answer, dict) else {})
        return None

    def close(self, why: str) -> None:
        """The SDK closed its side: every request waiting fails, and so does every new one."""
        self._closed = why
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ControlError(why))

    def success(self, request_id: str, response: dict[str, Any] | None = None) -> None:
        self.emit(
            {
                "type": "control_response",
                "response": {
                    "subtype": "success",
                    "request_id": request_id,
                    "response": response or {},
                },
            }
        )

    def error(self, request_id: str, message: str, code: str | None = None) -> None:
        body: dict[str, Any] = {"subtype": "error", "request_id": request_id, "error": message}
        if code is not None:
            body["error_code"] = code
        self.emit({"type": "control_response", "response": body})
