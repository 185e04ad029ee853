"""The reaper: groups listed while they live, killed when their owner dies, whoever killed it
and even if its watchdog was killed first."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import psutil  # type: ignore[import-untyped]

from codeloop.system.reaper import Reaper

OWNER = textwrap.dedent(
    """
    import os, signal, subprocess, sys
    from codeloop.system.reaper import Reaper
    reaper = Reaper()
    group = subprocess.Popen(["sleep", "60"], start_new_session=True)
    reaper.watch(group.pid)
    if sys.argv[1] == "kill-watchdog":
        reaper._watchdog.kill()
        reaper._watchdog.wait()
        second = subprocess.Popen(["sleep", "60"], start_new_session=True)
        reaper.watch(second.pid)  # finds the watchdog gone and starts another
        print(second.pid)
    print(group.pid, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


def _dead(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True


def _wait_dead(pids: list[int]) -> None:
    deadline = time.monotonic() + 10
    while not all(_dead(p) for p in pids):
        assert time.monotonic() < deadline, f"still running: {pids}"
        time.sleep(0.05)


def test_a_watched_group_dies_with_its_owner() -> None:
    for mode in ("plain", "kill-watchdog"):
        run = subprocess.run(
            [sys.executable, "-c", OWNER, mode], capture_output=True, text=True, timeout=30
        )
        assert run.returncode == -signal.SIGKILL, run.stderr
        pids = [int(p) for p in run.stdout.split()]
        assert len(pids) == (2 if mode == "kill-watchdog" else 1)
        try:
            _wait_dead(pids)
        finally:
            for pid in pids:
                if not _dead(pid):
                    os.killpg(pid, signal.SIGKILL)


def test_groups_are_listed_only_while_they_live() -> None:
    reaper = Reaper()
    short = subprocess.Popen(["true"], start_new_session=True)
    long = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        reaper.watch(short.pid)
        reaper.watch(long.pid)
        short.wait()
        reaper.forget(short.pid)
        assert reaper.watched == {long.pid}
    finally:
        long.kill()
        long.wait()
    reaper.forget(long.pid)
    assert reaper.watched == frozenset()
