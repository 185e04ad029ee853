"""TaskOutput and TaskStop: read what a background shell wrote since the last look, and stop
it (Claude Code's names; the earlier BashOutput, KillShell and KillBash reach them as aliases,
with their `bash_id` / `shell_id` and BashOutput's `filter`). The shells themselves live in
workspace/background.py; Bash starts them (`run_in_background`).
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Annotated, Any, ClassVar

from codeloop.tools.base import Tool, ToolContext, ToolResult
from codeloop.tools.input import Arg, ToolInput
from codeloop.workspace.background import BackgroundShell

MAX_WAIT_MS = 600_000
DEFAULT_WAIT_MS = 30_000
OUTPUT_LIMIT = 30_000


async def start_in_background(
    ctx: ToolContext,
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: Path,
    command: str,
    description: str,
) -> ToolResult:
    """Bash with run_in_background: start the command and say how to follow it."""
    try:
        shell = await ctx.workspace.shells.start(
            argv, cwd=cwd, env=env, command=command, description=description
        )
    except OSError as exc:
        return ToolResult.error(f"Could not start the command: {exc}")
    return ToolResult(
        f"Command running in the background with ID: {shell.id} (pid {shell.pid}). Its output "
        f"goes to {shell.output_path}. Use TaskOutput with task_id {shell.id!r} to read new "
        "output (filter: a regex keeps only matching lines), TaskStop to stop it. It is "
        "stopped when the session ends."
    )


class TaskOutputInput(ToolInput):
    task_id: Annotated[
        str,
        Arg(
            "The ID of the background task (from Bash's run_in_background).",
            accepts=("bash_id", "shell_id"),
        ),
    ]
    block: Annotated[bool, Arg("Wait for the task to finish (up to timeout) before answering.")] = (
        True
    )
    timeout: Annotated[
        int,
        Arg(f"How long to wait, in ms (max {MAX_WAIT_MS}).", minimum=0, maximum=MAX_WAIT_MS),
    ] = DEFAULT_WAIT_MS
    filter: Annotated[
        str | None,
        Arg(
            "A regular expression: only output lines matching it are shown (the "
            "others are consumed)."
        ),
    ] = None

    @classmethod
    def prepared(cls, raw: dict[str, Any]) -> dict[str, Any]:
        """BashOutput (called with `bash_id`) answered at once, without waiting."""
        if "bash_id" in raw and "block" not in raw:
            return {**raw, "block": False}
        return raw


class TaskStopInput(ToolInput):
    task_id: Annotated[str | None, Arg("The ID of the background task to stop.")] = None
    shell_id: Annotated[str | None, Arg(hidden=True)] = None  # KillShell's name for it


def _find(ctx: ToolContext, shell_id: str) -> BackgroundShell | ToolResult:
    shell = ctx.workspace.shells.get(shell_id)
    if shell is not None:
        return shell
    known = ", ".join(s.id for s in ctx.workspace.shells.all()) or "none"
    return ToolResult.error(f"No background task {shell_id!r} (running or finished: {known}).")


class TaskOutputTool(Tool[TaskOutputInput]):
    name: ClassVar[str] = "TaskOutput"
    description: ClassVar[str] = (
        "Read the new output of a background task (a Bash command started with "
        "run_in_background): what it printed since you last looked, its status and exit "
        "code.\n- block=true (the default) waits for it to finish, up to timeout ms; "
        "block=false answers at once.\n- filter keeps only the lines a regular expression "
        "matches."
    )
    input_model = TaskOutputInput
    max_result_chars: ClassVar[int] = OUTPUT_LIMIT + 1_000

    def is_read_only(self, args: TaskOutputInput) -> bool:
        return True

    async def call(self, args: TaskOutputInput, ctx: ToolContext) -> ToolResult:
        try:
            pattern = re.compile(args.filter) if args.filter else None
        except re.error as exc:
            return ToolResult.error(f"filter is not a valid regular expression: {exc}")
        found = _find(ctx, args.task_id)
        if isinstance(found, ToolResult):
            return found
        shells = ctx.workspace.shells
        if args.block and found.status == "running":
            await shells.wait(found, args.timeout / 1000)
        text, left = shells.new_output(found, pattern, OUTPUT_LIMIT)
        status = found.status
        lines = [f"status: {status}"]
        if found.exit_code is not None:
            lines.append(f"exit code: {found.exit_code}")
        if status == "running":
            lines.append(f"running for {time.time() - found.started:.0f} s")
        shown = text if text.strip() else "(no new output)"
        if left:
            shown += f"\n... {left} more bytes: call TaskOutput again to read them"
        return ToolResult("\n".join([*lines, "output:", shown]))


class TaskStopTool(Tool[TaskStopInput]):
    name: ClassVar[str] = "TaskStop"
    description: ClassVar[str] = (
        "Stop a background task (a Bash command started with run_in_background), with "
        "everything it started."
    )
    input_model = TaskStopInput

    def is_read_only(self, args: TaskStopInput) -> bool:
        """It only ends a process this session started itself."""
        return True

    async def call(self, args: TaskStopInput, ctx: ToolContext) -> ToolResult:
        shell_id = args.task_id or args.shell_id
        if not shell_id:
            return ToolResult.error("Give the task_id of the background task to stop.")
        found = _find(ctx, shell_id)
        if isinstance(found, ToolResult):
            return found
        was = found.status
        await ctx.workspace.shells.stop(found)  # what it left running in its group too
        if was != "running":
            return ToolResult(f"Task {found.id} had already ended ({was}).")
        return ToolResult(f"Stopped task {found.id} ({found.command[:80]}).")
