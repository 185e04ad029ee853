"""One MCP server, through the SDK's ClientSession, kept alive in a task of its own.

anyio's cancel scopes must be entered and left in one task, so each connection runs its
transport and session inside a runner task and other tasks send it requests. Connecting has a
deadline (MCP_TIMEOUT): past it the attempt is abandoned and the server shut down in the
background, so the session never waits longer. A server that dies (a crash, a closed
connection) fails the calls in flight with ServerLost; the next use starts it again. This
module imports the SDK: import it only when a server is configured.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import IO, Any, Literal

import anyio
import httpx
from mcp import ClientSession, types
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError

from codeloop._version import __version__
from codeloop.mcp.headers import HeadersHelperError, helper_headers
from codeloop.mcp.server_config import ServerConfig, Timeouts
from codeloop.mcp.tunnel import Tunnel, tunnel_transport
from codeloop.system.procs import child_env

Status = Literal["pending", "connected", "failed", "needs-auth"]
STDERR_TAIL_LINES = 12
CLOSE_GRACE_SECONDS = 5.0
CLIENT_INFO = types.Implementation(name="codeloop", version=__version__)

# The SDK logs transport errors with tracebacks; the user sees them as our messages instead.
logging.getLogger("mcp").addHandler(logging.NullHandler())
logging.getLogger("mcp").propagate = False

AuthFactory = Callable[[ServerConfig], "httpx.Auth | None"]
Changed = Callable[["Connection"], None]
# (server name, the request) -> the answer; elicit.py's Elicitations.answer.
Elicit = Callable[[str, types.ElicitRequestParams], Awaitable[types.ElicitResult]]


class ServerLost(Exception):
    """The server went away while a request was in flight (it crashed, or the connection
    closed); the message says how, with what it last wrote to stderr."""


class NeedsLogin(Exception):
    """A remote server asked for OAuth and this session cannot open a browser."""


class Connection:
    def __init__(
        self,
        config: ServerConfig,
        *,
        env: Mapping[str, str],
        cwd: Path,
        timeouts: Timeouts,
        auth: AuthFactory | None = None,
        on_change: Changed | None = None,
        tunnel: Tunnel | None = None,
        elicit: Elicit | None = None,
    ) -> None:
        self.config = config
        # How an "sdk" server is reached: through the program that drives this session.
        self._tunnel = tunnel
        self._elicit = elicit
        self.name = config.name
        self._env = env
        self._cwd = cwd
        self.timeouts = timeouts
        self._auth = auth
        self._on_change = on_change
        self.status: Status = "pending"
        self.error: str | None = None
        self.tools: list[types.Tool] = []
        self.prompts: list[types.Prompt] = []
        self.capabilities: types.ServerCapabilities | None = None
        self.instructions: str | None = None
        self.server_info: types.Implementation | None = None
        self.connects = 0  # successful connections: more than one means it was restarted
        self._session: ClientSession | None = None
        self._runner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._scope: anyio.CancelScope | None = None
        self._stderr: IO[bytes] | None = None
        self._lock = asyncio.Lock()
        self._background: set[asyncio.Task[None]] = set()

    # --- connecting ------------------------------------------------------------------------

    async def connect(self) -> None:
        """Start the server and initialize it, within the connect timeout; never raises: the
        outcome is `status` and `error`."""
        async with self._lock:
            if self.status == "connected":
                return
            await self._shutdown()
            self.status, self.error = "pending", None
            ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            ready.add_done_callback(_retrieved)
            self._stop = asyncio.Event()
            self._runner = asyncio.create_task(self._run(ready), name=f"mcp:{self.name}")
            try:
                await asyncio.wait_for(asyncio.shield(ready), self.timeouts.connect)
            except TimeoutError:
                self._failed(f"did not answer within {self.timeouts.connect:g} s")
                self._abandon()
            except NeedsLogin as exc:
                self.status, self.error = "needs-auth", str(exc)
            except BaseException as exc:  # whatever the transport raised: it becomes a message
                if isinstance(exc, asyncio.CancelledError):
                    self._abandon()
                    raise
                self._failed(describe(exc))

    async def restart(self) -> None:
        """Stop the server, if it runs, and start it again (the UI's /mcp)."""
        self.status = "pending"
        await self.connect()

    async def _run(self, ready: asyncio.Future[None]) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                extra = await self._helper_headers()
                read, write = await stack.enter_async_context(self._transport(extra))
                session = await stack.enter_async_context(
                    ClientSession(
                        read,
                        write,
                        message_handler=self._on_message,
                        client_info=CLIENT_INFO,
                        elicitation_callback=self._elicitation if self._elicit else None,
                    )
                )
                with anyio.CancelScope() as scope:
                    self._scope = scope
                    init = await session.initialize()
                    await self._load(session, init)
                    self._session = session
                    self.status = "connected"
                    self.connects += 1
                    ready.set_result(None)
                    await self._stop.wait()
        except BaseException as exc:
            failure = _leaf(exc)
            if not ready.done() and not isinstance(failure, asyncio.CancelledError):
                ready.set_exception(failure)
            elif self.status == "connected" and not self._stop.is_set():
                self._failed(f"the connection closed: {describe(failure)}")
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self._session = None
            if self.status == "connected":
                self.status = "failed"
                self.error = self.error or "disconnected"

    async def _helper_headers(self) -> dict[str, str]:
        """The headers a `headersHelper` makes for this connection (none without one)."""
        if not self.config.remote or self.config.headers_helper is None:
            return {}
        return await helper_headers(self.config, self._env, self._cwd)

    def _transport(
        self, extra_headers: Mapping[str, str]
    ) -> contextlib.AbstractAsyncContextManager[tuple[Any, Any]]:
        config = self.config
        if config.transport == "sdk":
            if self._tunnel is None:
                raise ServerLost(
                    f"{config.name} is an SDK server: only an Agent SDK driving codeloop can "
                    "serve it"
                )
            return tunnel_transport(self._tunnel, config.name)
        if config.transport == "stdio":
            # Kept open for the connection's life (its tail explains failures); closed by
            # _shutdown.
            self._stderr = tempfile.TemporaryFile()  # noqa: SIM115
            params = StdioServerParameters(
                command=config.command,
                args=list(config.args),
                env={**child_env(self._env), **config.env},  # the config's own OTEL_* kept
                cwd=config.cwd or str(self._cwd),
            )
            return stdio_client(params, errlog=self._stderr)  # type: ignore[arg-type]
        auth = self._auth(config) if self._auth else None
        headers = {**config.headers, **extra_headers}  # the helper's win
        if config.transport == "sse":
            return sse_client(config.url, headers=headers, auth=auth, timeout=self.timeouts.connect)
        return _streamable(config.url, headers, auth, self.timeouts.connect)

    async def _load(self, session: ClientSession, init: types.InitializeResult) -> None:
        self.capabilities = init.capabilities
        self.instructions = init.instructions
        self.server_info = init.serverInfo
        caps = init.capabilities
        self.tools = await every(session.list_tools, "tools") if caps.tools else []
        self.prompts = await every(session.list_prompts, "prompts") if caps.prompts else []

    def _failed(self, why: str) -> None:
        self.status = "failed"
        tail = self.stderr_tail()
        self.error = f"{why}\n{tail}" if tail else why

    def stderr_tail(self) -> str:
        """The last lines a stdio server wrote to stderr ('' for remote servers)."""
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            size = self._stderr.seek(0, 2)
            self._stderr.seek(max(0, size - 4096))
            text = self._stderr.read().decode("utf-8", errors="replace")
        except (OSError, ValueError):
            return ""
        lines = [line for line in text.splitlines() if line.strip()][-STDERR_TAIL_LINES:]
        return "\n".join(f"  stderr: {line}" for line in lines)

    # --- notifications ---------------------------------------------------------------------

    async def _on_message(self, message: Any) -> None:
        """The session's receive loop calls this in order; it must not wait on the server."""
        if not isinstance(message, types.ServerNotification):
            return
        lists = types.ToolListChangedNotification | types.PromptListChangedNotification
        if isinstance(message.root, lists):
            task = asyncio.create_task(self._refresh(), name=f"mcp:{self.name}:refresh")
            self._background.add(task)
            task.add_done_callback(self._background.discard)
        elif isinstance(message.root, types.ResourceListChangedNotification) and self._on_change:
            self._on_change(self)

    async def _elicitation(
        self, context: Any, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        assert self._elicit is not None
        try:
            return await self._elicit(self.name, params)
        except Exception as exc:  # a failing hook must not leave the server waiting
            return types.ErrorData(code=types.INTERNAL_ERROR, message=describe(exc))

    async def _refresh(self) -> None:
        session = self._session
        if session is None or self.capabilities is None:
            return
        with contextlib.suppress(Exception):  # a failed refresh keeps the lists it had
            async with asyncio.timeout(self.timeouts.connect):
                if self.capabilities.tools:
                    self.tools = await every(session.list_tools, "tools")
                if self.capabilities.prompts:
                    self.prompts = await every(session.list_prompts, "prompts")
        if self._on_change:
            self._on_change(self)

    async def settled(self) -> None:
        """Wait for list refreshes that notifications started and cancellations being sent
        (each bounded by the timeout)."""
        while self._background:
            await asyncio.gather(*self._background, return_exceptions=True)

    # --- requests --------------------------------------------------------------------------

    async def session(self) -> ClientSession:
        """The live session, starting the server again if it died since it was last used."""
        if self.status != "connected" or self._session is None:
            await self.connect()
            if self._on_change:
                self._on_change(self)
        if self._session is None:
            raise ServerLost(f"MCP server {self.name} is not available: {self.error}")
        return self._session

    async def request(
        self,
        call: Callable[[ClientSession], Awaitable[Any]],
        *,
        limit: float | None,
        what: str,
    ) -> Any:
        """Run one request; a timeout, a crash or a lost connection raises ServerLost (and a
        dead server is started again by the next request)."""
        session = await self.session()
        # The id the SDK gives the request `call` sends first (it numbers them in order and
        # does not expose it), so the server can be told to stop working on it.
        request_id = session._request_id
        try:
            async with asyncio.timeout(limit):
                return await call(session)
        except asyncio.CancelledError:  # interrupted (Ctrl+C, the run stopped)
            self._cancel(session, request_id, "interrupted by the user")
            raise
        except TimeoutError:
            self._cancel(session, request_id, f"timed out after {limit:g} s")
            raise ServerLost(
                f"{what} timed out: MCP server {self.name} did not answer within {limit:g} s "
                "(MCP_TOOL_TIMEOUT sets the limit, in milliseconds)"
            ) from None
        except McpError as exc:
            if exc.error.code != types.CONNECTION_CLOSED:
                raise
            self._lost(exc)
            raise ServerLost(self._lost_message(what)) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, httpx.TransportError) as exc:
            self._lost(exc)
            raise ServerLost(self._lost_message(what)) from None

    def _cancel(self, session: ClientSession, request_id: int, reason: str) -> None:
        """`notifications/cancelled` for a request we stopped waiting for, sent in the
        background (the caller may itself be cancelled); a server already gone is ignored."""

        async def send() -> None:
            note = types.CancelledNotification(
                params=types.CancelledNotificationParams(requestId=request_id, reason=reason)
            )
            with contextlib.suppress(Exception):
                async with asyncio.timeout(self.timeouts.connect):
                    await session.send_notification(types.ClientNotification(note))

        task = asyncio.create_task(send(), name=f"mcp:{self.name}:cancel")
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _lost(self, exc: BaseException) -> None:
        if self.status == "connected":
            self._failed(f"the connection closed: {describe(exc)}")
        self._stop.set()

    def _lost_message(self, what: str) -> str:
        detail = f"\n{self.stderr_tail()}" if self.stderr_tail() else ""
        return (
            f"{what} failed: MCP server {self.name} stopped answering (it crashed or closed "
            f"the connection); it will be started again on its next use.{detail}"
        )

    # --- closing ---------------------------------------------------------------------------

    def _abandon(self) -> None:
        """Stop a connection attempt that ran out of time; it shuts down in the background."""
        if self._scope is not None:
            self._scope.cancel()
        elif self._runner is not None:
            self._runner.cancel()

    async def _shutdown(self) -> None:
        runner, self._runner = self._runner, None
        if runner is None:
            return
        self._stop.set()
        if self._scope is not None:
            self._scope.cancel()
        self._scope = None
        try:
            await asyncio.wait_for(asyncio.shield(runner), CLOSE_GRACE_SECONDS)
        except TimeoutError:
            runner.cancel()
            await asyncio.gather(runner, return_exceptions=True)
        except BaseException:
            pass
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    async def aclose(self) -> None:
        for task in list(self._background):
            task.cancel()
        await self._shutdown()


@contextlib.asynccontextmanager
async def _streamable(
    url: str, headers: dict[str, str], auth: httpx.Auth | None, connect_seconds: float
) -> AsyncIterator[tuple[Any, Any]]:
    client = httpx.AsyncClient(
        headers=headers,
        auth=auth,
        timeout=httpx.Timeout(connect_seconds, read=300.0),
        follow_redirects=True,
    )
    async with client, streamable_http_client(url, http_client=client) as (read, write, _):
        yield read, write


async def every(list_page: Callable[..., Awaitable[Any]], field: str) -> list[Any]:
    """All pages of a paginated list request (tools, prompts, resources)."""
    items: list[Any] = []
    cursor: str | None = None
    while True:
        page = await list_page(cursor=cursor)
        items += getattr(page, field)
        cursor = page.nextCursor
        if not cursor:
            return items


def _retrieved(future: asyncio.Future[None]) -> None:
    """A connection attempt nobody waits for any more must not log 'never retrieved'."""
    if not future.cancelled():
        future.exception()


def _leaf(exc: BaseException) -> BaseException:
    """The error that matters inside anyio's exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        exc = (inner or list(exc.exceptions))[0]
    return exc


def describe(exc: BaseException) -> str:
    """One line a person can act on, for any error a transport raises."""
    exc = _leaf(exc)
    if isinstance(exc, HeadersHelperError):  # its message says it all
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, PermissionError):
        return f"cannot run {exc.filename or 'the command'}: permission denied"
    if isinstance(exc, McpError):
        if exc.error.code == types.CONNECTION_CLOSED:
            return "the server closed the connection (it exited?)"
        return exc.error.message
    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code} from {exc.request.url}"
    if isinstance(exc, httpx.ConnectError):
        return f"cannot connect: {exc}"
    if isinstance(exc, httpx.TransportError):
        return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
