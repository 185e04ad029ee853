"""Async iteration that an abort signal can interrupt and a watchdog can give up on.

A stalled network read cannot notice a flag, so each wait races the next item against the
abort event and, when asked, against an idle timer. Abort signals can be linked, parent to child.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Aborted(Exception):
    """The abort event fired while waiting for the next item."""


class IdleTimeout(Exception):
    """No item arrived within the idle timeout (or, for the first item, the first timeout)."""

    def __init__(self, seconds: float, *, first: bool = False) -> None:
        what = "no answer began within" if first else "no data for"
        super().__init__(f"{what} {seconds:g} s")
        self.seconds = seconds
        self.first = first


@dataclass(frozen=True, slots=True)
class Stalled:
    """Yielded once when half the timeout has passed without an item: time to warn."""

    seconds: float


async def watched(
    source: AsyncIterator[T],
    abort: asyncio.Event,
    idle_timeout: float | None = None,
    first_timeout: float | None = None,
) -> AsyncIterator[T | Stalled]:
    """Yield from `source` until it ends; raise `Aborted` the moment `abort` is set, and
    `IdleTimeout` when no item came for `idle_timeout` seconds (`first_timeout` for the first
    item, when given), a `Stalled` warning first. The source is closed, its connection
    released, on every way out."""
    abort_wait = asyncio.ensure_future(abort.wait())
    next_item: asyncio.Future[T] | None = None
    first = True
    try:
        while True:
            if abort.is_set():
                raise Aborted
            timeout = first_timeout if first and first_timeout is not None else idle_timeout
            next_item = asyncio.ensure_future(anext(source))
            waits = {next_item, abort_wait}
            if timeout is None:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            else:
                half = timeout / 2
                await asyncio.wait(waits, timeout=half, return_when=asyncio.FIRST_COMPLETED)
                if not next_item.done() and not abort.is_set():
                    yield Stalled(half)
                    await asyncio.wait(waits, timeout=half, return_when=asyncio.FIRST_COMPLETED)
            if not next_item.done():
                next_item.cancel()
                await asyncio.gather(next_item, return_exceptions=True)
                if abort.is_set():
                    raise Aborted
                raise IdleTimeout(timeout or 0.0, first=first)
            if isinstance(next_item.exception(), StopAsyncIteration):
                # Not raised here: its traceback would hold this frame, which holds the task
                # that holds it, a cycle keeping the last item alive until a full collection.
                return
            first = False
            yield next_item.result()
    finally:
        abort_wait.cancel()
        if next_item is not None and not next_item.done():
            # Our caller was cancelled mid-wait: the source must stop running before it closes.
            next_item.cancel()
            await asyncio.gather(next_item, return_exceptions=True)
        aclose = getattr(source, "aclose", None)
        if aclose is not None:
            await aclose()


async def until_aborted(source: AsyncIterator[T], abort: asyncio.Event) -> AsyncIterator[T]:
    """`watched` without a watchdog."""
    async for item in watched(source, abort):
        if not isinstance(item, Stalled):
            yield item


async def unless_aborted(waiting: Awaitable[object], abort: asyncio.Event) -> bool:
    """Wait for `waiting` (a retry's sleep, a shared limiter, an MCP call, a process: pass a
    task to read its result); False if `abort` fired first. Whatever ends the wait, our
    caller's cancellation (a time limit) too, cancels what is left of it."""
    waiter = asyncio.ensure_future(waiting)
    abort_wait = asyncio.ensure_future(abort.wait())
    try:
        await asyncio.wait({waiter, abort_wait}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        abort_wait.cancel()
    return not abort.is_set()


async def announced(task: asyncio.Future[R], queue: asyncio.Queue[T]) -> AsyncIterator[T]:
    """What `task` puts on `queue` while it runs, as it comes, then what is left; ends when
    the task does (the caller reads its result). Closing it early cancels the task."""
    try:
        while not task.done():
            item = asyncio.ensure_future(queue.get())
            await asyncio.wait((task, item), return_when=asyncio.FIRST_COMPLETED)
            if item.done():
                yield item.result()
            else:
                item.cancel()
        while not queue.empty():
            yield queue.get_nowait()
    finally:
        task.cancel()


@contextlib.asynccontextmanager
async def linked_abort(*parents: asyncio.Event) -> AsyncIterator[asyncio.Event]:
    """An abort signal of its own that fires when any of `parents` does: a sub-agent stops
    with the session's prompt and with the call that started it."""
    child = asyncio.Event()

    async def follow(parent: asyncio.Event) -> None:
        await parent.wait()
        child.set()

    watchers = [asyncio.ensure_future(follow(p)) for p in parents]
    try:
        yield child
    finally:
        for watcher in watchers:
            watcher.cancel()
