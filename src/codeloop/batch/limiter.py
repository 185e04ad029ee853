"""One pause for a whole batch: a 429 or 529 met by any task holds back every task's requests.

The tasks of a batch draw on one quota, so when the provider says "slow down" to one of them
it means all of them. `Gate` keeps the time until which nobody may send; `LocalGate` is the
RateLimiter the loop's retry policy takes, for the workers of one process (the Ray runner
serves the same Gate from an actor to the whole cluster).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


class Gate:
    """Closed until a moment on this process's clock; each hold can only push it later."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._until = 0.0

    def remaining(self) -> float:
        return max(0.0, self._until - self._clock())

    def hold(self, seconds: float) -> None:
        self._until = max(self._until, self._clock() + seconds)


async def wait_open(
    remaining: Callable[[], Awaitable[float]],
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> None:
    """Sleep until the gate is open, however often it is held again meanwhile."""
    while (left := await remaining()) > 0:
        await sleep(left)


class LocalGate:
    """The RateLimiter for tasks that share one event loop."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.gate = Gate(clock)
        self._sleep = sleep

    async def _remaining(self) -> float:
        return self.gate.remaining()

    async def wait(self) -> None:
        await wait_open(self._remaining, self._sleep)

    async def hold(self, seconds: float) -> None:
        self.gate.hold(seconds)
