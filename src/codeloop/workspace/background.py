"""Background shells: commands started with Bash's `run_in_background`, outliving the call.

Each runs in its own process group with its output (stdout and stderr together) going straight
to a file, so nothing has to read it while the model works on; TaskOutput reads what is new
since the last read (optionally only the lines a regex matches), and TaskStop ends the group.
The registry belongs to the session (sub-agents share it): when the session ends, every
process it started ends too, by its process group; and each group is registered with the
crash reaper (system/reaper.py), so that one codeloop leaves behind when it exits before its session
ends, even by `kill -9`, is killed then: no `sleep 300` or dev server outlives codeloop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import tempfile
import time
from dataclasses import field
from pathlib import Path
from typing import Literal

from codeloop.system.procs import group_running, kill_group
from codeloop.system.reaper import REAPER
from codeloop.system.valueclass import valueclass

# After SIGTERM, how long a group gets before SIGKILL.
STOP_GRACE_SECONDS = 1.0
Status = Literal["running", "completed", "failed", "killed"]


@valueclass(frozen=False, eq=False)
class BackgroundShell:
    id: str
    command: str
    description: str
    output_path: Path
    process: asyncio.subprocess.Process
    started: float = field(default_factory=time.time)
    # Bytes of the output file already shown to the model.
    shown: int = 0
    killed: bool = False
    exited: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def exit_code(self) -> int | None:
        return self.process.returncode

    @property
    def status(self) -> Status:
        code = self.process.returncode
        if code is None:
            return "running"
        if self.killed:
            return "killed"
        return "completed" if code == 0 else "failed"


class BackgroundShells:
    """`folder` holds the output files (the session's folder; a temporary one otherwise)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self._shells: dict[str, BackgroundShell] = {}
        self._count = 0

    def all(self) -> list[BackgroundShell]:
        """Every shell of the session, oldest first (the UI lists them)."""
        return list(self._shells.values())

    def get(self, shell_id: str) -> BackgroundShell | None:
        return self._shells.get(shell_id.strip())

    async def start(
        self, argv: list[str], *, cwd: Path, env: dict[str, str], command: str, description: str
    ) -> BackgroundShell:
        """Start `argv` in a new process group; raises OSError when it cannot start."""
        self._count += 1
        shell_id = f"b{self._count}{os.urandom(2).hex()}"
        folder = self._folder()
        path = folder / f"{shell_id}.output"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        REAPER.ready()
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=fd,
                stderr=fd,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
        finally:
            os.close(fd)
        REAPER.watch(process.pid)
        shell = BackgroundShell(shell_id, command, description, path, process)
        self._shells[shell_id] = shell
        watcher = asyncio.ensure_future(process.wait())
        watcher.add_done_callback(lambda _: self._exited(shell))
        return shell

    @staticmethod
    def _exited(shell: BackgroundShell) -> None:
        shell.exited.set()
        REAPER.forget(shell.pid)  # kept while a process of its group still runs

    def _folder(self) -> Path:
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="codeloop-background-"))
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        return self.folder

    async def wait(self, shell: BackgroundShell, seconds: float) -> bool:
        """Wait up to `seconds` for the shell to exit; whether it has."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(shell.exited.wait(), seconds)
        return shell.exited.is_set()

    def new_output(
        self, shell: BackgroundShell, pattern: re.Pattern[str] | None, limit: int
    ) -> tuple[str, int]:
        """What the shell wrote since the last read (at most `limit` characters, the rest kept
        for the next read), filtered to the lines `pattern` matches (the others are consumed,
        as Claude Code's BashOutput does); and how many characters are still unread."""
        try:
            with shell.output_path.open("rb") as file:
                file.seek(shell.shown)
                data = file.read()
        except OSError:
            return "", 0
        if shell.status == "running":
            # A line still being written is left for the next read.
            cut = data.rfind(b"\n") + 1
            data = data[:cut] if cut else b""
        taken = data[: limit * 4]
        text = taken.decode("utf-8", errors="replace")
        if len(text) > limit:
            text = text[:limit]
            taken = text.encode("utf-8", errors="replace")
        shell.shown += len(taken)
        left = len(data) - len(taken)
        if pattern is not None:
            text = "\n".join(line for line in text.splitlines() if pattern.search(line))
        return text, left

    async def stop(self, shell: BackgroundShell) -> None:
        """SIGTERM the shell's process group, then SIGKILL what is left after a grace period."""
        if shell.exit_code is not None and not group_running(shell.pid):
            return
        shell.killed = shell.exit_code is None
        await kill_group(shell.pid, STOP_GRACE_SECONDS)
        await self.wait(shell, STOP_GRACE_SECONDS)  # its exit status, now that it is gone
        REAPER.forget(shell.pid)

    async def aclose(self) -> None:
        """The session ends: every background process ends with it."""
        await asyncio.gather(*(self.stop(s) for s in self._shells.values()))
