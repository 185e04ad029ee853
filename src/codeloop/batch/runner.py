"""One task, start to end, in this process: its workspace, a headless conversation through the
front door, its result.

The same coroutine runs under the local worker pool and inside a Ray task. Whatever goes
wrong — a repository that cannot be cloned, a model that is not configured, a crash — ends as
a failed result with the reason, never as an exception that would stop the other tasks.
"""

from __future__ import annotations

import asyncio
import os
import time
import traceback
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from codeloop.batch import workspace
from codeloop.batch.results import Result
from codeloop.batch.tasks import Task
from codeloop.errors import CodeloopError
from codeloop.events import LoopEnd, Notice, Retrying
from codeloop.models.retry import RateLimiter
from codeloop.system.procs import GitError
from codeloop.system.valueclass import valueclass

if TYPE_CHECKING:
    from codeloop.frontdoor import Conversation


@valueclass
class RunConfig:
    """The same for every task of a batch (and sent as it is to Ray workers)."""

    workspaces: Path
    cache: Path
    # Laid over the process environment: on a cluster, the driver's model settings.
    env: dict[str, str] = field(default_factory=dict)
    settings: str | None = None
    sandbox: bool = False
    keep_workspaces: bool = True


async def open_conversation(
    task: Task, cwd: Path, config: RunConfig, limiter: RateLimiter | None
) -> Conversation:
    """The batch's only contact with how sessions are assembled: through the front door, a
    headless session in `cwd` whose model calls wait on the batch's shared limiter. Nobody
    answers what it asks: a call the rules leave to a person is denied."""
    from codeloop.frontdoor import Conversation
    from codeloop.options import Options

    options = Options(
        model=task.model,
        cwd=cwd,
        permission_mode=task.permission_mode,
        allowed_tools=task.allowed_tools,
        disallowed_tools=task.disallowed_tools,
        max_turns=task.max_turns,
        max_budget_usd=task.max_budget_usd,
        settings=config.settings,
        sandbox=config.sandbox,
        env={**os.environ, **config.env} if config.env else None,
        limiter=limiter,
    )
    return await Conversation.open(options)


def new_result(task: Task, config: RunConfig) -> Result:
    """A task's result before it ran: failed, with nothing spent, until the run says more."""
    return {
        "id": task.id,
        "status": "failed",
        "end_reason": None,
        "error": None,
        "repo": task.repo,
        "ref": task.ref,
        "base_commit": None,
        "model": task.model,
        "turns": 0,
        "usage": {},
        "cost_usd": 0.0,
        "retries": 0,
        "warnings": [],
        "final_text": "",
        "diff": "",
        "session_id": None,
        "transcript": None,
        "workspace": str(config.workspaces / task.id),
        "duration_s": 0.0,
    }


async def run_task(
    task: Task,
    source: str,
    config: RunConfig,
    limiter: RateLimiter | None = None,
    stop: asyncio.Event | None = None,
) -> Result:
    """Run `task` to its result. Once `stop` is set the session is interrupted (every tool
    call gets its result) and the result's status is "interrupted": not a result to keep."""
    started = time.monotonic()
    result = new_result(task, config)
    try:
        await _run(task, source, config, limiter, stop or asyncio.Event(), result)
    except (workspace.WorkspaceError, GitError, OSError, CodeloopError) as exc:
        # What the task's configuration or the disk got wrong (errors.py); the rest is a bug.
        result["error"] = str(exc) or type(exc).__name__
    except Exception as exc:
        result["error"] = f"internal error: {type(exc).__name__}: {exc}"
        result["traceback"] = traceback.format_exc()
    result["duration_s"] = round(time.monotonic() - started, 3)
    return result


async def _run(
    task: Task,
    source: str,
    config: RunConfig,
    limiter: RateLimiter | None,
    stop: asyncio.Event,
    result: Result,
) -> None:
    ws = await asyncio.to_thread(
        workspace.prepare, source, task.ref, config.workspaces / task.id, config.cache
    )
    result["base_commit"] = ws.base_commit
    if stop.is_set():
        result["status"] = "interrupted"
        return
    conversation = await open_conversation(task, ws.path, config, limiter)
    result["model"] = conversation.model
    result["session_id"] = conversation.session_id
    session = conversation.session  # read only: what the result reports
    if session.transcript is not None:
        result["transcript"] = str(session.transcript.path)
    end: LoopEnd | None = None
    interrupter = asyncio.ensure_future(_interrupt_on(stop, conversation))
    try:
        async for event in conversation.prompt(task.prompt):
            if isinstance(event, Retrying):
                result["retries"] += 1
            elif isinstance(event, Notice) and event.level != "info":
                result["warnings"].append(event.text)
            elif isinstance(event, LoopEnd):
                end = event
    finally:
        interrupter.cancel()
        await conversation.close()
        result["turns"] = session.turns
        result["usage"] = session.usage.to_dict()
        result["cost_usd"] = round(session.cost_usd, 6)
    assert end is not None, "a session's run ends with a LoopEnd"
    if stop.is_set() and end.reason.startswith("aborted"):
        result["status"] = "interrupted"
        return
    result["end_reason"] = end.reason
    result["final_text"] = end.final_text
    result["error"] = end.error
    result["diff"] = await asyncio.to_thread(workspace.diff, ws)
    result["status"] = "completed" if end.reason == "completed" else "failed"
    if not config.keep_workspaces:
        await asyncio.to_thread(workspace.remove, ws.path)


async def _interrupt_on(stop: asyncio.Event, conversation: Conversation) -> None:
    await stop.wait()
    conversation.interrupt()
