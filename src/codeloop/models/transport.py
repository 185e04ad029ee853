"""The HTTP plumbing both adapters share: one pooled connection, JSON out, SSE or JSON back,
and every failure already mapped to the error taxonomy.

httpx is imported when a transport is built, not when this module is, so resolving a model (or
running `codeloop --help`) costs nothing until a request is really on its way.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, cast

from codeloop.models.base import Fatal, ModelError, Transient
from codeloop.models.http_errors import error_from_response, error_from_transport
from codeloop.models.sse import SSEEvent, aiter_sse

if TYPE_CHECKING:
    from types import ModuleType

    import httpx

# Connecting should be quick even when answering is slow; a dead host must not hang a turn.
CONNECT_TIMEOUT = 10.0


class HttpTransport:
    def __init__(
        self,
        base_url: str,
        headers: Mapping[str, str],
        *,
        timeout: float,
        auth_hint: str,
    ) -> None:
        load_httpx()
        import httpx

        from codeloop.models.http11 import Http11Transport, proxied

        self.base_url = base_url.rstrip("/")
        self._auth_hint = auth_hint
        # Through a proxy, httpx's own transport; else codeloop's (models/http11.py). Loading
        # the CA bundle costs ~40 ms of start-up: only an https endpoint pays for it.
        https = self.base_url.startswith("https:")
        connect: dict[str, Any] = (
            {"verify": https} if proxied(os.environ) else {"transport": Http11Transport()}
        )
        self._client = httpx.AsyncClient(
            headers={"user-agent": "codeloop", **headers},
            timeout=httpx.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT)),
            **connect,
        )

    def url(self, path: str) -> str:
        return self.base_url + path

    async def post_sse(
        self,
        path: str,
        body: Mapping[str, Any] | bytes,
        *,
        model: str,
        headers: Mapping[str, str] | None = None,
    ) -> AsyncGenerator[SSEEvent, None]:
        """POST and yield the events of the streamed answer as they arrive.

        Use it under `contextlib.aclosing`, so that leaving early returns the connection.
        """
        accept = {"accept": "text/event-stream", **(headers or {})}
        async with aclosing(self.post_chunks(path, body, model=model, headers=accept)) as chunks:
            async for event in aiter_sse(chunks, heartbeats=True):
                yield event

    async def post_chunks(
        self,
        path: str,
        body: Mapping[str, Any] | bytes,
        *,
        model: str,
        headers: Mapping[str, str] | None = None,
    ) -> AsyncGenerator[bytes, None]:
        """POST and yield the raw bytes of the answer as they arrive (a signed request passes
        its body as the exact bytes it signed)."""
        import httpx

        url = self.url(path)
        response: httpx.Response | None = None
        try:
            async with self._client.stream(
                "POST", url, **_payload(body), headers=headers
            ) as response:
                if response.status_code >= 400:
                    raise self._error(response, await response.aread(), url, model)
                async for chunk in response.aiter_bytes():
                    yield chunk
        except httpx.TransportError as exc:
            raise error_from_transport(exc, url=url) from exc
        finally:
            if response is not None:
                _release(response)

    async def post_json(
        self,
        path: str,
        body: Mapping[str, Any] | bytes,
        *,
        model: str,
        headers: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """POST and return the decoded JSON object of a non-streaming answer."""
        import httpx

        url = self.url(path)
        try:
            response = await self._client.post(url, **_payload(body), headers=headers)
        except httpx.TransportError as exc:
            raise error_from_transport(exc, url=url) from exc
        _release(response)
        if response.status_code >= 400:
            raise self._error(response, response.content, url, model)
        try:
            data = json.loads(response.content)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            snippet = response.text[:200]
            raise Fatal(f"expected a JSON object from {url}, got: {snippet}", status=200)
        return data

    async def aclose(self) -> None:
        await self._client.aclose()

    def _error(self, response: httpx.Response, body: bytes, url: str, model: str) -> ModelError:
        return error_from_response(
            response.status_code,
            body,
            response.headers,
            url=url,
            model=model,
            auth_hint=self._auth_hint,
        )


def _release(response: httpx.Response) -> None:
    """httpx 0.28 binds a response's stream back to the response (to time it on close): a
    reference cycle that only the cyclic collector frees, and it holds the request, its body
    and all. A long session's request bodies (hundreds of KB each) then pile up between full
    collections, and the RSS grows turn by turn (encode/httpx#3733). Once the response is
    closed nothing reads that stream: dropping it frees the lot as soon as the caller lets go."""
    import httpx

    response.stream = httpx.ByteStream(b"")


def load_httpx() -> None:
    """httpx, without its command-line client: httpx imports that (click, rich and pygments:
    a third of its import time, and megabytes) whenever they happen to be installed, and a
    program using httpx as a library never runs it. `httpx._main` stays importable after."""
    modules = cast("dict[str, ModuleType | None]", sys.modules)  # None blocks an import
    if "httpx" not in modules:
        blocked = modules.setdefault("httpx._main", None) is None
        try:
            import httpx  # noqa: F401
        finally:
            if blocked and modules.get("httpx._main", False) is None:
                del modules["httpx._main"]


def _payload(body: Mapping[str, Any] | bytes) -> dict[str, Any]:
    if isinstance(body, bytes):
        return {"content": body}  # the caller, who signed it, sets its content-type
    return {"json": body}


def event_json(event: SSEEvent, *, url: str) -> dict[str, Any]:
    """The JSON object an SSE event carries; garbage means a broken stream, worth a resend."""
    try:
        data = json.loads(event.data)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise Transient(f"malformed event in the stream from {url}: {event.data[:200]}")
    return data
