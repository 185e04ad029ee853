"""Every server's way of failing lands on the error class the loop acts on, message intact."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any

import httpx
import pytest

from codeloop.models.base import (
    Fatal,
    MediaError,
    ModelError,
    Overloaded,
    PromptTooLong,
    RateLimited,
    StreamErrorEvent,
    StreamIdle,
    Transient,
    Unreachable,
)
from codeloop.models.http_errors import (
    error_from_response,
    error_from_stream_event,
    error_from_transport,
    parse_error_body,
    retry_after_seconds,
)

URL = "https://api.example.com/v1/messages"


def classify(
    status: int, body: Any, headers: dict[str, str] | None = None, *, now: float | None = None
) -> ModelError:
    raw = body if isinstance(body, str) else json.dumps(body)
    return error_from_response(
        status,
        raw,
        headers or {},
        url=URL,
        model="claude-x",
        auth_hint="ANTHROPIC_API_KEY",
        now=now,
    )


def anthropic_error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def openai_error(message: str, code: str | None = None, kind: str = "invalid_request_error"):
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def test_overloaded() -> None:
    error = classify(529, anthropic_error("overloaded_error", "Overloaded"))
    assert type(error) is Overloaded and error.status == 529
    assert "Overloaded" in error.message
    # Some gateways relay the overload with another status.
    assert type(classify(503, anthropic_error("overloaded_error", "Overloaded"))) is Overloaded


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"Retry-After": "7"}, 7.0),
        ({"retry-after": "0.25"}, 0.25),
        ({}, None),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "-3"}, None),
    ],
)
def test_rate_limited_carries_retry_after(headers: dict[str, str], seconds: float | None) -> None:
    error = classify(429, anthropic_error("rate_limit_error", "slow down"), headers)
    assert type(error) is RateLimited
    assert error.retry_after == seconds
    assert error.retryable


def test_retry_after_as_an_http_date() -> None:
    now = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)
    later = format_datetime(datetime(2025, 6, 1, 12, 0, 30, tzinfo=UTC), usegmt=True)
    assert retry_after_seconds({"retry-after": later}, now.timestamp()) == 30.0
    # A date in the past means "now".
    assert retry_after_seconds({"retry-after": later}, now.timestamp() + 100) == 0.0


def test_openai_insufficient_quota_is_fatal_not_a_wait() -> None:
    body = openai_error(
        "You exceeded your current quota", "insufficient_quota", "insufficient_quota"
    )
    assert type(classify(429, body)) is Fatal


@pytest.mark.parametrize("status", [500, 502, 503, 504, 408])
def test_server_errors_are_transient(status: int) -> None:
    error = classify(status, anthropic_error("api_error", "Internal server error"))
    assert type(error) is Transient and error.status == status
    assert "Internal server error" in error.message and URL in error.message


def test_html_error_page_keeps_its_text() -> None:
    error = classify(502, "<html><body>Bad Gateway</body></html>")
    assert type(error) is Transient and "Bad Gateway" in error.message


@pytest.mark.parametrize(
    ("status", "body", "actual", "limit"),
    [
        # Anthropic
        (
            400,
            anthropic_error(
                "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"
            ),
            210_000,
            200_000,
        ),
        # OpenAI
        (
            400,
            openai_error(
                "This model's maximum context length is 128000 tokens. However, your messages "
                "resulted in 130532 tokens. Please reduce the length of the messages.",
                "context_length_exceeded",
            ),
            130_532,
            128_000,
        ),
        # vLLM (flat body)
        (
            400,
            {
                "object": "error",
                "message": "This model's maximum context length is 32768 tokens. However, you "
                "requested 40960 tokens (36864 in the messages, 4096 in the completion). Please "
                "reduce the length of the messages or completion.",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            },
            40_960,
            32_768,
        ),
        # llama.cpp server
        (
            400,
            {
                "error": {
                    "code": 400,
                    "message": "the request exceeds the available context size, try increasing it",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": 9000,
                    "n_ctx": 8192,
                }
            },
            9000,
            8192,
        ),
        # older llama.cpp: the message alone
        (
            400,
            {
                "error": {
                    "code": 400,
                    "message": "the request exceeds the available context size. "
                    "try increasing the context size or enable context shift",
                    "type": "invalid_request_error",
                }
            },
            None,
            None,
        ),
        # OpenAI code without numbers in the text
        (400, openai_error("Input too long.", "context_length_exceeded"), None, None),
        # Gemini
        (
            400,
            {
                "error": {
                    "code": 400,
                    "message": "The input token count (1200000) exceeds the maximum number of "
                    "tokens allowed (1048576).",
                    "status": "INVALID_ARGUMENT",
                }
            },
            1_200_000,
            1_048_576,
        ),
        # Amazon Bedrock (a flat ValidationException)
        (400, {"message": "Input is too long for requested model."}, None, None),
        # Hugging Face TGI
        (
            422,
            {
                "error": "Input validation error: `inputs` tokens + `max_new_tokens` must be "
                "<= 4096. Given: 4000 `inputs` tokens and 1000 `max_new_tokens`",
                "error_type": "validation",
            },
            None,
            None,
        ),
        # LM Studio
        (
            400,
            {
                "error": "Trying to keep the first 5000 tokens when context the overflows. "
                "However, the model is loaded with context length of only 4096 tokens, which "
                "is not enough. Try to load the model with a larger context length, or provide "
                "a shorter input"
            },
            None,
            None,
        ),
    ],
)
def test_prompt_too_long(status: int, body: Any, actual: int | None, limit: int | None) -> None:
    error = classify(status, body)
    assert type(error) is PromptTooLong
    assert (error.actual, error.limit) == (actual, limit)
    assert error.message == parse_error_body(json.dumps(body)).message


def test_request_too_large_413_is_prompt_too_long() -> None:
    body = anthropic_error(
        "request_too_large", "Request exceeds the maximum allowed number of bytes."
    )
    error = classify(413, body)
    assert type(error) is PromptTooLong and error.status == 413
    assert "maximum allowed number of bytes" in error.message


@pytest.mark.parametrize(
    "body",
    [
        anthropic_error(
            "invalid_request_error",
            "messages.0.content.1.image.source.base64: image exceeds 5 MB maximum: "
            "7340032 bytes > 5242880 bytes",
        ),
        anthropic_error("invalid_request_error", "Could not process image"),
        openai_error("Invalid image data.", "invalid_image_format"),
        openai_error("You uploaded an unsupported image. Please make sure your image is valid."),
    ],
)
def test_media_errors(body: Any) -> None:
    error = classify(400, body)
    assert type(error) is MediaError
    assert error.message.endswith(parse_error_body(json.dumps(body)).message)


@pytest.mark.parametrize("status", [401, 403])
def test_auth_errors_name_the_env_var(status: int) -> None:
    error = classify(status, anthropic_error("authentication_error", "invalid x-api-key"))
    assert type(error) is Fatal and not error.retryable
    assert "invalid x-api-key" in error.message and "ANTHROPIC_API_KEY" in error.message


def test_unknown_model_names_the_model() -> None:
    error = classify(404, anthropic_error("not_found_error", "model: claude-x"))
    assert type(error) is Fatal
    assert "'claude-x'" in error.message and "model: claude-x" in error.message
    openai_404 = openai_error("The model `gpt-9` does not exist", "model_not_found")
    assert "'claude-x'" in classify(400, openai_404).message


def test_other_client_errors_are_fatal_with_the_api_message() -> None:
    error = classify(400, anthropic_error("invalid_request_error", "max_tokens: must be positive"))
    assert type(error) is Fatal and "max_tokens: must be positive" in error.message


def test_ollama_string_error_body() -> None:
    error = classify(400, {"error": "model requires more system memory"})
    assert type(error) is Fatal and "more system memory" in error.message


def test_stream_error_event() -> None:
    error = error_from_stream_event(anthropic_error("overloaded_error", "Overloaded"), url=URL)
    assert type(error) is StreamErrorEvent and error.retryable
    assert "overloaded_error: Overloaded" in error.message
    too_long = openai_error("maximum context length is 10 tokens; you requested 12 tokens")
    assert type(error_from_stream_event(too_long, url=URL)) is PromptTooLong


def _connect_error() -> httpx.ConnectError:
    try:
        try:
            raise ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 9)")
        except OSError as exc:
            raise httpx.ConnectError("All connection attempts failed") from exc
    except httpx.ConnectError as outer:
        return outer


@pytest.mark.parametrize(
    ("exc", "kind", "text"),
    [
        (_connect_error(), Unreachable, f"cannot connect to {URL}: connection refused"),
        (httpx.ConnectError("boom"), Unreachable, f"cannot connect to {URL}: boom"),
        (httpx.ConnectTimeout("slow"), Transient, f"timed out connecting to {URL}"),
        (httpx.ReadTimeout("idle"), StreamIdle, f"no data from {URL} within the read timeout"),
        (httpx.PoolTimeout("pool"), Transient, f"timed out talking to {URL}"),
        (
            httpx.RemoteProtocolError(
                "peer closed connection without sending complete message body"
            ),
            Transient,
            f"connection to {URL} failed: peer closed connection without sending complete "
            "message body",
        ),
        (httpx.ReadError(""), Transient, f"connection to {URL} failed: ReadError"),
    ],
)
def test_transport_errors(exc: Exception, kind: type[ModelError], text: str) -> None:
    error = error_from_transport(exc, url=URL)
    assert type(error) is kind and error.retryable
    assert error.message == text
