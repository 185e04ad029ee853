"""Async iteration that an abort signal can interrupt, wherever the source is blocked."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TypeVar

T = TypeVar("T")


class Aborted(Exception):
    """The abort event fired while waiting for the next item."""


async def until_aborted(source: AsyncIterator[T], abort: asyncio.Event) -> AsyncIterator[T]:
    """Yield from `source` until it ends; raise `Aborted` the moment `abort` is set.

    A stalled network read cannot notice a flag, so each wait races the next item against the
    abort event, and the source is closed (its connection released) on every way out.
    """
    abort_wait = asyncio.ensure_future(abort.wait())
    try:
        while True:
            if abort.is_set():
                raise Aborted
            next_item = asyncio.ensure_future(anext(source))
            await asyncio.wait({next_item, abort_wait}, return_when=asyncio.FIRST_COMPLETED)
            if not next_item.done():
                next_item.cancel()
                await asyncio.gather(next_item, return_exceptions=True)
                raise Aborted
            try:
                item = next_item.result()
            except StopAsyncIteration:
                return
            yield item
    finally:
        abort_wait.cancel()
        aclose = getattr(source, "aclose", None)
        if aclose is not None:
            await aclose()
