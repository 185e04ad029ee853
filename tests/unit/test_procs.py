"""Stopping a process group (system/procs.py): SIGTERM first, with a grace period, then SIGKILL for
whatever is left; the one way run_bounded (hooks, git) and the Bash tool stop their commands."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from pathlib import Path

from codeloop.system.procs import group_running, kill_group, run_bounded, signal_group


async def group(script: str, cwd: Path) -> asyncio.subprocess.Process:
    """`script` under sh, leading a process group of its own; returns once it has started."""
    proc = await asyncio.create_subprocess_exec(
        "sh",
        "-c",
        f"{script}; echo ready; sleep 100 & wait",
        cwd=cwd,
        stdout=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stdout is not None
    assert await proc.stdout.readline() == b"ready\n"
    return proc


async def test_a_group_that_stops_on_sigterm_gets_to_clean_up(tmp_path: Path) -> None:
    proc = await group("trap 'echo cleaned > done; exit 0' TERM", tmp_path)
    await kill_group(proc.pid)
    assert not group_running(proc.pid)
    assert (tmp_path / "done").read_text() == "cleaned\n"  # its trap ran: TERM came first
    assert await proc.wait() == 0  # it ended itself, in the grace it was given


async def test_what_ignores_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    # An ignored signal stays ignored across exec: the sleep ignores TERM too.
    proc = await group("trap '' TERM", tmp_path)
    await kill_group(proc.pid, grace=0.2)
    assert not group_running(proc.pid)
    assert await proc.wait() == -signal.SIGKILL


async def test_nothing_left_of_a_group_is_nothing_to_signal(tmp_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec("true", start_new_session=True)
    await proc.wait()  # reaped: no process of its group is left, not even a zombie
    assert not signal_group(proc.pid, 0)
    assert not signal_group(proc.pid, signal.SIGKILL)
    await kill_group(proc.pid)  # nothing to stop: returns at once, raises nothing


def test_zombies_do_not_count_as_running() -> None:
    dead = subprocess.Popen(["true"], start_new_session=True)
    try:
        # Exited, not reaped (WNOWAIT): a zombie, still a member its group's signals reach.
        os.waitid(os.P_PID, dead.pid, os.WEXITED | os.WNOWAIT)
        assert signal_group(dead.pid, 0)
        assert not group_running(dead.pid)
    finally:
        dead.wait()


async def test_a_timed_out_helper_gets_sigterm_before_sigkill(tmp_path: Path) -> None:
    script = "trap 'echo cleaned > done; exit 0' TERM; sleep 100 & wait"
    finished = await run_bounded(script, time_limit=0.3, cwd=tmp_path)
    assert finished.timed_out
    assert (tmp_path / "done").read_text() == "cleaned\n"
