"""httpx's transport for the model clients: HTTP/1.1 on asyncio's streams, spoken by h11.

httpx's own transport (httpcore) reaches asyncio through anyio: importing that, at the first
request, is most of its cost (~45 ms of the first request's ~55 here, and ~2 MB with
httpcore), and anyio's stream layers add to every chunk of every answer after. A model client
needs little of httpcore: HTTP/1.1 to one origin, keep-alive, timeouts, TLS; this is that, on
the h11 protocol machine httpcore itself uses, with httpcore's exceptions (as httpx raises
them) so that the error taxonomy maps them unchanged. Through a proxy the client keeps
httpx's own transport, which knows how to talk to one (`proxied`).
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import SupportsIndex

import h11
import httpx

from codeloop.system.lull import background, lull

READ_SIZE = 64 * 1024
# Idle keep-alive connections kept per transport: one per request in flight at once is
# enough (sub-agents in parallel); more would only hold sockets the server will drop.
MAX_IDLE = 8
# RFC 8305's delay before the next address is tried when a host has several.
HAPPY_EYEBALLS_DELAY = 0.25
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")


def proxied(env: Mapping[str, str]) -> bool:
    """Whether httpx would send requests through a proxy the environment names."""
    return any(env.get(name) or env.get(name.upper()) for name in PROXY_VARIABLES)


class Http11Transport(httpx.AsyncBaseTransport):
    """Keep-alive HTTP/1.1 connections to the origins asked for, made on first use."""

    def __init__(self) -> None:
        self._ssl: ssl.SSLContext | None = None
        self._idle: list[_Connection] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        timeouts = request.extensions.get("timeout", {})
        origin = _origin(request.url)
        waits = background()  # connected and sent while a foreground request waits
        if waits:
            await lull().wait()
        connection = self._reusable(origin)
        if connection is None:
            connection = await self._connect(origin, timeouts.get("connect"))
            if waits:  # the lull may have ended while it connected
                await lull().wait()
        try:
            head = await connection.exchange(request, timeouts.get("write"), timeouts.get("read"))
        except BaseException:
            connection.close()
            raise
        return httpx.Response(
            head.status_code,
            headers=head.headers,
            stream=_Body(connection, self._release, timeouts.get("read")),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": head.reason},
        )

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()

    def _reusable(self, origin: _Origin) -> _Connection | None:
        """An idle connection to `origin` the server has not closed meanwhile."""
        loop = asyncio.get_running_loop()
        while self._idle:
            connection = self._idle.pop()
            if connection.origin == origin and connection.alive(loop):
                return connection
            connection.close()
        return None

    def _release(self, connection: _Connection) -> None:
        if connection.next_cycle() and len(self._idle) < MAX_IDLE:
            self._idle.append(connection)
        else:
            connection.close()

    async def _connect(self, origin: _Origin, limit: float | None) -> _Connection:
        scheme, host, port = origin
        context = self._context() if scheme == "https" else None
        loop = asyncio.get_running_loop()
        reader = _Reader(limit=READ_SIZE, loop=loop)
        protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
        try:
            async with asyncio.timeout(limit):  # asyncio.open_connection, with our reader
                transport, _ = await loop.create_connection(
                    lambda: protocol,
                    host,
                    port,
                    ssl=context,
                    server_hostname=host if context is not None else None,
                    happy_eyeballs_delay=HAPPY_EYEBALLS_DELAY,
                )
        except TimeoutError as exc:
            raise httpx.ConnectTimeout(f"timed out connecting to {host}:{port}") from exc
        except (OSError, ssl.SSLError) as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__) from exc
        return _Connection(origin, reader, asyncio.StreamWriter(transport, protocol, reader, loop))

    def _context(self) -> ssl.SSLContext:
        """httpx's TLS settings (certifi, SSL_CERT_FILE, SSL_CERT_DIR), loaded once."""
        if self._ssl is None:
            self._ssl = httpx.create_ssl_context()
        return self._ssl


_Origin = tuple[str, str, int]


def _origin(url: httpx.URL) -> _Origin:
    port = url.port or (443 if url.scheme == "https" else 80)
    return url.scheme, url.host, port


class _Reader(asyncio.StreamReader):
    """A stream reader that says when data arrives (the foreground's wait then ends, before
    its task runs again: codeloop.system.lull)."""

    arrived: Callable[[], None] | None = None

    def feed_data(self, data: Iterable[SupportsIndex]) -> None:
        super().feed_data(data)
        if self.arrived is not None:
            self.arrived()

    def feed_eof(self) -> None:
        super().feed_eof()
        if self.arrived is not None:
            self.arrived()


class _Connection:
    """One socket and its h11 state machine: a request and its answer at a time."""

    def __init__(self, origin: _Origin, reader: _Reader, writer: asyncio.StreamWriter) -> None:
        self.origin = origin
        self._reader = reader
        self._writer = writer
        self._loop = asyncio.get_running_loop()
        self._h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=1024 * 1024)
        socket = writer.get_extra_info("socket")
        self._fd: int | None = socket.fileno() if socket is not None else None

    def alive(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Still open at our end and the server's, on the loop asking."""
        return (
            loop is self._loop
            and not self._writer.is_closing()
            and not self._reader.at_eof()
            and self._h11.our_state is h11.IDLE
        )

    async def exchange(
        self, request: httpx.Request, write_timeout: float | None, read_timeout: float | None
    ) -> h11.Response:
        """Send `request` and read the head of its answer."""
        target = request.url.raw_path
        head = h11.Request(method=request.method, target=target, headers=request.headers.raw)
        try:
            async with asyncio.timeout(write_timeout):
                self._send(head)
                async for chunk in request.stream:  # type: ignore[union-attr]
                    self._send(h11.Data(data=chunk))
                self._send(h11.EndOfMessage())
                await self._writer.drain()
        except TimeoutError as exc:
            raise httpx.WriteTimeout("timed out sending the request") from exc
        except OSError as exc:
            raise httpx.WriteError(str(exc) or type(exc).__name__) from exc
        except h11.LocalProtocolError as exc:
            raise httpx.LocalProtocolError(str(exc)) from exc
        event = await self.next_event(read_timeout)
        if not isinstance(event, h11.Response):  # h11 yields nothing else before a head
            raise httpx.RemoteProtocolError(f"unexpected {type(event).__name__} from the server")
        return event

    def _send(self, event: h11.Event) -> None:
        data = self._h11.send_with_data_passthrough(event)
        if data:
            self._writer.writelines(data)

    async def next_event(self, read_timeout: float | None) -> h11.Event:
        """The next thing the server says, reading as much as that takes (1xx heads skipped)."""
        while True:
            try:
                event = self._h11.next_event()
            except h11.RemoteProtocolError as exc:
                raise httpx.RemoteProtocolError(str(exc)) from exc
            if event is h11.NEED_DATA:
                await self._receive(read_timeout)
            elif isinstance(event, type):  # PAUSED: only past an answer's end, unread
                raise httpx.RemoteProtocolError("the server sent more than its answer")
            elif not isinstance(event, h11.InformationalResponse):
                return event

    async def _receive(self, read_timeout: float | None) -> None:
        """Read what the server sent. A foreground request waits in a lull
        (codeloop.system.lull); a background one reads what came only in a lull."""
        try:
            async with asyncio.timeout(read_timeout):
                if background():
                    data = await self._reader.read(READ_SIZE)
                else:
                    with lull().reading(self._fd) as wait:
                        self._reader.arrived = wait.end if wait is not None else None
                        data = await self._reader.read(READ_SIZE)
        except TimeoutError as exc:
            raise httpx.ReadTimeout("timed out waiting for the server") from exc
        except OSError as exc:
            raise httpx.ReadError(str(exc) or type(exc).__name__) from exc
        if background():
            await lull().wait()
        if not data and self._h11.their_state is h11.SEND_RESPONSE:
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        self._h11.receive_data(data)  # b"": the server closed its end (next_event judges it)

    def next_cycle(self) -> bool:
        """Ready the connection for another request, if the answer left it reusable."""
        if self._h11.our_state is h11.DONE and self._h11.their_state is h11.DONE:
            self._h11.start_next_cycle()
            return True
        return False

    def close(self) -> None:
        if not self._loop.is_closed():
            self._writer.close()


class _Body(httpx.AsyncByteStream):
    """The answer's body as it arrives; its connection goes back to the pool once read to
    the end, and is closed when the reader stops before."""

    def __init__(
        self,
        connection: _Connection,
        release: Callable[[_Connection], None],
        read_timeout: float | None,
    ) -> None:
        self._connection: _Connection | None = connection
        self._release = release
        self._read_timeout = read_timeout
        self._complete = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        connection = self._connection
        if connection is None:
            return
        while True:
            event = await connection.next_event(self._read_timeout)
            if isinstance(event, h11.Data):
                yield bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                self._complete = True
                return
            else:
                raise httpx.RemoteProtocolError("the server closed the connection mid-answer")

    async def aclose(self) -> None:
        connection, self._connection = self._connection, None
        if connection is None:
            return
        if self._complete:
            self._release(connection)
        else:
            connection.close()
