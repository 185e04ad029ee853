"""The model seam: one request shape, one normalized stream, one error taxonomy.

Every provider adapter turns its wire format into the Anthropic-shaped event sequence below
(message_start · block_start · block_delta · block_stop · message_delta · message_stop), and
its failures into the errors below, so the loop never knows which server it talks to.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from codeloop.types import BlockDelta as BlockDelta  # the seam's vocabulary, where clients look
from codeloop.types import BlockStart as BlockStart
from codeloop.types import BlockStop as BlockStop
from codeloop.types import DeltaKind as DeltaKind
from codeloop.types import KeepAlive as KeepAlive
from codeloop.types import MessageDelta as MessageDelta
from codeloop.types import MessageStart as MessageStart
from codeloop.types import MessageStop as MessageStop
from codeloop.types import ModelRequest as ModelRequest
from codeloop.types import StreamEvent as StreamEvent
from codeloop.types import ToolSpec as ToolSpec

# What every request of a session repeats: its system prompt and its tools (encoded once).
Prompt = tuple[str, tuple[ToolSpec, ...]]


# --- errors the loop can act on ----------------------------------------------------------


class ModelError(Exception):
    """Base of every failure a model call can raise. `retryable` tells the retry layer."""

    retryable = False

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class PromptTooLong(ModelError):
    def __init__(
        self,
        message: str,
        *,
        actual: int | None = None,
        limit: int | None = None,
        status: int | None = 400,
    ) -> None:
        super().__init__(message, status=status)
        self.actual = actual
        self.limit = limit


class Overloaded(ModelError):
    retryable = True

    def __init__(
        self, message: str, *, retry_after: float | None = None, status: int | None = 529
    ) -> None:
        super().__init__(message, status=status)
        self.retry_after = retry_after


class RateLimited(Overloaded):
    """429: like an overload, but the server usually says how long to wait."""


class Transient(ModelError):
    """5xx, a connection reset, a stream cut short: sending again may well work."""

    retryable = True


class Unreachable(Transient):
    """The server could not be reached at all: worth a few tries (a restarting local server),
    not a long backoff (more often a wrong URL or a server that is not running)."""


class StreamErrorEvent(Transient):
    """The server sent an SSE `error` event mid-stream."""


class StreamIdle(Transient):
    """The watchdog saw no stream event for too long."""


class MediaError(ModelError):
    """An image or document the API refused (size, format): retrying will not help."""


class Fatal(ModelError):
    """Authentication, a bad request, an unknown model: the user must change something."""


# What each kind of failure is called in messages for people (most specific class first).
_FAILURE_NAMES: tuple[tuple[type[ModelError], str], ...] = (
    (RateLimited, "rate limited"),
    (Overloaded, "API overloaded"),
    (StreamIdle, "stream stalled"),
    (StreamErrorEvent, "error event in the stream"),
    (Transient, "connection problem"),
    (PromptTooLong, "prompt too long"),
    (MediaError, "image or document refused"),
    (Fatal, "request refused"),
)


def describe(error: ModelError | None) -> str:
    """A failure in one line for people: its kind, its HTTP status, the server's words."""
    if error is None:
        return "unknown model error"
    name = next((n for kind, n in _FAILURE_NAMES if isinstance(error, kind)), "model error")
    status = f" (HTTP {error.status})" if error.status else ""
    return f"{name}{status}: {error.message}"


class ModelClient(Protocol):
    """What the loop needs from a provider. Adapters live one per file in this package."""

    provider: str

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]: ...

    async def aclose(self) -> None: ...
