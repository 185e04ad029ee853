"""Claude on Amazon Bedrock, as Claude Code's users configure it: CLAUDE_CODE_USE_BEDROCK=1,
AWS_REGION, and the usual AWS credentials (environment, profiles, SSO: botocore's chain), or
a Bedrock API key in AWS_BEARER_TOKEN_BEDROCK. ANTHROPIC_BEDROCK_BASE_URL points elsewhere
(a gateway; CLAUDE_CODE_SKIP_BEDROCK_AUTH=1 then sends no signature).

The body is the Messages API's, with the model in the URL, `anthropic_version` and the beta
features in the body. Requests are signed with botocore's SigV4, imported only when Bedrock is
configured; the streamed answer comes in AWS's binary event-stream frames, each carrying one
Messages API event, base64-encoded.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing
from typing import Any
from urllib.parse import quote

from codeloop.models.anthropic import (
    EventMapper,
    message_events,
    request_betas,
    request_body,
    request_headers,
)
from codeloop.models.base import (
    Fatal,
    KeepAlive,
    ModelError,
    ModelRequest,
    Overloaded,
    RateLimited,
    StreamErrorEvent,
    StreamEvent,
    Transient,
)
from codeloop.models.eventstream import EventStreamDecoder, Frame
from codeloop.models.http_errors import error_from_response
from codeloop.models.transport import HttpTransport

BEDROCK_VERSION = "bedrock-2023-05-31"
AUTH_HINT = "your AWS credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID, ...) or AWS_BEARER_TOKEN_BEDROCK"


def endpoint(region: str) -> str:
    return f"https://bedrock-runtime.{region}.amazonaws.com"


def bedrock_model_id(model: str) -> str:
    """Catalog names as Bedrock's model ids; ids, inference profiles and ARNs pass through."""
    if "." in model.split("/")[-1].split(":")[0] or model.startswith("arn:"):
        return model
    return f"anthropic.{model}"


class BedrockClient:
    provider = "bedrock"

    def __init__(
        self,
        *,
        region: str,
        base_url: str | None = None,
        bearer_token: str | None = None,
        sign: bool = True,
        timeout: float = 600.0,
    ) -> None:
        auth = {"authorization": f"Bearer {bearer_token}"} if bearer_token else {}
        self.region = region
        self._sign = sign and not bearer_token
        self._credentials: Any = None
        self._http = HttpTransport(
            base_url or endpoint(region), auth, timeout=timeout, auth_hint=AUTH_HINT
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        body = request_body(request)
        del body["model"]
        body["anthropic_version"] = BEDROCK_VERSION
        if betas := request_betas(request):
            body["anthropic_beta"] = list(betas)
        data = json.dumps(body).encode()
        model = quote(bedrock_model_id(request.model), safe="")
        action = "invoke-with-response-stream" if request.stream else "invoke"
        path = f"/model/{model}/{action}"
        extra = {k: v for k, v in request_headers(request).items() if k != "anthropic-beta"}
        headers = {"content-type": "application/json", **extra}
        if request.stream:
            headers["accept"] = "application/vnd.amazon.eventstream"
        headers = await self._signed(path, data, headers)
        if not request.stream:
            async for whole in message_events(self._http, path, data, request, headers):
                yield whole
            return
        mapper = EventMapper(self._http.url(path))
        decoder = EventStreamDecoder(mapper.url)
        chunks = self._http.post_chunks(path, data, model=request.model, headers=headers)
        async with aclosing(chunks) as raw:
            async for chunk in raw:
                frames = decoder.feed(chunk)
                for frame in frames:
                    kind, event_data = _event(frame, mapper.url)
                    # An event this code does not act on still proves the stream alive.
                    yield mapper.feed(kind, event_data) or KeepAlive()
                if not frames:  # part of a frame: alive, whatever the watchdog thought
                    yield KeepAlive()
        mapper.finish()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _signed(self, path: str, data: bytes, headers: dict[str, str]) -> dict[str, str]:
        """SigV4 headers for this exact request (botocore, loaded on the first request)."""
        if not self._sign:
            return headers
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        if self._credentials is None:
            self._credentials = await asyncio.to_thread(_credentials)
        frozen = await asyncio.to_thread(self._credentials.get_frozen_credentials)
        aws = AWSRequest("POST", self._http.url(path), data=data, headers=headers)
        SigV4Auth(frozen, "bedrock", self.region).add_auth(aws)
        return dict(aws.headers.items())


def _credentials() -> Any:
    import botocore.session

    credentials = botocore.session.get_session().get_credentials()
    if credentials is None:
        raise Fatal(
            "Bedrock needs AWS credentials: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY, or AWS_BEARER_TOKEN_BEDROCK"
        )
    return credentials


_EXCEPTIONS: dict[str, type[ModelError]] = {
    "throttlingException": RateLimited,
    "serviceUnavailableException": Overloaded,
    "modelStreamErrorException": StreamErrorEvent,
    "internalServerException": Transient,
    "modelTimeoutException": Transient,
}


def _event(frame: Frame, url: str) -> tuple[str, dict[str, Any]]:
    """One frame as (Messages API event type, its JSON), or the error it reports."""
    if frame.headers.get(":message-type") == "exception":
        name = str(frame.headers.get(":exception-type", ""))
        message = _message(frame.payload)
        if name == "validationException":  # a bad request: too long, a bad image, ...
            body = json.dumps({"message": message})
            raise error_from_response(400, body, {}, url=url, model="", auth_hint=AUTH_HINT)
        error = _EXCEPTIONS.get(name, Fatal)
        raise error(f"Bedrock {name} in the stream from {url}: {message}")
    try:
        chunk = json.loads(frame.payload)
        data = json.loads(base64.b64decode(chunk["bytes"]))
    except (ValueError, KeyError, TypeError):
        raise Transient(f"malformed event in the stream from {url}") from None
    if not isinstance(data, dict):
        raise Transient(f"malformed event in the stream from {url}")
    return str(data.get("type", "")), data


def _message(payload: bytes) -> str:
    try:
        data: Mapping[str, Any] = json.loads(payload)
    except ValueError:
        return payload.decode("utf-8", "replace")[:500]
    return str(data.get("message") or data.get("Message") or data)
