"""Child processes waited for through a pidfd on Python 3.11, as 3.12 does by itself.

3.11's asyncio waits for each child in a thread of its own (ThreadedChildWatcher): every Bash
call, hook and git run started a thread and waited for it to start (~0.1 ms, ~0.5 ms the first
time, for its stack), and its end came back through the loop's self-pipe. A pidfd (Linux 5.3+)
is a descriptor the loop reads when the child exits; 3.12 uses one when the kernel allows it.
3.11's own PidfdChildWatcher serves only the loop it was attached to, and codeloop runs loops
in several threads, so this one watches from the loop that starts the child, as 3.12's does.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from typing import TypeVarTuple, Unpack

__all__ = ["install"]

_Ts = TypeVarTuple("_Ts")


class _PidfdWatcher(asyncio.AbstractChildWatcher):
    def __init__(self) -> None:
        self._watched: dict[int, tuple[asyncio.AbstractEventLoop, int]] = {}

    def add_child_handler(
        self, pid: int, callback: Callable[[int, int, Unpack[_Ts]], object], *args: *_Ts
    ) -> None:
        loop = asyncio.get_running_loop()  # the spawning loop: its thread gets the exit
        pidfd = os.pidfd_open(pid)
        self._watched[pid] = loop, pidfd
        loop.add_reader(pidfd, self._exited, pid, callback, args)

    def _exited(
        self, pid: int, callback: Callable[[int, int, Unpack[_Ts]], object], args: tuple[*_Ts]
    ) -> None:
        self._forget(pid)
        try:
            _, status = os.waitpid(pid, 0)
            returncode = os.waitstatus_to_exitcode(status)
        except ChildProcessError:  # reaped elsewhere: its status is lost, as asyncio reports
            returncode = 255
        callback(pid, returncode, *args)

    def remove_child_handler(self, pid: int) -> bool:
        return self._forget(pid)

    def _forget(self, pid: int) -> bool:
        watched = self._watched.pop(pid, None)
        if watched is None:
            return False
        loop, pidfd = watched
        if not loop.is_closed():
            loop.remove_reader(pidfd)
        os.close(pidfd)
        return True

    def attach_loop(self, loop: asyncio.AbstractEventLoop | None) -> None:
        """Nothing to attach: each child is watched from the loop that started it."""

    def close(self) -> None:
        for pid in list(self._watched):
            self._forget(pid)

    def is_active(self) -> bool:
        return True

    def __enter__(self) -> _PidfdWatcher:
        return self

    def __exit__(self, *exc_info: object) -> None:
        return None


def install() -> None:
    """On 3.11 with pidfds allowed (a kernel before 5.3, or a seccomp policy, may refuse
    them), wait for children through them; elsewhere leave asyncio as it is."""
    global _installed
    if _installed or sys.version_info >= (3, 12) or not hasattr(os, "pidfd_open"):
        return
    _installed = True
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return
    asyncio.set_child_watcher(_PidfdWatcher())


_installed = False
