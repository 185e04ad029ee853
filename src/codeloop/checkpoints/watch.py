"""Which folders changed since the last snapshot, as Linux's inotify reports them.

A snapshot with a watcher lists and stats only the folders something happened in; the rest
keep their trees. Every change made through a watched folder is queued by the kernel as it
happens, so draining the queue at the start of a snapshot covers all that finished before it.
Whenever the answer could be incomplete — the queue overflowed, a watch could not be added (the
per-user limit), no inotify (another OS) — `drain` says so and the snapshot reads everything,
as it does without a watcher. What inotify cannot see (writes through a shared memory map, or
through a hard link from outside the workspace, or another machine writing a network share)
is caught by the full scans a rewind and every new process make.
"""

from __future__ import annotations

import errno
import os
import struct
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ctypes

IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_CLOSE_WRITE = 0x008
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_EXCL_UNLINK = 0x04000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000

MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
    | IN_DONT_FOLLOW
    | IN_EXCL_UNLINK
)
_EVENT = struct.Struct("iIII")


class Watcher:
    def __init__(self, fd: int, libc: ctypes.CDLL) -> None:
        self._fd = fd
        self._libc = libc
        self._paths: dict[int, str] = {}  # watch descriptor -> folder
        self._wds: dict[str, int] = {}
        self._dirty: set[str] = set()
        self._lost = True  # nothing is known until a full scan has added the watches
        self._broken = False  # a watch could not be added: never trusted again

    @staticmethod
    def create() -> Watcher | None:
        """A watcher, or None where inotify is not available (or the instance limit is hit)."""
        if not sys.platform.startswith("linux"):
            return None
        import ctypes  # only here: a session that never writes does not load it

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        except (OSError, AttributeError):
            return None
        return Watcher(fd, libc) if fd >= 0 else None

    def watching(self, folder: str) -> bool:
        return folder in self._wds

    def watch(self, folder: str) -> None:
        """Watch a folder the snapshot is about to list; on failure every later snapshot is
        a full one (the answer would be incomplete)."""
        import ctypes

        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(folder), MASK)
        if wd < 0:
            if ctypes.get_errno() in (errno.ENOSPC, errno.ENOMEM):
                self._broken = True
            self._lost = True
            return
        old = self._paths.get(wd)
        if old is not None and old != folder:
            self._wds.pop(old, None)  # the same folder, moved: it has one watch
        self._paths[wd] = folder
        self._wds[folder] = wd

    def drain(self) -> set[str] | None:
        """The folders whose own entries changed since the last drain (a name in them, or the
        folder itself, which changes its parent's entry); None when that is not known."""
        self._read()
        dirty, lost = self._dirty, self._lost or self._broken
        self._dirty, self._lost = set(), self._broken
        return None if lost else dirty

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                self._lost = True
                return
            offset = 0
            while offset + _EVENT.size <= len(data):
                wd, mask, _, length = _EVENT.unpack_from(data, offset)
                name = data[offset + _EVENT.size : offset + _EVENT.size + length].rstrip(b"\0")
                offset += _EVENT.size + length
                self._event(wd, mask, os.fsdecode(name))

    def _event(self, wd: int, mask: int, name: str) -> None:
        if mask & IN_Q_OVERFLOW:
            self._lost = True
            return
        folder = self._paths.get(wd)
        if folder is None:
            return
        if name:
            self._dirty.add(folder)
            if mask & IN_ISDIR and mask & (IN_MOVED_FROM | IN_DELETE):
                self._forget(os.path.join(folder, name))
            return
        # The folder itself: its mode changed, or it was moved or removed.
        self._dirty.add(folder)
        self._dirty.add(os.path.dirname(folder))
        if mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED):
            self._forget(folder)

    def _forget(self, folder: str) -> None:
        """A folder moved or gone: it and everything below it must be listed again (their
        watches, if they survive, are re-bound to the new paths as the scan finds them)."""
        prefix = folder + os.sep
        for path in [p for p in self._wds if p == folder or p.startswith(prefix)]:
            wd = self._wds.pop(path)
            if self._paths.get(wd) == path:
                del self._paths[wd]
        self._dirty.add(folder)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
