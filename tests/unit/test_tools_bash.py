"""Bash against real processes: output, exit codes, the persistent cwd, timeouts, abort."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from codeloop.text import truncate_middle
from codeloop.tools.base import ToolContext, ToolInputError, ToolResult, Workspace
from codeloop.tools.bash import BashTool


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """tmp_path without symlinks, as `pwd -P` reports it."""
    return tmp_path.resolve()


@pytest.fixture
def ctx(root: Path) -> ToolContext:
    return ToolContext(Workspace(cwd=root))


async def bash(ctx: ToolContext, command: str, **raw: Any) -> ToolResult:
    tool = BashTool()
    return await tool.call(tool.parse({"command": command, **raw}), ctx)


def text_of(result: ToolResult) -> str:
    assert isinstance(result.content, str)
    return result.content


def is_gone(pid: int) -> bool:
    """Dead, or a zombie waiting for init to reap it (it no longer runs)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):  # it exited between the open and the read
        return True


async def wait_until_gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while not is_gone(pid):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


def written(path: Path) -> str:
    return path.read_text().strip() if path.exists() else ""


async def wait_for_file(path: Path, within: float = 5.0) -> str:
    deadline = time.monotonic() + within
    while not written(path):
        assert time.monotonic() < deadline, f"{path} never written"
        await asyncio.sleep(0.01)
    return written(path)


# --- schema -----------------------------------------------------------------------------------


def test_schema_has_claude_code_fields() -> None:
    schema = BashTool().spec().input_schema
    assert set(schema["properties"]) == {"command", "timeout", "description", "run_in_background"}
    assert schema["required"] == ["command"]
    assert schema["properties"]["timeout"]["maximum"] == 600_000


@pytest.mark.parametrize("timeout", [0, -5, 600_001, "soon", 1.5])
def test_invalid_timeouts_are_rejected(timeout: object) -> None:
    with pytest.raises(ToolInputError, match="timeout"):
        BashTool().parse({"command": "true", "timeout": timeout})


def test_valid_timeouts_are_accepted() -> None:
    assert BashTool().parse({"command": "true", "timeout": 600_000}).timeout == 600_000
    # null counts as an omitted field (local models send it): the default applies
    assert BashTool().parse({"command": "true", "timeout": None}).timeout == 120_000


def test_read_only_is_decided_by_the_parser() -> None:
    tool = BashTool()
    assert tool.is_read_only(tool.parse({"command": "ls -la | grep x"})) is True
    assert tool.is_read_only(tool.parse({"command": "ls; rm x"})) is False
    assert tool.is_concurrency_safe(tool.parse({"command": "sleep 1"})) is True
    assert tool.is_concurrency_safe(tool.parse({"command": "sleep 1; touch f"})) is False


# --- output and exit codes ----------------------------------------------------------------------


async def test_output(ctx: ToolContext) -> None:
    result = await bash(ctx, "echo hello")
    assert (text_of(result), result.is_error) == ("hello", False)


async def test_stdout_and_stderr_merged_in_order(ctx: ToolContext) -> None:
    result = await bash(ctx, "echo one; echo two >&2; echo three")
    assert text_of(result) == "one\ntwo\nthree"


async def test_non_zero_exit_is_an_error_with_output(ctx: ToolContext) -> None:
    result = await bash(ctx, "echo partial; exit 3")
    assert result.is_error
    assert text_of(result) == "partial\nExit code 3"


async def test_empty_output(ctx: ToolContext) -> None:
    assert text_of(await bash(ctx, "true")) == "(no output)"


async def test_environment_marks_codeloop_and_stdin_is_empty(ctx: ToolContext) -> None:
    assert text_of(await bash(ctx, 'echo "$CODELOOP"; cat')) == "1"


async def test_heredoc_and_trailing_comment_run_as_typed(ctx: ToolContext) -> None:
    result = await bash(ctx, "cat <<EOF\nline\nEOF\necho done # no newline after")
    assert text_of(result) == "line\ndone"


async def test_huge_output_keeps_head_and_tail(ctx: ToolContext) -> None:
    result = await bash(ctx, "seq 1 300000")
    text = text_of(result)
    assert text.startswith("1\n2\n3\n")
    assert "characters of output truncated" in text
    assert text.endswith("299999\n300000")
    # Only head and tail were kept in memory, yet the result is what cutting the whole would give.
    full = "".join(f"{i}\n" for i in range(1, 300_001))
    assert text == truncate_middle(full, BashTool.max_result_chars).rstrip("\n")


async def test_background_job_does_not_hold_the_call(ctx: ToolContext, tmp_path: Path) -> None:
    # The job keeps the output pipe open; waiting for EOF would run into the timeout.
    result = await bash(ctx, "sleep 100 & echo $! > pid; echo started", timeout=10_000)
    pid = int((tmp_path / "pid").read_text())
    try:
        assert (text_of(result), result.is_error) == ("started", False)
    finally:
        os.kill(pid, signal.SIGKILL)


# --- working directory ------------------------------------------------------------------------


async def test_cwd_persists_between_calls(ctx: ToolContext, root: Path) -> None:
    (root / "sub").mkdir()
    await bash(ctx, "cd sub")
    assert ctx.workspace.cwd == root / "sub"
    assert text_of(await bash(ctx, "pwd")) == str(root / "sub")


async def test_cwd_survives_exit_in_the_command(ctx: ToolContext, root: Path) -> None:
    (root / "sub").mkdir()
    result = await bash(ctx, "cd sub && exit 4")
    assert result.is_error
    assert ctx.workspace.cwd == root / "sub"


async def test_subshell_cd_does_not_move_cwd(ctx: ToolContext, root: Path) -> None:
    await bash(ctx, "(cd /); x=$(cd /; pwd)")
    assert ctx.workspace.cwd == root


async def test_deleted_cwd_falls_back_to_existing_parent(ctx: ToolContext, root: Path) -> None:
    result = await bash(ctx, "mkdir gone && cd gone && rmdir ../gone")
    assert ctx.workspace.cwd == root
    assert "gone no longer exists" in text_of(result)
    assert text_of(await bash(ctx, "pwd")) == str(root)


async def test_cwd_deleted_between_calls(ctx: ToolContext, root: Path) -> None:
    ctx.workspace.cwd = root / "missing" / "deeper"
    result = await bash(ctx, "pwd")
    assert text_of(result).startswith(str(root) + "\n")
    assert "no longer exists" in text_of(result)
    assert ctx.workspace.cwd == root


# --- streaming, timeout, abort ------------------------------------------------------------------


async def test_progress_streams_while_the_command_runs(ctx: ToolContext, tmp_path: Path) -> None:
    # The command waits for a file that only the progress callback creates: it can finish only
    # if "a" was delivered while it was still running.
    events: list[str] = []

    def progress(text: str) -> None:
        events.append(f"progress:{text}")
        if text.startswith("a"):
            (tmp_path / "go").touch()
            events.append("go")

    live = ToolContext(ctx.workspace, progress=progress)
    command = "echo a; while [ ! -e go ]; do sleep 0.01; done; echo b"
    result = await bash(live, command, timeout=20_000)
    assert (text_of(result), result.is_error) == ("a\nb", False)
    assert events == ["progress:a\n", "go", "progress:b\n"]


async def test_timeout_kills_the_whole_process_group(ctx: ToolContext, tmp_path: Path) -> None:
    result = await bash(ctx, "sleep 100 & echo $! > pid; echo started; sleep 100", timeout=300)
    grandchild = int((tmp_path / "pid").read_text())
    assert result.is_error
    assert text_of(result).startswith("started\n")
    assert "timed out after 0.3 s" in text_of(result)
    assert await wait_until_gone(grandchild)


async def test_abort_kills_the_command(ctx: ToolContext, tmp_path: Path) -> None:
    abort = asyncio.Event()

    def progress(text: str) -> None:
        if "started" in text:
            abort.set()

    live = ToolContext(ctx.workspace, abort=abort, progress=progress)
    result = await bash(live, "sleep 100 & echo $! > pid; echo started; sleep 100")
    grandchild = int((tmp_path / "pid").read_text())
    assert result.is_error
    assert "started" in text_of(result) and "interrupted" in text_of(result)
    assert await wait_until_gone(grandchild)


async def test_cancelling_the_call_kills_the_group(ctx: ToolContext, tmp_path: Path) -> None:
    task = asyncio.create_task(bash(ctx, "sleep 100 & echo $! > pid; sleep 100"))
    grandchild = int(await wait_for_file(tmp_path / "pid"))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_until_gone(grandchild)


def test_truncate_middle_with_no_room_keeps_only_the_marker() -> None:
    cut = truncate_middle("x" * 50, 0)
    assert "x" not in cut and "50 characters" in cut
