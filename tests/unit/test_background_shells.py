"""Background shells against real processes: started by Bash, read by TaskOutput (new output
only, filtered), stopped by TaskStop, and ended with their session or with a codeloop killed
by SIGKILL (checked by PID)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from codeloop.events import LoopEnd
from codeloop.permissions.policy import Policy
from codeloop.session import Session
from codeloop.session_config import SessionConfig
from codeloop.testing.scenario import tool_use, turn
from codeloop.testing.scripted import ScriptedModel
from codeloop.tools.background_tools import TaskOutputTool, TaskStopTool
from codeloop.tools.base import ToolContext, ToolResult, Workspace
from codeloop.tools.bash import BashTool
from codeloop.tools.registry import default_tools

# A codeloop session that starts `sleep 300` in the background (bash, sh and two sleeps in one
# group), says which group once all of it runs, and is killed with SIGKILL: no handler runs.
KILLED_SESSION = textwrap.dedent(
    """
    import asyncio, os, signal, sys, time
    from pathlib import Path
    from codeloop.testing.scripted import ScriptedModel
    from codeloop.permissions.policy import Policy
    from codeloop.session import Session, SessionConfig
    from codeloop.testing.scenario import tool_use, turn
    from codeloop.tools.base import Workspace
    from codeloop.tools.registry import default_tools
    from tests.unit.test_background_shells import group_members

    async def main():
        command = "sh -c 'sleep 300' & sleep 300"
        model = ScriptedModel([
            turn(tool_use("Bash", {"command": command, "run_in_background": True})),
            turn("Started it."),
        ])
        config = SessionConfig(
            model="m", system="s", max_tokens=100, policy=Policy("bypassPermissions")
        )
        session = Session(model, default_tools(), Workspace(cwd=Path(sys.argv[1])), config)
        [e async for e in session.submit("start a server")]
        (shell,) = session.workspace.shells.all()
        deadline = time.monotonic() + 10
        while len(group_members(shell.pid)) < 4 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        print(shell.pid, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)

    asyncio.run(main())
    """
)


async def call(tool: Any, ctx: ToolContext, **raw: Any) -> ToolResult:
    result: ToolResult = await tool.call(tool.parse(raw), ctx)
    return result


def text(result: ToolResult) -> str:
    assert isinstance(result.content, str)
    return result.content


def started_id(result: ToolResult) -> str:
    found = re.search(r"ID: (\w+)", text(result))
    assert found is not None, text(result)
    return found.group(1)


def alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped does not count)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def group_members(pgid: int) -> list[int]:
    """The running processes of process group `pgid`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(entry))
    return found


async def test_start_read_new_output_and_stop(tmp_path: Path) -> None:
    ctx = ToolContext(Workspace(cwd=tmp_path))
    script = "for i in 1 2 3; do echo line $i; done; echo ready; sleep 300"
    started = await call(BashTool(), ctx, command=script, run_in_background=True)
    assert not started.is_error
    shell_id = started_id(started)
    shell = ctx.workspace.shells.get(shell_id)
    assert shell is not None and alive(shell.pid)
    # Not blocking: what is there now; a second read only what is new (nothing).
    deadline = time.monotonic() + 10
    seen = ""
    while "ready" not in seen and time.monotonic() < deadline:
        seen += text(await call(TaskOutputTool(), ctx, task_id=shell_id, block=False))
        await asyncio.sleep(0.05)
    assert "line 1" in seen and "line 3" in seen and "status: running" in seen
    again = text(await call(TaskOutputTool(), ctx, task_id=shell_id, block=False))
    assert "(no new output)" in again and "line 1" not in again
    stopped = await call(TaskStopTool(), ctx, task_id=shell_id)
    assert not stopped.is_error and not alive(shell.pid)
    after = text(await call(TaskOutputTool(), ctx, task_id=shell_id, block=False))
    assert "status: killed" in after


async def test_bash_output_alias_filters_lines_and_does_not_wait(tmp_path: Path) -> None:
    ctx = ToolContext(Workspace(cwd=tmp_path))
    started = await call(
        BashTool(), ctx, command="printf 'ok 1\\nerr 2\\nok 3\\n'", run_in_background=True
    )
    shell_id = started_id(started)
    tool = TaskOutputTool()
    # BashOutput's spelling: bash_id and filter; it would not block (the shell exits anyway).
    shell = ctx.workspace.shells.get(shell_id)
    assert shell is not None
    assert await ctx.workspace.shells.wait(shell, 10)
    out = text(await call(tool, ctx, bash_id=shell_id, filter="^ok"))
    assert "ok 1" in out and "ok 3" in out and "err 2" not in out
    assert "status: completed" in out and "exit code: 0" in out
    # The lines the filter dropped were consumed too.
    assert "err 2" not in text(await call(tool, ctx, task_id=shell_id, block=False))


async def test_blocking_read_waits_for_the_end(tmp_path: Path) -> None:
    ctx = ToolContext(Workspace(cwd=tmp_path))
    started = await call(
        BashTool(), ctx, command="sleep 0.3; echo done; exit 3", run_in_background=True
    )
    out = text(await call(TaskOutputTool(), ctx, task_id=started_id(started), timeout=10_000))
    assert "done" in out and "status: failed" in out and "exit code: 3" in out


async def test_unknown_ids_and_bad_filters_are_errors(tmp_path: Path) -> None:
    ctx = ToolContext(Workspace(cwd=tmp_path))
    missing = await call(TaskOutputTool(), ctx, task_id="nope")
    assert missing.is_error and "No background task" in text(missing)
    started = await call(BashTool(), ctx, command="echo x", run_in_background=True)
    bad = await call(TaskOutputTool(), ctx, task_id=started_id(started), filter="(")
    assert bad.is_error and "regular expression" in text(bad)
    assert (await call(TaskStopTool(), ctx)).is_error


async def test_every_background_process_ends_with_the_session(tmp_path: Path) -> None:
    # The model starts `sleep 300` in the background (with a child of its own), then finishes.
    command = "sh -c 'sleep 300' & sleep 300"
    model = ScriptedModel(
        [
            turn(tool_use("Bash", {"command": command, "run_in_background": True})),
            turn("Started it."),
        ]
    )
    config = SessionConfig(
        model="m", system="s", max_tokens=100, policy=Policy("bypassPermissions")
    )
    session = Session(model, default_tools(), Workspace(cwd=tmp_path), config)
    events = [e async for e in session.submit("start a server")]
    assert isinstance(events[-1], LoopEnd) and events[-1].reason == "completed"
    (shell,) = session.workspace.shells.all()
    deadline = time.monotonic() + 10
    # Polling: nothing signals that the shell has started its children.
    while len(group_members(shell.pid)) < 3 and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    pids = group_members(shell.pid)
    assert len(pids) >= 3, pids  # bash, sh and two sleeps outlived the call
    await session.aclose()
    assert [pid for pid in pids if alive(pid)] == []


def test_background_processes_die_with_a_killed_codeloop(tmp_path: Path) -> None:
    root = Path(__file__).parents[2]
    run = subprocess.run(
        [sys.executable, "-c", KILLED_SESSION, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=root,
    )
    assert run.returncode == -signal.SIGKILL, run.stderr
    pgid = int(run.stdout)
    try:
        # Polling: the reaper's watchdog kills the group once it reads the end of its pipe.
        deadline = time.monotonic() + 10
        while group_members(pgid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert group_members(pgid) == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
