"""An MCP server built with the official SDK, for tests and benches: stdio, streamable HTTP or
SSE on 127.0.0.1, optionally behind OAuth (the SDK's own authorization-server helpers, with
an in-memory provider that approves every request, as a user clicking "allow" would).

    python -m codeloop.testing.mcp_server [--transport stdio|http|sse] [--url-file FILE]
        [--auth] [--token-seconds N] [--tools N] [--pid-file FILE] [--hang-initialize]

Over HTTP and SSE it prints its URL on stdout, one line, once it is listening.

Tools: echo, add, tiny_image, grow (adds a tool and notifies `list_changed`), crash (the
process kills itself mid-call), hang (never answers, unless the client cancels it), cancelled
(waits up to 10 s for a hang to be cancelled by the client's `notifications/cancelled`), ask
(asks the user through an elicitation), headers (what the HTTP
request carried), environment (variable names), and with --tools N, N generated ones.
Resource `notes://greeting`, template `notes://item/{item}`, prompt `review(file, focus)`.
"""

import argparse
import base64
import os
import secrets
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

# At the top, not in build(): FastMCP reads the tools' annotations from this module's globals.
import anyio
from mcp.server.fastmcp import Context, FastMCP, Image
from mcp.types import ToolAnnotations
from pydantic import BaseModel

TINY_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="
)


def build(name: str, extra_tools: int, auth: Any = None, auth_settings: Any = None) -> Any:
    server = FastMCP(
        name,
        instructions=f"{name}: a test server",
        auth_server_provider=auth,
        auth=auth_settings,
        log_level="WARNING",
    )
    read_only = ToolAnnotations(readOnlyHint=True)

    @server.tool(annotations=read_only)
    def echo(text: str) -> str:
        """Say the text back."""
        return f"{name} echoes: {text}"

    @server.tool(annotations=read_only)
    def add(a: int, b: int) -> str:
        """Add two whole numbers."""
        return str(a + b)

    @server.tool(annotations=read_only)
    def tiny_image() -> Image:
        """A one-pixel PNG."""
        return Image(data=TINY_PNG, format="png")

    @server.tool()
    async def grow(tool: str, ctx: Context) -> str:  # type: ignore[type-arg]
        """Add a tool named `tool` (it greets), and tell the client the list changed."""

        def greet() -> str:
            return f"{tool} from {name} says hi"

        server.add_tool(greet, name=tool, description=f"Greets, as {tool}")
        await ctx.session.send_tool_list_changed()
        return f"added {tool}"

    @server.tool()
    def crash() -> str:
        """Dies in the middle of the call."""
        os.kill(os.getpid(), signal.SIGKILL)
        return "unreachable"

    hang_cancelled = anyio.Event()

    @server.tool()
    async def hang() -> str:
        """Never answers."""
        try:
            await anyio.sleep_forever()
        finally:  # the client cancelled the request (or the server is closing)
            hang_cancelled.set()
        return "unreachable"

    @server.tool()
    async def cancelled() -> str:
        """Whether a hang call was cancelled by the client (waits for it up to 10 s)."""
        with anyio.move_on_after(10):
            await hang_cancelled.wait()
        return "hang was cancelled" if hang_cancelled.is_set() else "hang is still running"

    @server.tool()
    def headers(ctx: Context) -> str:  # type: ignore[type-arg]
        """The HTTP request's X-Test-Token, Authorization and X-Saw-Key headers."""
        request = ctx.request_context.request
        if request is None:
            return "no HTTP request"
        names = ("x-test-token", "authorization", "x-saw-key")
        return " ".join(f"{name}={request.headers.get(name)}" for name in names)

    @server.tool(annotations=read_only)
    def environment(prefix: str) -> str:
        """The names of this process's environment variables that start with `prefix`."""
        return " ".join(sorted(k for k in os.environ if k.startswith(prefix))) or "none"

    class Answer(BaseModel):
        answer: str

    @server.tool()
    async def ask(question: str, ctx: Context) -> str:  # type: ignore[type-arg]
        """Ask the user a question (an elicitation) and say what came back."""
        result = await ctx.elicit(question, Answer)
        if result.action == "accept":
            return f"the user answered: {result.data.answer}"
        return f"the user did not answer: {result.action}"

    for i in range(extra_tools):
        _generated(server, i)

    @server.resource("notes://greeting", mime_type="text/plain")
    def greeting() -> str:
        """A greeting."""
        return f"Hello from {name}"

    @server.resource("notes://item/{item}", mime_type="text/plain")
    def item(item: str) -> str:
        """One item."""
        return f"item {item} of {name}"

    @server.prompt()
    def review(file: str, focus: str = "bugs") -> str:
        """Ask for a review of a file."""
        return f"Please review {file}, looking for {focus}."

    return server


def _generated(server: Any, index: int) -> None:
    """A tool with a schema the size of a real one (bench: many tools)."""

    def run(query: str, limit: int = 10, cursor: str = "", include_archived: bool = False) -> str:
        return f"tool {index}: {query} (limit {limit})"

    server.add_tool(
        run,
        name=f"tool_{index:03d}",
        description=(
            f"Search collection number {index} for records matching a query. Returns up to "
            "`limit` records, newest first; pass the `cursor` of a previous page to go on, and "
            "`include_archived` to include records that were archived."
        ),
    )


class ApproveAll:
    """An OAuth authorization server kept in memory that approves every request."""

    def __init__(self, token_seconds: int) -> None:
        self.token_seconds = token_seconds
        self.clients: dict[str, Any] = {}
        self.codes: dict[str, Any] = {}
        self.access: dict[str, Any] = {}
        self.refresh: dict[str, Any] = {}

    async def get_client(self, client_id: str) -> Any:
        return self.clients.get(client_id)

    async def register_client(self, client_info: Any) -> None:
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: Any, params: Any) -> str:
        from mcp.server.auth.provider import AuthorizationCode, construct_redirect_uri

        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or ["mcp"],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: Any, authorization_code: str) -> Any:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(self, client: Any, authorization_code: Any) -> Any:
        self.codes.pop(authorization_code.code, None)
        return self._issue(client.client_id, authorization_code.scopes, "authorization_code")

    async def load_refresh_token(self, client: Any, refresh_token: str) -> Any:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client: Any, refresh_token: Any, scopes: Any) -> Any:
        self.refresh.pop(refresh_token.token, None)
        return self._issue(client.client_id, scopes or refresh_token.scopes, "refresh_token")

    async def load_access_token(self, token: str) -> Any:
        found = self.access.get(token)
        if found is None or (found.expires_at and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: Any) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _issue(self, client_id: str, scopes: list[str], grant: str) -> Any:
        from mcp.server.auth.provider import AccessToken, RefreshToken
        from mcp.shared.auth import OAuthToken

        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        expires = int(time.time()) + self.token_seconds
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes)
        print(f"issued {grant}", file=sys.stderr, flush=True)
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.token_seconds,
            refresh_token=refresh,
            scope=" ".join(scopes),
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", default="pyserver")
    parser.add_argument("--transport", choices=("stdio", "http", "sse"), default="stdio")
    parser.add_argument("--auth", action="store_true", help="http/sse: require OAuth")
    parser.add_argument("--token-seconds", type=int, default=3600)
    parser.add_argument("--tools", type=int, default=0, help="this many generated tools too")
    parser.add_argument("--pid-file", type=Path, help="append this process's id to the file")
    parser.add_argument("--hang-initialize", action="store_true", help="never answer anything")
    args = parser.parse_args()
    if args.pid_file:
        with args.pid_file.open("a") as f:
            f.write(f"{os.getpid()}\n")
    if args.hang_initialize:
        for _ in sys.stdin:  # read everything, answer nothing
            pass
        signal.pause()
    if args.transport == "stdio":
        build(args.name, args.tools).run("stdio")
        return
    _serve_http(args)


def _serve_http(args: argparse.Namespace) -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    path = "/mcp" if args.transport == "http" else "/sse"
    provider = settings = None
    if args.auth:
        from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions

        provider = ApproveAll(args.token_seconds)
        from pydantic import AnyHttpUrl

        settings = AuthSettings(
            issuer_url=AnyHttpUrl(base),
            resource_server_url=AnyHttpUrl(f"{base}{path}"),
            validate_token_resource=False,
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=["mcp"], default_scopes=["mcp"]
            ),
            required_scopes=["mcp"],
        )
    server = build(args.name, args.tools, provider, settings)
    app = server.streamable_http_app() if args.transport == "http" else server.sse_app()
    print(f"{base}{path}", flush=True)  # listening already: connections wait in the backlog
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    main()
