"""When to try a failed model call again, and how long to wait first.

Exponential backoff with jitter from `base` seconds, capped, honouring the server's
retry-after; only errors marked `retryable` are retried at all. Sessions that draw on one
quota (a batch) share a `RateLimiter`: an overload one of them meets pauses them all.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from codeloop.models.base import ModelError, Overloaded, Transient, Unreachable

N = TypeVar("N", int, float)

DEFAULT_MAX_ATTEMPTS = 10
# Consecutive overloads after which a configured fallback model takes over (Claude Code: 3).
OVERLOADS_BEFORE_FALLBACK = 3
DEFAULT_IDLE_TIMEOUT = 60.0
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


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    base_delay: float = 0.5
    max_delay: float = 32.0
    jitter: float = 0.25  # up to this fraction of the delay is added at random
    # A stream with no event for this long is abandoned and sent again (half of it: a warning).
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT
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

    @staticmethod
    def from_env(env: dict[str, str] | None = None) -> RetryPolicy:
        env = dict(os.environ) if env is None else env
        return RetryPolicy(
            max_attempts=_positive(env.get("CODELOOP_MAX_RETRIES"), DEFAULT_MAX_ATTEMPTS, int),
            idle_timeout=_positive(
                env.get("CODELOOP_STREAM_IDLE_TIMEOUT"), DEFAULT_IDLE_TIMEOUT, float
            ),
        )


def _positive(raw: str | None, default: N, kind: Callable[[str], N]) -> N:
    try:
        value = kind(raw) if raw else default
    except ValueError:
        return default
    return value if value > 0 else default
