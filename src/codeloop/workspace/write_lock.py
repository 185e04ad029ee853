"""One writer at a time across every agent of a session.

Each executor runs its writers alone, but sub-agents run side by side, each with its own
executor: without a lock two of them could edit one file at once, or one read a file another
is half-way through writing. So every tool call holds this lock while it runs: shared for a
call that is safe to run alongside others, exclusive for one that is not. Writers are
preferred (a waiting writer holds back new readers), so a stream of reads cannot starve it.
A call that only hands work to a sub-agent holds nothing (its agent's calls take the lock).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator


class WriteLock:
    def __init__(self) -> None:
        self._readers = 0
        self._writing = False
        self._writers_waiting = 0
        self._condition: asyncio.Condition | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def _changed(self) -> asyncio.Condition:
        """The condition of the running event loop (a workspace may outlive one)."""
        loop = asyncio.get_running_loop()
        if self._condition is None or self._loop is not loop:
            self._condition, self._loop = asyncio.Condition(), loop
        return self._condition

    @contextlib.asynccontextmanager
    async def hold(self, *, exclusive: bool) -> AsyncIterator[None]:
        if exclusive:
            await self._acquire_write()
            try:
                yield
            finally:
                await self._release(writer=True)
        else:
            await self._acquire_read()
            try:
                yield
            finally:
                await self._release(writer=False)

    async def _acquire_read(self) -> None:
        async with self._changed:
            await self._changed.wait_for(lambda: not self._writing and not self._writers_waiting)
            self._readers += 1

    async def _acquire_write(self) -> None:
        async with self._changed:
            self._writers_waiting += 1
            try:
                await self._changed.wait_for(lambda: not self._writing and not self._readers)
            except BaseException:
                self._writers_waiting -= 1
                self._changed.notify_all()  # readers held back for this writer may go
                raise
            self._writers_waiting -= 1
            self._writing = True

    async def _release(self, *, writer: bool) -> None:
        # Shielded: a cancelled call must still give the lock back, or the session stalls.
        await asyncio.shield(self._give_back(writer))

    async def _give_back(self, writer: bool) -> None:
        async with self._changed:
            if writer:
                self._writing = False
            else:
                self._readers -= 1
            self._changed.notify_all()
