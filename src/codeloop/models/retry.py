"""When to try a failed model call again, how long to wait first, and when to give up on the
model for the fallback.

Exponential backoff with jitter from `base` seconds, capped, honouring the server's
retry-after (within a cap: `retry-after: 86400` must not hang a run); only errors marked
`retryable` are retried at all. `Attempts` is the state of one request's tries, shared by the
loop's main call and the compaction's summary call, so both retry, and fall back, alike.
Sessions that draw on one quota (a batch) share a `RateLimiter`: an overload one of them meets
pauses them all.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from dataclasses import field
from typing import Protocol, TypeVar

from codeloop.models.base import (
    ModelError,
    Overloaded,
    RateLimited,
    StreamErrorEvent,
    Transient,
    Unreachable,
)
from codeloop.system.valueclass import valueclass

N = TypeVar("N", int, float)

DEFAULT_MAX_ATTEMPTS = 10
# Consecutive overloads after which a configured fallback model takes over (Claude Code: 3).
OVERLOADS_BEFORE_FALLBACK = 3
# Consecutive 5xx answers after which the model counts as down: the fallback takes over.
SERVER_ERRORS_BEFORE_FALLBACK = 4
# A rate limit asking to wait longer than this sends the request to the fallback instead.
FALLBACK_RETRY_AFTER = 30.0
# Seconds without a byte from the server (pings count) before a stream is abandoned (seed 002).
DEFAULT_IDLE_TIMEOUT = 90.0
# Seconds to wait for an answer's first event (headers and first bytes): a loaded API thinks
# before it answers. A local model also reads the whole prompt first, so its wait grows with the
# prompt at LOCAL_PREFILL_TOKENS_PER_SECOND.
DEFAULT_FIRST_EVENT_TIMEOUT = 300.0
LOCAL_PREFILL_TOKENS_PER_SECOND = 20.0
# A server that refuses connections gets this many tries (about 1.5 s of waiting), not ten.
UNREACHABLE_ATTEMPTS = 3


class RateLimiter(Protocol):
    """A pause shared by every session given the same limiter."""

    async def wait(self) -> None:
        """Return once requests may be sent (at once, unless an overload holds the gate)."""
        ...

    async def hold(self, seconds: float) -> None:
        """No request through this limiter for the next `seconds`."""
        ...


@valueclass
class RetryPolicy:
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    base_delay: float = 0.5
    max_delay: float = 32.0
    jitter: float = 0.25  # up to this fraction of the delay is added at random
    # A stream with no data for this long is abandoned and sent again (half of it: a warning).
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
    first_event_timeout: float = DEFAULT_FIRST_EVENT_TIMEOUT
    # Prompt tokens a second the model reads before answering; None for a hosted API, whose
    # wait does not depend on the prompt.
    prefill_tokens_per_second: float | None = None
    random: Callable[[], float] = field(default=random.random, compare=False)
    # Each request waits for it; a 429 or 529 holds it for as long as this session waits.
    limiter: RateLimiter | None = field(default=None, compare=False)

    def gives_up(self, attempt: int, error: ModelError) -> bool:
        """Whether `attempt` failing with `error` was the last try."""
        if not error.retryable:
            return True
        limit = (
            min(self.max_attempts, UNREACHABLE_ATTEMPTS)
            if isinstance(error, Unreachable)
            else self.max_attempts
        )
        return attempt >= limit

    def delay(self, attempt: int, error: ModelError) -> float:
        """Seconds to wait before attempt `attempt + 1`, given the failure of `attempt`."""
        if isinstance(error, Overloaded) and error.retry_after is not None:
            return min(error.retry_after, self.max_delay * 4)
        if attempt == 1 and isinstance(error, Transient) and error.status is None:
            # A dropped connection or a stalled stream says nothing about load: resend at once.
            return 0.0
        backoff = min(self.base_delay * 2.0 ** (attempt - 1), self.max_delay)
        return backoff * (1 + self.jitter * self.random())

    def first_wait(self, prompt_tokens: int) -> float:
        """How long an answer to a prompt of this size may take to begin."""
        rate = self.prefill_tokens_per_second
        return self.first_event_timeout + (prompt_tokens / rate if rate else 0.0)

    @staticmethod
    def from_env(env: dict[str, str] | None = None, *, local: bool = False) -> RetryPolicy:
        env = dict(os.environ) if env is None else env
        return RetryPolicy(
            max_attempts=_positive(env.get("CODELOOP_MAX_RETRIES"), DEFAULT_MAX_ATTEMPTS, int),
            idle_timeout=_positive(
                env.get("CODELOOP_STREAM_IDLE_TIMEOUT"), DEFAULT_IDLE_TIMEOUT, float
            ),
            first_event_timeout=_positive(
                env.get("CODELOOP_FIRST_EVENT_TIMEOUT"), DEFAULT_FIRST_EVENT_TIMEOUT, float
            ),
            prefill_tokens_per_second=LOCAL_PREFILL_TOKENS_PER_SECOND if local else None,
        )


@valueclass(slots=True)
class Retry:
    wait: float


@valueclass(slots=True)
class Fallback:
    """The model is unavailable by one of the measures above: switch, and say why."""

    reason: str


@valueclass(slots=True)
class GiveUp:
    pass


RetryStep = Retry | Fallback | GiveUp


@valueclass(frozen=False)
class Attempts:
    """The tries of one request: call `begin()` before each, `after(error)` when one failed."""

    policy: RetryPolicy
    # The model to switch to when this one stays unavailable; None: none (or already used).
    fallback_model: str | None = None
    number: int = 0
    overloads: int = 0
    server_errors: int = 0
    # After an SSE error event, one plain (non-streaming) request, then stream again.
    non_streaming: bool = False

    def begin(self) -> int:
        self.number += 1
        return self.number

    def after(self, error: ModelError) -> RetryStep:
        if self.policy.gives_up(self.number, error):
            return GiveUp()
        overloaded = isinstance(error, Overloaded) and not isinstance(error, RateLimited)
        self.overloads = self.overloads + 1 if overloaded else 0
        failing = isinstance(error, Transient) and (error.status or 0) >= 500
        self.server_errors = self.server_errors + 1 if failing else 0
        reason = self._unavailable(error)
        if reason is not None and self.fallback_model is not None:
            return Fallback(reason)
        self.non_streaming = isinstance(error, StreamErrorEvent) and not self.non_streaming
        return Retry(self.policy.delay(self.number, error))

    def _unavailable(self, error: ModelError) -> str | None:
        if self.overloads >= OVERLOADS_BEFORE_FALLBACK:
            return f"overloaded ({self.overloads} times in a row)"
        if self.server_errors >= SERVER_ERRORS_BEFORE_FALLBACK:
            return f"failing (HTTP {error.status}, {self.server_errors} times in a row)"
        wait = error.retry_after if isinstance(error, RateLimited) else None
        if wait is not None and wait > FALLBACK_RETRY_AFTER:
            return f"rate limited for {wait:g} s"
        return None


def _positive(raw: str | None, default: N, kind: Callable[[str], N]) -> N:
    try:
        value = kind(raw) if raw else default
    except ValueError:
        return default
    return value if value > 0 else default
