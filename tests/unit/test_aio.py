"""Abortable iteration: a cancelled consumer leaves the source closed, not still running."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from codeloop.aio import watched


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
