"""The one gate before every route (the page, its static files, /acp): the Host must be this
server's own (DNS rebinding), a browser's Origin must be this server's origin (another site's
page), and the token must come along, as `Authorization: Bearer`, `?token=` or the cookie a
`/?token=` visit sets. Refusals are plain HTTP answers, for a WebSocket handshake too (never an
accepted socket closed afterwards). The token is compared in constant time and never logged."""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


class Guard:
    def __init__(self, app: App, token: str, port: int, names: tuple[str, ...] = ()) -> None:
        """`names`: the host names a non-loopback server is also reached by (besides the
        loopback ones); "*" accepts any IP address (a server on 0.0.0.0 or ::), never a DNS
        name, which is what rebinding needs."""
        self.app = app
        self.token = token.encode()
        self.port = port
        self.hosts = {f"{name}:{port}" for name in (*LOOPBACK_NAMES, *names) if name != "*"}
        self.any_address = "*" in names
        self.cookie = f"codeloop_token_{port}"  # cookies ignore ports: one per server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        host = headers.get("host", "")
        if not self._own_host(host):
            await _refuse(scope, receive, send, 421, "not this server's Host (DNS rebinding?)")
            return
        origin = headers.get("origin")
        if origin is not None and origin != f"http://{host}":
            await _refuse(scope, receive, send, 403, "a page of another origin")
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        from_query = query.get("token", [""])[-1]
        if not self._holds_token(headers, from_query):
            await _refuse(scope, receive, send, 401, "the token is missing or wrong")
            return
        if scope["type"] == "http" and from_query and self._matches(from_query):
            send = self._setting_cookie(send)
        await self.app(scope, receive, send)

    def _own_host(self, host: str) -> bool:
        if host in self.hosts:
            return True
        if not self.any_address or not host.endswith(f":{self.port}"):
            return False
        name = host.removesuffix(f":{self.port}").strip("[]")
        try:
            ipaddress.ip_address(name)
        except ValueError:
            return False
        return True

    def _holds_token(self, headers: dict[str, str], from_query: str) -> bool:
        bearer = headers.get("authorization", "")
        scheme, _, given = bearer.partition(" ")
        cookies = SimpleCookie()
        try:
            cookies.load(headers.get("cookie", ""))
        except Exception:  # a malformed Cookie header holds no token
            cookies = SimpleCookie()
        from_cookie = cookies[self.cookie].value if self.cookie in cookies else ""
        candidates = (given if scheme.lower() == "bearer" else "", from_query, from_cookie)
        return any(self._matches(c) for c in candidates if c)

    def _matches(self, given: str) -> bool:
        return hmac.compare_digest(given.encode(), self.token)

    def _setting_cookie(self, send: Send) -> Send:
        """The page's later requests (its scripts, styles, the WebSocket) carry the token
        without it being in their URLs."""
        cookie = (
            f"{self.cookie}={self.token.decode()}; Path=/; HttpOnly; SameSite=Strict"
        ).encode()

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie)]
            await send(message)

        return sending


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, why: str) -> None:
    body = f"codeloop serve: {status} {why}\n".encode()
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
    ]
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        return
    await receive()  # websocket.connect
    if "websocket.http.response" in scope.get("extensions", {}):
        await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": body})
    else:  # the server answers 403 to a handshake closed before it was accepted
        await send({"type": "websocket.close", "code": 1008})
