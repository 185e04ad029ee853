"""Short-lived helper processes (hooks, git) with a time bound.

Each runs in its own session, so a timeout kills the whole process group: a hook script that
started a `sleep` or a pipeline leaves nothing behind, and nothing holds our pipes open. The
group dies with codeloop too, however codeloop ends (reaper.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from codeloop.reaper import REAPER

# After a kill, how long to wait for output still in the pipes.
DRAIN_SECONDS = 2.0


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a program codeloop starts for the model or the user's extensions
    (Bash, hooks, MCP servers): without OTEL_*, as Claude Code does, so an instrumented
    program the model runs does not export to codeloop's collector with its headers."""
    source = os.environ if env is None else env
    return {k: v for k, v in source.items() if not k.startswith("OTEL_")}


@dataclass(frozen=True, slots=True)
class Finished:
    # None: killed at the time limit.
    returncode: int | None
    stdout: str
    stderr: str

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


async def run_bounded(
    command: str | Sequence[str],
    *,
    time_limit: float,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
) -> Finished:
    """Run `command` (a string goes to /bin/sh, a sequence is exec'd), feeding it `stdin`.

    Raises OSError when the program cannot be started; cancelling the caller kills the group.
    """
    options = {
        "stdin": asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        "stdout": asyncio.subprocess.PIPE,
        "stderr": asyncio.subprocess.PIPE,
        "cwd": cwd,
        "env": None if env is None else dict(env),
        "start_new_session": True,
    }
    if isinstance(command, str):
        proc = await asyncio.create_subprocess_shell(command, **options)  # type: ignore[arg-type]
    else:
        proc = await asyncio.create_subprocess_exec(*command, **options)  # type: ignore[arg-type]
    REAPER.watch(proc.pid)
    try:
        return await _finish(proc, stdin, time_limit)
    finally:
        REAPER.forget(proc.pid)


async def _finish(
    proc: asyncio.subprocess.Process, stdin: bytes | None, time_limit: float
) -> Finished:
    try:
        out, err = await asyncio.wait_for(proc.communicate(stdin), time_limit)
    except TimeoutError:
        _kill_group(proc.pid)
        # Reading to EOF lets the pipes close; what the process had said no longer matters.
        with contextlib.suppress(TimeoutError, OSError):
            await asyncio.wait_for(proc.communicate(), DRAIN_SECONDS)
        return Finished(None, "", "")
    except BaseException:
        _kill_group(proc.pid)
        raise
    assert proc.returncode is not None
    return Finished(proc.returncode, _text(out), _text(err))


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")
