"""HTTP failures → the error taxonomy in models/base.py, for every server we speak to.

Anthropic, OpenAI, vLLM, llama.cpp and Ollama each word their errors differently; the loop only
needs to know what to do next (compact, wait, retry, give up), so this module reads status,
body and headers once and answers with one of a handful of error classes. The API's own message
is always kept: it is what the user needs to see when something is wrong.
"""

from __future__ import annotations

import email.utils
import json
import os
import re
import time
from collections.abc import Mapping
from dataclasses import field
from typing import Any

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
from codeloop.system.lazy_pattern import LazyPattern
from codeloop.system.valueclass import valueclass

_TOO_LONG_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
_TOO_LONG_TEXT = LazyPattern(
    r"prompt is too long"
    r"|maximum context length"
    r"|context[_ ]length[_ ]exceeded"
    r"|exceeds? the (?:available )?context (?:size|window|length)"
    # Amazon Bedrock: "Input is too long for requested model."
    r"|input is too long"
    # Gemini: "The input token count (1200000) exceeds the maximum number of tokens allowed
    # (1048576)."
    r"|input token count.{0,40}exceeds the maximum number of tokens"
    # Hugging Face TGI: "`inputs` tokens + `max_new_tokens` must be <= 4096. Given: ..."
    r"|`inputs` tokens \+ `max_new_tokens` must be"
    r"|`inputs` must have less than \d+ tokens"
    # LM Studio: "... greater than the context length", "... context length of only 4096
    # tokens, which is not enough"
    r"|greater than the context length"
    r"|context length of only \d+ tokens",
    re.IGNORECASE,
)
# Anthropic: "prompt is too long: 210000 tokens > 200000 maximum"; Gemini: "input token count
# (1200000) exceeds the maximum number of tokens allowed (1048576)"
_ACTUAL_OVER_LIMIT = LazyPattern(
    r"(\d+) tokens? > (\d+)|token count \((\d+)\) exceeds the maximum number of tokens "
    r"allowed \((\d+)\)",
    re.IGNORECASE,
)
# OpenAI / vLLM: "maximum context length is 8192 tokens. However, you requested 9000 tokens"
_LIMIT = LazyPattern(r"maximum context length is (\d+)", re.IGNORECASE)
_ACTUAL = LazyPattern(
    r"(?:requested|resulted in|request has|contains?) (\d+)(?: input)? tokens", re.IGNORECASE
)
_MEDIA_TEXT = LazyPattern(r"\bimage|media[_ ]type|\bpdf\b", re.IGNORECASE)
_MAX_SNIPPET = 500


@valueclass(slots=True)
class ApiError:
    """The parts of an error body we act on, whichever server sent it."""

    message: str
    type: str = ""
    code: str = ""
    fields: Mapping[str, Any] = field(default_factory=dict)


def parse_error_body(body: bytes | str | Mapping[str, Any]) -> ApiError:
    """Anthropic `{error: {type, message}}`, OpenAI `{error: {message, type, code}}`, vLLM's flat
    `{message, type, code}`, Ollama's `{error: "text"}`, or a proxy's HTML page."""
    data: Any = body
    if isinstance(body, bytes | str):
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        try:
            data = json.loads(text)
        except ValueError:
            return ApiError(text.strip()[:_MAX_SNIPPET])
    if not isinstance(data, Mapping):
        return ApiError(str(data)[:_MAX_SNIPPET])
    error = data.get("error")
    if isinstance(error, str):
        return ApiError(error)
    source: Mapping[str, Any] = error if isinstance(error, Mapping) else data
    message = source.get("message") or source.get("detail") or ""
    return ApiError(
        message if isinstance(message, str) else json.dumps(message),
        str(source.get("type") or ""),
        str(source.get("code") or ""),
        source,
    )


def error_from_response(
    status: int,
    body: bytes | str,
    headers: Mapping[str, str],
    *,
    url: str,
    model: str,
    auth_hint: str,
    now: float | None = None,
) -> ModelError:
    """Classify a non-2xx answer. `auth_hint` names the env var(s) holding the credential."""
    error = parse_error_body(body)
    detail = error.message or f"HTTP {status}"
    if too_long := _prompt_too_long(error, status):
        return too_long
    if status == 529 or error.type == "overloaded_error":
        return Overloaded(
            f"{url} is overloaded ({status}): {detail}",
            retry_after=retry_after_seconds(headers, now),
            status=status,
        )
    if status == 429:
        if error.code == "insufficient_quota":  # OpenAI: out of credit, waiting will not help
            return Fatal(f"quota exceeded at {url} ({status}): {detail}", status=status)
        return RateLimited(
            f"rate limited by {url} ({status}): {detail}",
            retry_after=retry_after_seconds(headers, now),
            status=status,
        )
    if status >= 500 or status == 408:
        return Transient(f"server error {status} from {url}: {detail}", status=status)
    if status in (401, 403):
        return Fatal(
            f"authentication failed ({status}) at {url}: {detail}. Check {auth_hint}.",
            status=status,
        )
    if status == 404 or error.type == "not_found_error" or error.code == "model_not_found":
        from codeloop.models.catalog import closest, lookup

        near = [] if lookup(model).known else closest(model)
        hint = f" Did you mean {' or '.join(near)}?" if near else ""
        return Fatal(
            f"model {model!r} not found ({status}) at {url}: {detail}. "
            f"Check the model name and the base URL.{hint}",
            status=status,
        )
    if status == 400 and (_MEDIA_TEXT.search(error.message) or "image" in error.code):
        return MediaError(f"media rejected by {url}: {detail}", status=status)
    return Fatal(f"request rejected by {url} ({status}): {detail}", status=status)


def error_from_stream_event(payload: Mapping[str, Any], *, url: str) -> ModelError:
    """An error the server reported inside a 200 stream (Anthropic `event: error`, an OpenAI
    chunk carrying `error`): the stream is unusable, but a resend usually works."""
    error = parse_error_body(payload)
    if too_long := _prompt_too_long(error, None):
        return too_long
    kind = f"{error.type}: " if error.type else ""
    return StreamErrorEvent(f"error event in the stream from {url}: {kind}{error.message}")


def error_from_transport(exc: Exception, *, url: str) -> ModelError:
    """Connection failures (httpx.TransportError) are always worth another try."""
    import httpx

    if isinstance(exc, httpx.ConnectTimeout):
        return Transient(f"timed out connecting to {url}")
    if isinstance(exc, httpx.ConnectError):
        return Unreachable(f"cannot connect to {url}: {_reason(exc)}")
    if isinstance(exc, httpx.ReadTimeout):
        return StreamIdle(f"no data from {url} within the read timeout")
    if isinstance(exc, httpx.TimeoutException):
        return Transient(f"timed out talking to {url}")
    return Transient(f"connection to {url} failed: {_reason(exc)}")


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """`retry-after-ms` (Anthropic, OpenAI), else `retry-after` in seconds or as an HTTP date."""
    lowered = {key.lower(): value for key, value in headers.items()}
    millis = _non_negative(lowered.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    seconds = _non_negative(raw)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _non_negative(raw: str | None) -> float | None:
    try:
        value = float(raw) if raw is not None else None
    except ValueError:
        return None
    return value if value is not None and value >= 0 else None


def _prompt_too_long(error: ApiError, status: int | None) -> PromptTooLong | None:
    if status == 413 or error.type == "request_too_large":
        return PromptTooLong(f"request too large: {error.message}", status=status)
    matches_text = _TOO_LONG_TEXT.search(error.message)
    if error.code not in _TOO_LONG_CODES and error.type not in _TOO_LONG_CODES and not matches_text:
        return None
    actual, limit = _token_counts(error)
    return PromptTooLong(error.message, actual=actual, limit=limit, status=status)


def _token_counts(error: ApiError) -> tuple[int | None, int | None]:
    # llama.cpp states both numbers as fields of the error object.
    prompt, context = error.fields.get("n_prompt_tokens"), error.fields.get("n_ctx")
    if isinstance(prompt, int) and isinstance(context, int):
        return prompt, context
    if match := _ACTUAL_OVER_LIMIT.search(error.message):
        over, maximum = (int(n) for n in match.groups() if n is not None)
        return over, maximum
    limit, actual = _LIMIT.search(error.message), _ACTUAL.search(error.message)
    return (int(actual[1]) if actual else None), (int(limit[1]) if limit else None)


def _reason(exc: BaseException) -> str:
    """The OS-level cause, worded for a human ("connection refused"), else httpx's text."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, OSError) and cause.errno is not None:
            # os.strerror, not exc.strerror: asyncio words the latter "Connect call failed".
            return os.strerror(cause.errno).lower()
        cause = cause.__cause__ or cause.__context__
    return str(exc) or type(exc).__name__
