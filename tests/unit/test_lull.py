"""Lulls (codeloop.system.lull): background work runs only while the foreground waits on a
socket with nothing arrived, or while its owner waits for it."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

from codeloop.system.aio import until_aborted, watched
from codeloop.system.lull import (
    SETTLED_SECONDS,
    SHORT_WAITS,
    background,
    background_work,
    in_lull,
    lull,
    lull_steps_done,
)

LIMIT = 30.0  # generous: the machine is shared


async def _background(done: list[str], name: str) -> None:
    async with background_work():
        assert background()
        done.append(name)
    assert not background()


async def test_background_work_waits_for_the_foreground_to_wait() -> None:
    done: list[str] = []
    with lull().waiting():  # an earlier wait: the foreground marks its waits
        pass
    work = asyncio.ensure_future(_background(done, "label"))
    for _ in range(5):  # its turns come and go: no lull, no step
        await asyncio.sleep(0)
    assert done == [] and not lull().is_open
    left, right = socket.socketpair()
    with left, right, lull().waiting(left.fileno()):
        await asyncio.wait_for(work, LIMIT)
    assert done == ["label"] and not background()


async def test_data_arrived_ends_the_lull_before_the_reader_runs() -> None:
    left, right = socket.socketpair()
    with left, right, lull().waiting(left.fileno()) as wait:
        assert lull().is_open
        right.send(b"answer")  # in the socket, not read yet: the foreground's turn
        assert not lull().is_open
        left.recv(16)
        assert lull().is_open
        wait.end()  # handed to its reader: the wait is over
        assert not lull().is_open


async def test_an_owner_waiting_for_its_background_work_lets_it_run() -> None:
    done: list[str] = []
    with lull().waiting():  # no socket: the owner waits for nothing but this work
        await asyncio.wait_for(_background(done, "label"), LIMIT)
    assert done == ["label"] and not lull().is_open


async def test_a_background_stream_is_consumed_only_in_a_lull() -> None:
    """codeloop.system.aio.watched (under until_aborted): a background task's items wait
    for a lull, however they come (a side request's answer parsed into events, a hop each)."""
    got: list[int] = []
    more, first = asyncio.Event(), asyncio.Event()

    async def source() -> AsyncIterator[int]:
        yield 1
        await more.wait()
        yield 2

    async def consume() -> None:
        async with background_work():
            async for item in until_aborted(source(), asyncio.Event()):
                got.append(item)
                first.set()

    with lull().waiting():
        work = asyncio.ensure_future(consume())
        await asyncio.wait_for(first.wait(), LIMIT)
    more.set()  # the second item is there, outside a lull
    for _ in range(10):
        await asyncio.sleep(0)
    assert got == [1]
    with lull().waiting():
        await asyncio.wait_for(work, LIMIT)
    assert got == [1, 2]


async def test_a_foreground_that_marks_no_wait_holds_nothing_up() -> None:
    """Behind a transport that marks no wait (httpx's, through a proxy) or with a model in
    this process, nothing tells a lull: background work goes on at once."""
    done: list[str] = []
    await asyncio.wait_for(_background(done, "label"), LIMIT)
    assert done == ["label"]


async def test_a_foreground_read_is_a_wait_only_while_background_work_is_pending() -> None:
    left, right = socket.socketpair()
    with left, right:
        with lull().reading(left.fileno()) as wait:
            assert wait is None and not lull().is_open  # nothing pending: nothing marked
        started, release = asyncio.Event(), asyncio.Event()

        async def pending() -> None:
            async with background_work():
                started.set()
                await release.wait()

        work = asyncio.ensure_future(pending())
        await asyncio.sleep(0)  # it has begun: pending, waiting for a lull
        with lull().reading(left.fileno()) as wait:
            assert wait is not None and lull().is_open
            await asyncio.wait_for(started.wait(), LIMIT)
        release.set()
        await asyncio.wait_for(work, LIMIT)
        with lull().reading(left.fileno()) as wait:
            assert wait is None


async def test_waiting_for_a_lull_is_not_the_servers_silence() -> None:
    """A background stream's watchdog stops its clock while the stream waits for a lull (a
    label's answer may wait out a long tool): no timeout, the item comes in the next lull."""
    with lull().waiting():  # an earlier wait: the foreground marks its waits
        pass
    entered, go = asyncio.Event(), asyncio.Event()
    got: list[object] = []

    async def source() -> AsyncIterator[int]:
        entered.set()
        await go.wait()  # the answer's bytes are in
        await lull().wait()  # parsed only in a lull, as the transport does
        yield 1

    async def consume() -> None:
        async with background_work():
            async for item in watched(source(), asyncio.Event(), idle_timeout=0.05):
                got.append(item)

    with lull().waiting():
        work = asyncio.ensure_future(consume())
        await asyncio.wait_for(entered.wait(), LIMIT)
    go.set()
    await asyncio.sleep(0.3)  # six idle timeouts pass with no lull: not a stall
    assert not work.done() and got == []
    with lull().waiting():
        await asyncio.wait_for(work, LIMIT)
    assert got == [1]


async def test_steps_run_in_order_and_only_in_a_lull() -> None:
    """`in_lull`: short steps queued for the foreground's next wait on the network, one at a
    time; a foreground that has not waited yet runs none (unlike background work, which goes
    on at once behind a transport that marks no wait)."""
    ran: list[int] = []
    assert in_lull(lambda: ran.append(1)) and in_lull(lambda: ran.append(2))
    for _ in range(5):  # the steps' turns come and go: no lull, nothing runs
        await asyncio.sleep(0)
    assert ran == [] and not lull().marks
    with lull().waiting():
        await asyncio.wait_for(lull_steps_done(), LIMIT)
    assert ran == [1, 2]
    assert in_lull(lambda: ran.append(3))
    for _ in range(5):
        await asyncio.sleep(0)
    assert ran == [1, 2]
    with lull().waiting():
        await asyncio.wait_for(lull_steps_done(), LIMIT)
    assert ran == [1, 2, 3]


def test_outside_an_event_loop_no_step_is_queued() -> None:
    assert not in_lull(lambda: None)


async def test_waits_too_short_to_use_refuse_the_steps() -> None:
    """A foreground whose waits end before SETTLED_SECONDS (a server answering at once) runs
    no step: a step there would delay reading the answer. After SHORT_WAITS of them the
    queued steps are dropped and new ones refused, so no read looks at the lull again."""
    ran: list[int] = []
    assert in_lull(lambda: ran.append(1))
    await asyncio.sleep(0)
    for _ in range(SHORT_WAITS):
        with lull().waiting():  # over at once
            await asyncio.sleep(0)
    await asyncio.wait_for(lull_steps_done(), LIMIT)
    assert ran == [] and not in_lull(lambda: ran.append(2))
    with lull().waiting():
        await asyncio.sleep(SETTLED_SECONDS * 2)
    assert ran == []
