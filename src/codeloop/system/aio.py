"""Async iteration that an abort signal can interrupt and a watchdog can give up on.

A stalled network read cannot notice a flag, so each wait races the next item against the
abort event and, when asked, against an idle timer. Abort signals can be linked, parent to child.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable
from typing import Any, TypeVar

from codeloop.system.lull import background, lull, watch_with
from codeloop.system.valueclass import valueclass

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


@valueclass(slots=True)
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
    released, on every way out.

    One task per stream reads the source, an item each time one is asked for (a task per item
    cost ~0.35 ms a turn), arming the watchdog's timers around each read; the abort signal and
    the timers drop their verdicts into the same queue as the items, so waiting for the next
    item is a queue read. Nothing is read ahead: the source advances as its consumer does.
    In background work (codeloop.system.lull) both take their steps in a lull."""
    queue: asyncio.Queue[_Mark] = asyncio.Queue()
    wanted = asyncio.Event()
    reader = asyncio.ensure_future(_reader(source, queue, wanted, idle_timeout, first_timeout))
    abort_wait = asyncio.ensure_future(abort.wait())
    abort_wait.add_done_callback(lambda _: queue.put_nowait((_ABORTED, None)))
    wanted.set()
    try:
        while True:
            if abort.is_set():
                raise Aborted
            kind, value = await queue.get()
            if background():  # background work goes on in a lull (codeloop.system.lull)
                await lull().wait()
            if kind is _ITEM:
                yield value
                wanted.set()
            elif kind is _STALLED:
                yield Stalled(value)
            elif kind is _END:
                return
            elif kind is _ABORTED:
                raise Aborted
            elif kind is _FAILED:
                raise value
            else:
                seconds, first = value
                raise IdleTimeout(seconds, first=first)
    finally:
        abort_wait.cancel()
        # Our caller may have stopped mid-stream: the source must stop running before it closes.
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        aclose = getattr(source, "aclose", None)
        if aclose is not None:
            await aclose()


# What the reader and the signals put on the queue: an item, a warning, the end, a failure.
_ITEM, _STALLED, _END, _FAILED, _TIMED_OUT, _ABORTED = range(6)
_Mark = tuple[int, Any]


async def _reader(
    source: AsyncIterator[T],
    queue: asyncio.Queue[_Mark],
    wanted: asyncio.Event,
    idle_timeout: float | None,
    first_timeout: float | None,
) -> None:
    """Read `source` into `queue`, one item each time `wanted` is set, a `Stalled` mark after
    half the wait and a timeout mark after all of it (the consumer raises; its exit cancels
    this reader)."""
    watchdog = _Watchdog(queue)
    if background():  # waiting for a lull is not the server's silence
        watch_with(watchdog.pause, watchdog.resume)
    first = True
    while True:
        await wanted.wait()
        wanted.clear()
        if background():
            await lull().wait()
        timeout = first_timeout if first and first_timeout is not None else idle_timeout
        watchdog.start(timeout, first)
        try:
            item = await anext(source)
        except StopAsyncIteration:
            queue.put_nowait((_END, None))
            return
        except Exception as exc:  # the stream's own failure, raised where it is consumed
            queue.put_nowait((_FAILED, exc))
            return
        finally:
            watchdog.stop()
        first = False
        queue.put_nowait((_ITEM, item))


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


class _Watchdog:
    """The timers of one read: a `Stalled` mark after half the wait, a timeout mark after all of
    it. Paused (codeloop.system.lull), the clock stops and resumes where it stood."""

    def __init__(self, queue: asyncio.Queue[_Mark]) -> None:
        self._queue = queue
        self._timers: tuple[asyncio.TimerHandle, ...] = ()
        self._timeout: float | None = None
        self._first = False
        self._used = 0.0  # of the wait, before the latest pause
        self._since = 0.0  # when the clock last started

    def start(self, timeout: float | None, first: bool) -> None:
        self._timeout, self._first, self._used = timeout, first, 0.0
        self.resume()

    def pause(self) -> None:
        if self._timers:
            self._used += asyncio.get_running_loop().time() - self._since
        self._cancel()

    def resume(self) -> None:
        timeout = self._timeout
        if timeout is None or self._timers:
            return
        loop = asyncio.get_running_loop()
        self._since = loop.time()
        marks = (
            (timeout / 2, (_STALLED, timeout / 2)),
            (timeout, (_TIMED_OUT, (timeout, self._first))),
        )
        self._timers = tuple(  # a timeout falling due while paused still comes; a warning not
            loop.call_later(max(0.0, at - self._used), self._queue.put_nowait, mark)
            for at, mark in marks
            if at > self._used or mark[0] is _TIMED_OUT
        )

    def stop(self) -> None:
        self._timeout = None
        self._cancel()

    def _cancel(self) -> None:
        for timer in self._timers:
            timer.cancel()
        self._timers = ()
