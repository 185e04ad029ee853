"""Abortable iteration: a cancelled consumer leaves the source closed, not still running."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import AsyncIterator

from codeloop.system.aio import unless_aborted, watched


async def test_cancelling_the_consumer_mid_wait_closes_the_source() -> None:
    started = asyncio.Event()
    closed: list[bool] = []

    async def source() -> AsyncIterator[int]:
        try:
            yield 1
            started.set()
            await asyncio.Event().wait()  # a stream that sends nothing more
            yield 2
        finally:
            closed.append(True)

    async def consume() -> list[int | object]:
        return [item async for item in watched(source(), asyncio.Event(), idle_timeout=60)]

    task = asyncio.ensure_future(consume())
    await started.wait()
    task.cancel()
    await asyncio.wait({task})
    assert task.cancelled()  # a CancelledError, not "aclose(): generator already running"
    assert closed == [True]


async def test_unless_aborted_says_which_came_first() -> None:
    abort = asyncio.Event()
    assert await unless_aborted(asyncio.sleep(0), abort)
    abort.set()
    never = asyncio.ensure_future(asyncio.Event().wait())
    assert not await unless_aborted(never, abort)
    await asyncio.wait({never}, timeout=10)  # at once; the bound only keeps a failure short
    assert never.cancelled()  # what was waited for is stopped, not left running


async def test_a_time_limit_on_unless_aborted_stops_what_it_waited_for() -> None:
    never = asyncio.ensure_future(asyncio.Event().wait())
    abort = asyncio.Event()
    try:
        async with asyncio.timeout(0):
            await unless_aborted(never, abort)
    except TimeoutError:
        pass
    await asyncio.wait({never}, timeout=10)  # at once; the bound only keeps a failure short
    assert never.cancelled()
    # Nothing is left waiting on the abort event either.
    assert not [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]


class Item:
    """An item a weak reference can follow."""


async def test_a_finished_source_leaves_its_last_item_to_no_cycle() -> None:
    """Once the consumer lets go of the items, they are freed at once, not at the next full
    collection (a long session's tool results would pile up until then)."""

    async def source() -> AsyncIterator[Item]:
        yield Item()

    gc.collect()
    gc.disable()
    try:
        items = [item async for item in watched(source(), asyncio.Event())]
        last = weakref.ref(items[0])
        del items
        assert last() is None
    finally:
        gc.enable()
