"""Process groups that die with codeloop, however it ends, `kill -9` included.

Bash commands and hooks run in process groups of their own, so that a timeout or an abort can
kill everything they started. But nothing ends those groups when codeloop itself dies:
PR_SET_PDEATHSIG reaches one child and is lost across its fork (the shell's `sleep` would
survive), and a SIGKILL runs no handler. So a watchdog does it: a tiny POSIX shell, started on
first use in a session of its own (terminal signals spare it) with its output on /dev/null,
reads the list of live groups from a pipe whose write end only codeloop holds (it is not
inherited). When codeloop exits, the kernel closes that pipe; the watchdog reads EOF, kills
every group still listed, and exits. One watchdog serves the whole process.

Groups are listed while they have processes: each `forget` (a command that ended) and each
`watch` drops the groups that are gone, so the list stays short and a dead group's id is not
kept long enough to be reused.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading

# Ignores the signals a terminal or a `kill` of codeloop's own group would send it; keeps the
# last list it was told; at EOF kills each group on it.
WATCHDOG = (
    'trap "" INT HUP TERM QUIT; groups=; '
    "while IFS= read -r line; do groups=$line; done; "
    'for g in $groups; do kill -9 -"$g" 2>/dev/null; done'
)


class Reaper:
    def __init__(self) -> None:
        self._groups: set[int] = set()
        self._lock = threading.Lock()
        self._pipe: int | None = None
        self._watchdog: subprocess.Popen[bytes] | None = None

    def ready(self) -> None:
        """Start the watchdog now, before a group is started: registering the group is then one
        write, not a watchdog's start while the group already runs unwatched (a kill -9 of
        codeloop in that window left the group behind)."""
        with self._lock:
            self._ensure()

    def watch(self, pgid: int) -> None:
        """Kill group `pgid` when codeloop dies (its leader has just started)."""
        with self._lock:
            self._groups = {g for g in self._groups if _alive(g)} | {pgid}
            self._tell()

    def forget(self, pgid: int) -> None:
        """A command ended: stop watching its group once nothing of it is left."""
        with self._lock:
            alive = {g for g in self._groups if _alive(g)}
            if alive != self._groups:
                self._groups = alive
                self._tell()

    @property
    def watched(self) -> frozenset[int]:
        return frozenset(self._groups)

    def _tell(self) -> None:
        line = (" ".join(str(g) for g in sorted(self._groups)) + "\n").encode()
        for _ in range(2):  # a watchdog killed from outside is started again, once
            try:
                os.write(self._ensure(), line)
                return
            except OSError:
                self._close()

    def _ensure(self) -> int:
        if self._pipe is not None:
            return self._pipe
        read, write = os.pipe()  # not inheritable: no command started later holds it open
        try:
            self._watchdog = subprocess.Popen(
                ["/bin/sh", "-c", WATCHDOG],
                stdin=read,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            os.close(write)
            raise
        finally:
            os.close(read)
        self._pipe = write
        return write

    def _close(self) -> None:
        if self._pipe is not None:
            with contextlib.suppress(OSError):
                os.close(self._pipe)
            self._pipe = None


def _alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


REAPER = Reaper()
"""The process's one reaper: every caller that starts a process group registers it here."""
