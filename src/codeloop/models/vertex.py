"""Claude on Google Cloud's Vertex AI, as Claude Code's users configure it:
CLAUDE_CODE_USE_VERTEX=1, CLOUD_ML_REGION (`global` or a region), ANTHROPIC_VERTEX_PROJECT_ID
and Google's application-default credentials (`gcloud auth application-default login`, or
GOOGLE_APPLICATION_CREDENTIALS). ANTHROPIC_VERTEX_BASE_URL points elsewhere (a gateway;
CLAUDE_CODE_SKIP_VERTEX_AUTH=1 then sends no token).

The body is the Messages API's with the model in the URL and `anthropic_version` in the
body; the answer is the Messages API's own event stream. Tokens come from google-auth,
imported only when Vertex is configured, refreshed through httpx.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import quote

from codeloop.models.anthropic import message_events, request_body, request_headers
from codeloop.models.base import Fatal, ModelRequest, StreamEvent
from codeloop.models.transport import HttpTransport

VERTEX_VERSION = "vertex-2023-10-16"
SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
AUTH_HINT = "your Google credentials (gcloud auth application-default login)"


def endpoint(region: str) -> str:
    if region == "global":
        return "https://aiplatform.googleapis.com"
    return f"https://{region}-aiplatform.googleapis.com"


class VertexClient:
    provider = "vertex"

    def __init__(
        self,
        *,
        region: str,
        project: str | None,
        base_url: str | None = None,
        authenticate: bool = True,
        timeout: float = 600.0,
    ) -> None:
        self.region = region
        self.project = project
        self._authenticate = authenticate
        self._credentials: Any = None
        self._http = HttpTransport(
            base_url or endpoint(region), {}, timeout=timeout, auth_hint=AUTH_HINT
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        headers = {**request_headers(request), **await self._auth()}
        if not self.project:
            raise Fatal("Vertex needs a project: set ANTHROPIC_VERTEX_PROJECT_ID")
        body = request_body(request)
        del body["model"]
        body["anthropic_version"] = VERTEX_VERSION
        action = "streamRawPredict" if request.stream else "rawPredict"
        path = (
            f"/v1/projects/{quote(self.project, safe='')}/locations/{self.region}"
            f"/publishers/anthropic/models/{quote(request.model, safe='@')}:{action}"
        )
        async for event in message_events(self._http, path, body, request, headers):
            yield event

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _auth(self) -> dict[str, str]:
        """A bearer token from the application-default credentials, refreshed when stale."""
        if not self._authenticate:
            return {}
        if self._credentials is None:
            self._credentials, project = await asyncio.to_thread(_default_credentials)
            self.project = self.project or project
        if not self._credentials.valid:
            await asyncio.to_thread(self._credentials.refresh, HttpxRequest())
        return {"authorization": f"Bearer {self._credentials.token}"}


def _default_credentials() -> tuple[Any, str | None]:
    import google.auth
    import google.auth.exceptions

    try:
        credentials, project = google.auth.default(scopes=list(SCOPES))
    except google.auth.exceptions.DefaultCredentialsError as exc:
        raise Fatal(f"Vertex needs Google credentials: {exc}") from None
    return credentials, project


class HttpxRequest:
    """google-auth's transport interface over httpx, so no second HTTP library is needed."""

    def __call__(
        self,
        url: str,
        method: str = "GET",
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        **kwargs: Any,
    ) -> Any:
        import httpx
        from google.auth import exceptions

        try:
            response = httpx.request(
                method, url, content=body, headers=headers, timeout=timeout or 30.0
            )
        except httpx.HTTPError as exc:
            raise exceptions.TransportError(str(exc)) from exc  # type: ignore[no-untyped-call]
        return _Response(response.status_code, dict(response.headers), response.content)


class _Response:
    def __init__(self, status: int, headers: dict[str, str], data: bytes) -> None:
        self.status = status
        self.headers = headers
        self.data = data
