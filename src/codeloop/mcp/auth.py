"""OAuth 2.1 for remote MCP servers, through the SDK's client auth (`OAuthClientProvider`).

The SDK does the protocol: discovery from the 401, dynamic client registration (or the
`oauth.clientId` of the entry), PKCE, the code exchange and refreshing expired tokens. codeloop
brings the rest: where tokens live (the user's data folder, `mcp-auth/`, readable by the user
alone), the browser and the local page the server redirects back to (`codeloop mcp login`),
and, in a session that cannot ask (`-p`), a clear "log in first" instead of a flow nobody can
finish. Tokens are kept per server name and URL, so a token never goes to another server.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
import webbrowser
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from codeloop.mcp.connection import NeedsLogin
from codeloop.mcp.server_config import ServerConfig
from codeloop.store.data_paths import codeloop_home
from codeloop.system.jsonfile import JsonFileError, read_json_object, write_json_atomic

# Refresh a little before the server would refuse the token.
EXPIRY_MARGIN_SECONDS = 30
LOGIN_TIMEOUT_SECONDS = 300.0
CALLBACK_PATH = "/callback"


def token_file(config: ServerConfig, env: Mapping[str, str]) -> Path:
    digest = hashlib.sha256(config.url.encode()).hexdigest()[:12]
    return codeloop_home(env) / "mcp-auth" / f"{config.name}-{digest}.json"


class TokenStore:
    """The SDK's TokenStorage, in one private JSON file per server."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, Any]:
        try:
            return read_json_object(self.path)
        except (JsonFileError, UnicodeDecodeError):
            return {}  # unreadable: as if logged out; a login writes it anew

    def _write(self, data: dict[str, Any]) -> None:
        write_json_atomic(self.path, data, private=True)

    async def get_tokens(self) -> OAuthToken | None:
        data = self._read().get("tokens")
        if not isinstance(data, dict):
            return None
        tokens = OAuthToken.model_validate(data)
        expires_at = self._read().get("expires_at")
        if isinstance(expires_at, int | float):
            left = int(expires_at - time.time()) - EXPIRY_MARGIN_SECONDS
            tokens = tokens.model_copy(update={"expires_in": max(left, 0)})
        return tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        data = self._read()
        data["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        if tokens.expires_in is not None:
            data["expires_at"] = time.time() + tokens.expires_in
        else:
            data.pop("expires_at", None)
        self._write(data)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        data = self._read().get("client")
        return OAuthClientInformationFull.model_validate(data) if isinstance(data, dict) else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        data = self._read()
        data["client"] = client_info.model_dump(mode="json", exclude_none=True)
        self._write(data)

    def forget(self, *, keep_client: bool) -> None:
        data = self._read()
        kept = {"client": data["client"]} if keep_client and "client" in data else {}
        if kept:
            self._write(kept)
        else:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()

    def has_tokens(self) -> bool:
        return isinstance(self._read().get("tokens"), dict)


class _Provider(OAuthClientProvider):
    """The SDK's provider, but tokens loaded from storage keep their expiry, so an expired one
    is refreshed rather than sending the user through the browser again."""

    async def _initialize(self) -> None:
        await super()._initialize()
        tokens = self.context.current_tokens
        if tokens is not None and tokens.expires_in is not None:
            self.context.update_token_expiry(tokens)


RedirectHandler = Callable[[str], Awaitable[None]]
CallbackHandler = Callable[[], Awaitable[tuple[str, str | None]]]


def provider(
    config: ServerConfig,
    store: TokenStore,
    *,
    redirect_uri: str,
    redirect_handler: RedirectHandler,
    callback_handler: CallbackHandler,
) -> OAuthClientProvider:
    metadata = OAuthClientMetadata(
        redirect_uris=[redirect_uri],  # type: ignore[list-item]
        client_name="codeloop",
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method=(
            "client_secret_post" if config.oauth and config.oauth.client_secret else "none"
        ),
        scope=config.oauth.scopes if config.oauth else None,
    )
    return _Provider(
        server_url=config.url,
        client_metadata=metadata,
        storage=_PreRegistered(store, config, redirect_uri),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        timeout=LOGIN_TIMEOUT_SECONDS,
    )


class _PreRegistered(TokenStore):
    """A client registered in advance (`oauth.clientId`) instead of dynamic registration."""

    def __init__(self, store: TokenStore, config: ServerConfig, redirect_uri: str) -> None:
        super().__init__(store.path)
        self._config = config
        self._redirect_uri = redirect_uri

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        oauth = self._config.oauth
        if oauth is None or oauth.client_id is None:
            return await super().get_client_info()
        return OAuthClientInformationFull(
            client_id=oauth.client_id,
            client_secret=oauth.client_secret,
            redirect_uris=[self._redirect_uri],  # type: ignore[list-item]
            token_endpoint_auth_method="client_secret_post" if oauth.client_secret else "none",
        )


def session_auth(env: Mapping[str, str]) -> Callable[[ServerConfig], httpx.Auth | None]:
    """For sessions that cannot open a browser: stored tokens are used and refreshed; a server
    that wants a new login makes the connection fail with NeedsLogin."""

    def make(config: ServerConfig) -> httpx.Auth | None:
        if any(key.lower() == "authorization" for key in config.headers):
            return None  # the user brought their own credentials

        async def cannot_redirect(_: str) -> None:
            raise NeedsLogin("the server asks for OAuth")

        async def no_callback() -> tuple[str, str | None]:
            raise NeedsLogin("the server asks for OAuth")

        store = TokenStore(token_file(config, env))
        return provider(
            config,
            store,
            redirect_uri=_stored_redirect(store) or "http://127.0.0.1/callback",
            redirect_handler=cannot_redirect,
            callback_handler=no_callback,
        )

    return make


def _stored_redirect(store: TokenStore) -> str | None:
    client = store._read().get("client")
    uris = client.get("redirect_uris") if isinstance(client, dict) else None
    return str(uris[0]) if isinstance(uris, list) and uris else None


# --- `codeloop mcp login` ---------------------------------------------------------------------


class _Callback:
    """The local page the authorization server sends the browser back to."""

    def __init__(self) -> None:
        self.result: asyncio.Future[tuple[str, str | None]] = (
            asyncio.get_running_loop().create_future()
        )
        self.server: asyncio.Server | None = None

    async def start(self, port: int) -> int:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", port)
        return int(self.server.sockets[0].getsockname()[1])

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = (await reader.readline()).decode("latin-1")
            while (await reader.readline()).strip():
                pass  # the headers
            target = line.split(" ")[1] if line.count(" ") >= 2 else "/"
            query = parse_qs(urlsplit(target).query)
            page, status = "You are logged in; you can close this page.", "200 OK"
            if urlsplit(target).path != CALLBACK_PATH:
                page, status = "Not found.", "404 Not Found"
            elif "error" in query:
                why = query.get("error_description", query["error"])[0]
                page, status = f"Login failed: {why}", "400 Bad Request"
                if not self.result.done():
                    self.result.set_exception(LoginError(f"the server refused: {why}"))
            elif not self.result.done():
                self.result.set_result((query.get("code", [""])[0], query.get("state", [None])[0]))
            body = f"<!doctype html><title>codeloop</title><p>{page}</p>\n".encode()
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        finally:
            writer.close()

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


class LoginError(Exception):
    """The login did not complete; the message says why."""


async def login(config: ServerConfig, env: Mapping[str, str], *, cwd: Path) -> Path:
    """Log in to a remote server in the browser; returns the token file written."""
    from codeloop.mcp.connection import Connection
    from codeloop.mcp.server_config import Timeouts

    if not config.remote:
        raise LoginError(f"{config.name} is a stdio server: OAuth is for http and sse servers")
    store = TokenStore(token_file(config, env))
    callback = _Callback()
    wanted = config.oauth.callback_port if config.oauth and config.oauth.callback_port else None
    port = await callback.start(wanted or _port_of(_stored_redirect(store)) or 0)
    redirect_uri = f"http://127.0.0.1:{port}{CALLBACK_PATH}"
    # A registration made for another redirect address is of no use: register again.
    store.forget(keep_client=_stored_redirect(store) == redirect_uri)

    async def open_browser(url: str) -> None:
        print(f"Opening your browser to log in to {config.name}. If it does not open, visit:")
        print(f"  {url}", flush=True)
        # In a thread: a console browser (and $BROWSER) runs until it exits, and meanwhile
        # this loop must serve the page it is sent back to.
        with contextlib.suppress(Exception):
            await asyncio.to_thread(webbrowser.open, url)

    async def wait_for_callback() -> tuple[str, str | None]:
        return await callback.result

    auth = provider(
        config,
        store,
        redirect_uri=redirect_uri,
        redirect_handler=open_browser,
        callback_handler=wait_for_callback,
    )
    connection = Connection(
        config,
        env=env,
        cwd=cwd,
        timeouts=Timeouts(connect=LOGIN_TIMEOUT_SECONDS),
        auth=lambda _: auth,
    )
    try:
        await connection.connect()
        status, error = connection.status, connection.error
    finally:
        await connection.aclose()
        await callback.close()
    if status != "connected":
        raise LoginError(error or "the login did not complete")
    if not store.has_tokens():
        raise LoginError(f"{config.name} answered without asking to log in: nothing to store")
    return store.path


def _port_of(uri: str | None) -> int | None:
    if not uri:
        return None
    try:
        return urlsplit(uri).port
    except ValueError:
        return None


def logout(config: ServerConfig, env: Mapping[str, str]) -> bool:
    store = TokenStore(token_file(config, env))
    had = store.path.exists()
    store.forget(keep_client=False)
    return had
