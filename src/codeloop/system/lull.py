"""Lulls: the moments a program only waits, when work that must not delay it may run.

The foreground (the main loop's model request) is in a lull while it waits on the network for
more of its answer: sent, and nothing of the answer arrived and unread. Background work (a
tool-use summary's side request, side_requests.py) takes its steps only in a lull, or while
its owner waits for it anyway, so its CPU time never falls between one answer's end and the
next request, where it would lengthen the turn (issue 38, bench/tool_summaries.py). One lull
per event loop: the transport marks its waits (models/http11.py), background steps wait for
one.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import select
import time
import weakref
from collections.abc import AsyncIterator, Callable

# Whether the running task's work is background work (set by the task itself: the tasks it
# starts inherit it).
_BACKGROUND: contextvars.ContextVar[bool] = contextvars.ContextVar("background", default=False)
# The watchdog of the stream the running task reads (aio.watched), as (pause, resume): its clock
# stops while background work waits for a lull, since that wait is ours, not the server's
# silence (a label's answer may wait out a long tool).
_WATCHDOG: contextvars.ContextVar[tuple[Callable[[], None], Callable[[], None]] | None] = (
    contextvars.ContextVar("watchdog", default=None)
)


def watch_with(pause: Callable[[], None], resume: Callable[[], None]) -> None:
    """The running task reads a stream whose watchdog these pause and resume."""
    _WATCHDOG.set((pause, resume))


class Wait:
    """One wait of the foreground, on a socket (`fd`) or on the background itself (None). It
    ends as its data arrives (`end`, before the waiting task runs again) or when it leaves."""

    def __init__(self, lull: Lull, fd: int | None) -> None:
        self.lull, self.fd = lull, fd
        self.began = time.monotonic()

    def end(self) -> None:
        self.lull.end(self)

    def __enter__(self) -> Wait:
        return self

    def __exit__(self, *exc: object) -> None:
        self.end()


class Lull:
    """The foreground's waits under way; a lull while there is one and none of their sockets
    has data (arrived, not yet handed to its reader).

    Waits are marked only while background work is pending (`pending`): otherwise a read costs
    the foreground nothing more. Until the foreground has marked a wait (`marks`: its model is
    reached through codeloop's transport), nothing tells a lull, and background work goes on at
    once, as it would without lulls (httpx's transport behind a proxy, an in-process model)."""

    def __init__(self) -> None:
        self.pending = 0  # background works under way (background_work)
        self.marks = False
        self.begun = 0  # the foreground's waits so far
        self._waits: list[Wait] = []
        self._opened = asyncio.Event()
        self._ended = asyncio.Event()  # a new one after each wait ends

    @property
    def is_open(self) -> bool:
        if not self._waits:
            return False
        fds = [wait.fd for wait in self._waits if wait.fd is not None]
        return not fds or not select.select(fds, [], [], 0)[0]

    def reading(self, fd: int | None) -> contextlib.AbstractContextManager[Wait | None]:
        """A foreground read on socket `fd`, for a `with` block: a wait while background work
        is pending (its steps run in it), else nothing to mark."""
        self.marks = True
        return self.waiting(fd) if self.pending else contextlib.nullcontext()

    def waiting(self, fd: int | None = None) -> Wait:
        """A wait of the foreground, for a `with` block."""
        self.marks = True
        self.begun += 1
        wait = Wait(self, fd)
        self._waits.append(wait)
        self._opened.set()
        return wait

    def end(self, wait: Wait) -> None:
        if wait in self._waits:
            self._waits.remove(wait)
            if not self._waits:
                self._opened.clear()
            self._ended.set()
            self._ended = asyncio.Event()

    async def wait(self) -> None:
        """Return in a lull (checked again on waking: it may have ended meanwhile), or at
        once if the foreground does not mark its waits. The watchdog of the stream the task
        reads stops its clock meanwhile."""
        if not self.marks or self.is_open:
            return
        watchdog = _WATCHDOG.get()
        if watchdog is not None:
            watchdog[0]()
        try:
            while not self.is_open:  # `marks`, once set, stays
                await self._changed()
        finally:
            if watchdog is not None:
                watchdog[1]()

    async def _changed(self) -> None:
        """Until the lull may have opened: the foreground's turn ends (data arrived), or it
        begins a wait."""
        if self._waits:  # data arrived: the foreground's turn, then look again
            await self._ended.wait()
        else:
            await self._opened.wait()

    async def settled(self, seconds: float, tries: int) -> bool:
        """Return True in a lull whose wait has lasted `seconds` already: one likely to last
        a while longer (a model thinking), not one a server answering at once is about to
        end, which a step of a millisecond would outlast. False once `tries` waits in a row
        have ended sooner: this foreground's waits are too short to use."""
        first = self.begun
        while self.begun - first < tries:
            if not self.is_open:
                await self._changed()
                continue
            wait = self._waits[0]
            waited = time.monotonic() - wait.began
            if waited < seconds:
                await asyncio.sleep(seconds - waited)
            if wait in self._waits and self.is_open:
                return True
        return False


_LULLS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Lull] = weakref.WeakKeyDictionary()


def lull() -> Lull:
    """The running event loop's lull."""
    loop = asyncio.get_running_loop()
    found = _LULLS.get(loop)
    if found is None:
        found = _LULLS[loop] = Lull()
    return found


def background() -> bool:
    """Whether the running task does background work."""
    return _BACKGROUND.get()


@contextlib.asynccontextmanager
async def background_work() -> AsyncIterator[None]:
    """The block is background work (and so are the tasks it starts): it begins in a lull,
    and waits for one wherever it waits on the network (models/http11.py)."""
    token = _BACKGROUND.set(True)
    found = lull()
    found.pending += 1
    try:
        await found.wait()
        yield
    finally:
        found.pending -= 1
        _BACKGROUND.reset(token)


# How long a foreground wait lasts before steps run in it: a server answering at once ends its
# wait within ~1 ms (a step run then would delay reading the answer), a model thinking lasts
# hundreds. After SHORT_WAITS shorter ones in a row, steps are refused: waiting for a lull that
# does not come costs every read of the answer a look at the lull.
SETTLED_SECONDS = 0.003
SHORT_WAITS = 4


class _Steps:
    """Short synchronous steps waiting for a lull, and the background task taking them one
    at a time (one per event loop)."""

    def __init__(self) -> None:
        self.queue: list[Callable[[], object]] = []
        self.task: asyncio.Task[None] | None = None
        self.refused = False  # the foreground's waits proved too short: no more steps

    async def drain(self) -> None:
        async with background_work():
            while self.queue:
                if not await lull().settled(SETTLED_SECONDS, SHORT_WAITS):
                    self.queue.clear()  # each step's owner does it itself, when it must
                    self.refused = True
                    return
                if self.queue:
                    self.queue.pop(0)()


_STEPS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Steps] = weakref.WeakKeyDictionary()


def in_lull(step: Callable[[], object]) -> bool:
    """Run `step`, short and synchronous (importing a module, loading a tool), as
    background work in the foreground's next lull that has lasted SETTLED_SECONDS, after the
    steps queued before it, and never outside one (a foreground that never waits on the
    network runs none, and one whose waits prove too short drops them); False, queueing
    nothing, outside an event loop or behind such a foreground. Work a run may need a moment
    later goes here rather than between an answer and the next request: its owner does it
    itself when it must."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    steps = _STEPS.get(loop)
    if steps is None:
        steps = _STEPS[loop] = _Steps()
    if steps.refused:
        return False
    steps.queue.append(step)
    if steps.task is None or steps.task.done():
        steps.task = loop.create_task(steps.drain())
    return True


async def lull_steps_done() -> None:
    """Wait until the steps queued in this event loop have run (each in a lull)."""
    steps = _STEPS.get(asyncio.get_running_loop())
    while steps is not None and steps.task is not None and not steps.task.done():
        await asyncio.shield(steps.task)
