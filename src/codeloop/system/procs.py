"""Short-lived helper processes (hooks, git) with a time bound, and the one way codeloop
stops a process group (these, Bash's commands, background shells).

Each runs in its own session, so a timeout kills the whole process group: a hook script that
started a `sleep` or a pipeline leaves nothing behind, and nothing holds our pipes open. The
group dies with codeloop too, however codeloop ends (reaper.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from codeloop.system import child_watcher
from codeloop.system.reaper import REAPER
from codeloop.system.valueclass import valueclass

child_watcher.install()  # before a session starts its first process (git, at its start)

# After SIGTERM, how long a process group gets to exit before SIGKILL.
KILL_GRACE_SECONDS = 1.0
# Once the process has exited, how long to wait for its pipes to close: a background job
# started with `&` may hold them open forever, and nobody must wait for it.
DRAIN_SECONDS = 0.2
# Never ask for credentials: git runs here for batch tasks and worktrees, with nobody to answer.
_GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": ""}


class GitError(Exception):
    """git could not run or failed; the message says why (the last lines git wrote)."""


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a program codeloop starts for the model or the user's extensions
    (Bash, hooks, MCP servers): without OTEL_*, as Claude Code does, so an instrumented
    program the model runs does not export to codeloop's collector with its headers."""
    source = os.environ if env is None else env
    return {k: v for k, v in source.items() if not k.startswith("OTEL_")}


@valueclass(slots=True)
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
    REAPER.ready()
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
        await kill_group(proc.pid)
        # Reading to EOF lets the pipes close; what the process had said no longer matters.
        with contextlib.suppress(TimeoutError, OSError):
            await asyncio.wait_for(proc.communicate(), DRAIN_SECONDS)
        return Finished(None, "", "")
    except BaseException:
        signal_group(proc.pid, signal.SIGKILL)  # cancelled: no time to give it
        raise
    assert proc.returncode is not None
    return Finished(proc.returncode, _text(out), _text(err))


def signal_group(pgid: int, sig: int) -> bool:
    """Send `sig` to the process group; False when none of it is left (or none of it is
    ours to signal)."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def group_running(pgid: int) -> bool:
    """Whether a process of the group still runs. On Linux its zombies (dead, waiting for a
    parent to reap them, which in a container may never come) do not count; elsewhere, any
    member does."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return signal_group(pgid, 0)
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat(entry)
        if fields is not None and int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return True
    return False


def process_running(pid: int) -> bool:
    """Whether process `pid` still runs: on Linux a zombie (dead, not yet waited for) does
    not, whoever is to wait for it and however late."""
    if not Path("/proc/self/stat").exists():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    fields = _stat(Path("/proc") / str(pid))
    return fields is not None and fields[0] not in ("Z", "X")


def _stat(entry: Path) -> list[str] | None:
    """A process's /proc stat fields after its name: state, parent, group... (None: gone)."""
    try:
        return (entry / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


async def kill_group(pgid: int, grace: float = KILL_GRACE_SECONDS) -> None:
    """SIGTERM the process group, SIGKILL whatever of it still runs after `grace`; return
    once none of it runs (or a further `grace` later: a process stuck in the kernel outlasts
    any signal)."""
    if not signal_group(pgid, signal.SIGTERM):
        return
    if await _gone(pgid, grace):
        return
    signal_group(pgid, signal.SIGKILL)
    await _gone(pgid, grace)


async def _gone(pgid: int, within: float) -> bool:
    """Wait until no process of the group runs, at most `within` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    # Polling: nothing signals "the group is empty" (grandchildren are not our children).
    while group_running(pgid):
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(0.02)
    return True


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")


def git(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Run git; its stdout, or GitError with the last lines of what it said."""
    try:
        proc = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env={**os.environ, **_GIT_ENV, **(env or {})},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
        )
    except OSError as exc:
        raise GitError(f"cannot run git: {exc.strerror}") from None
    if proc.returncode != 0:
        said = proc.stderr.decode(errors="replace").strip().splitlines()
        detail = " ".join(said[-3:]) or f"exit status {proc.returncode}"
        raise GitError(f"git {args[0]} failed: {detail}")
    return proc.stdout.decode(errors="replace")
