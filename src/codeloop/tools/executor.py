"""Run tool calls the moment they have streamed: readers together, writers alone, results in order.

Each call moves queued → executing → completed → yielded. A call may start when nothing is
executing, or when it and everything executing are concurrency-safe; a queued call that is not
safe stops the scan, so no writer overtakes an earlier call. Results come out in the order the
calls were added, whatever order they finished in, and every call ends with exactly one result:
a real one, or a synthetic `is_error` one when the run is aborted or a sibling Bash call failed.

One executor runs one turn, so it also holds the turn's allowance for results (`TurnRoom`):
Read pages itself within it; any other result that would pass it, or the per-result limit, is
saved to a file with a preview in its place (`Workspace.spill`, the context manager's L1)
before anyone sees it. The result the model gets is the result the tool gave.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import field
from enum import Enum
from typing import Any, Literal

from codeloop.context.budget import SAVED_NOTE_TOKENS
from codeloop.context.memory import system_reminder
from codeloop.context.tokens import result_tokens
from codeloop.events import (
    Event,
    Notice,
    SubagentEvent,
    TodosChanged,
    ToolFinished,
    ToolProgress,
    ToolRunning,
    ToolStarted,
)
from codeloop.hooks.hook_runner import HookOutcome, Hooks, tool_response, updated_text
from codeloop.system.valueclass import valueclass
from codeloop.text import CHARS_PER_TOKEN
from codeloop.tool_names import canonical
from codeloop.tools.base import (
    AnyTool,
    SpawnAgent,
    ToolContext,
    ToolInputError,
    ToolResult,
    TurnRoom,
    Workspace,
)
from codeloop.tools.permission import CanUseTool, PermissionDecision
from codeloop.types import TextBlock, ToolResultBlock, ToolUseBlock, block_to_dict

DEFAULT_MAX_CONCURRENCY = 10
# A tool that ignores the abort signal is cancelled after this grace period.
ABORT_GRACE_SECONDS = 5.0

INTERRUPTED_MESSAGE = "Interrupted by user: the tool call was stopped before it finished."


ExecutorEvent = (
    ToolStarted | ToolRunning | ToolProgress | ToolFinished | Notice | SubagentEvent | TodosChanged
)


class Status(Enum):
    QUEUED = "queued"
    EXECUTING = "executing"
    COMPLETED = "completed"
    YIELDED = "yielded"


@valueclass(frozen=False, eq=False)
class _Call:
    tool_use: ToolUseBlock
    tool: AnyTool | None
    args: Any
    safe: bool
    status: Status = Status.QUEUED
    result: ToolResult | None = None
    task: asyncio.Task[None] | None = None
    ran: bool = False  # passed the hooks and the permission check, and was called
    # The permission decision, and who made it: the policy ("config") or a PreToolUse hook.
    decision: Literal["accept", "reject"] | None = None
    decided_by: Literal["config", "hook"] = "config"
    duration_ms: float = 0.0
    # Changes nothing in the workspace: needs no checkpoint, shares the write lock.
    read_only: bool = True


@valueclass(frozen=False)
class _Abort:
    """Why the executor stopped its calls: the user, or a failed sibling."""

    reason: str = ""
    event: asyncio.Event = field(default_factory=asyncio.Event)


def max_concurrency_from_env() -> int:
    raw = os.environ.get("CODELOOP_MAX_TOOL_CONCURRENCY", "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else DEFAULT_MAX_CONCURRENCY


class ToolExecutor:
    def __init__(
        self,
        tools: Mapping[str, AnyTool],
        workspace: Workspace,
        can_use_tool: CanUseTool,
        *,
        max_concurrency: int | None = None,
        hooks: Hooks | None = None,
        spawn_agent: SpawnAgent | None = None,
        before_write: Callable[[ToolUseBlock], Awaitable[str | None]] | None = None,
    ) -> None:
        self._hooks = hooks
        # Awaited once, before the first call that may write runs (a checkpoint); calls that
        # get there meanwhile wait for the same one.
        self._before_write = before_write
        self._checkpoint: asyncio.Future[str | None] | None = None
        self._spawn_agent = spawn_agent
        # Set when a PreToolUse/PostToolUse hook answered `continue: false`: the run ends.
        self.hook_stop: str | None = None
        self._tools = tools
        self._workspace = workspace
        self._can_use_tool = can_use_tool
        self._max_concurrency = max_concurrency or max_concurrency_from_env()
        self._calls: list[_Call] = []
        self._events: deque[ExecutorEvent] = deque()
        self._changed = asyncio.Event()
        self._abort = _Abort()
        self._room = TurnRoom(workspace.result_limits.turn_tokens)

    # --- intake ---------------------------------------------------------------------------

    def add(self, tool_use: ToolUseBlock, answer_tokens: int = 0) -> None:
        """Queue a call whose block has finished streaming, and start it if it may start now.
        `answer_tokens`: what the answer making the calls takes so far; the results get what it
        leaves of the unanswered turn's room, so a compaction can keep them as they are."""
        self._room.within(self._workspace.result_limits.unanswered_tokens - answer_tokens)
        call = self._prepare(tool_use)
        self._calls.append(call)
        if self._abort.reason:
            self._complete(call, ToolResult.error(self._abort.reason))
        self._release_results()
        self._schedule()

    def _prepare(self, tool_use: ToolUseBlock) -> _Call:
        # A model trained on an earlier Claude Code may call a tool by its old name.
        tool = self._tools.get(tool_use.name) or self._tools.get(canonical(tool_use.name))
        if tool is None:
            known = ", ".join(sorted(self._tools))
            return self._failed(tool_use, f"No such tool: {tool_use.name}. Available: {known}")
        if tool_use.input_error:
            return self._failed(tool_use, f"InputValidationError: {tool_use.input_error}")
        try:
            args = tool.parse(tool_use.input)
        except ToolInputError as exc:
            return self._failed(tool_use, str(exc))
        try:
            safe = tool.is_concurrency_safe(args)
            read_only = tool.is_read_only(args)
        except Exception:
            safe = read_only = False
        return _Call(tool_use, tool, args, safe, read_only=read_only)

    @staticmethod
    def _failed(tool_use: ToolUseBlock, message: str) -> _Call:
        return _Call(tool_use, None, None, True, Status.COMPLETED, ToolResult.error(message))

    # --- scheduling -----------------------------------------------------------------------

    def _schedule(self) -> None:
        for call in self._calls:
            if call.status is not Status.QUEUED:
                continue
            if self._may_start(call):
                self._start(call)
            elif not call.safe:
                break  # a writer waits its turn; nothing behind it may overtake it

    def _may_start(self, call: _Call) -> bool:
        executing = [c for c in self._calls if c.status is Status.EXECUTING]
        if not executing:
            return True
        if len(executing) >= self._max_concurrency:
            return False
        return call.safe and all(c.safe for c in executing)

    def _start(self, call: _Call) -> None:
        call.status = Status.EXECUTING
        self._push(ToolStarted(call.tool_use))
        call.task = asyncio.create_task(self._run(call), name=f"tool:{call.tool_use.name}")

    async def _run(self, call: _Call) -> None:
        assert call.tool is not None
        tool_use_id = call.tool_use.id
        started = time.monotonic()

        def progress(text: str) -> None:
            self._push(ToolProgress(tool_use_id, text, time.monotonic() - started))

        ctx = ToolContext(
            self._workspace,
            self._abort.event,
            progress,
            tool_use_id,
            self._spawn_agent,
            room=self._room,
            emit=self._emit,
            run_hook=self._tool_hook if self._hooks is not None else None,
        )
        try:
            result = self._sized(call.tool_use, await self._checked_call(call, ctx))
        except asyncio.CancelledError:
            result = ToolResult.error(self._abort.reason or INTERRUPTED_MESSAGE)
        except Exception as exc:  # a crashing tool must not end the session
            result = ToolResult.error(f"Tool {call.tool.name} failed: {type(exc).__name__}: {exc}")
        if self._abort.reason and call.result is None:
            result = _marked_interrupted(result, self._abort.reason)
        call.duration_ms = (time.monotonic() - started) * 1000
        self._complete(call, result)
        # Only a command that ran and failed stops its siblings: a denied one changed nothing.
        if result.is_error and call.ran and call.tool.name == "Bash" and not self._abort.reason:
            self._abort_siblings(call)
        self._schedule()

    async def _checked_call(self, call: _Call, ctx: ToolContext) -> ToolResult:
        """PreToolUse hooks, the permission check (and PermissionRequest hooks), the call, then
        PostToolUse or PostToolUseFailure hooks and the files the call brought into context."""
        tool, tool_use, args = call.tool, call.tool_use, call.args
        assert tool is not None
        hooks = self._hooks
        tool_input = tool_use.input
        payload: dict[str, Any] = {
            "tool_input": tool_input,
            "tool_use_id": tool_use.id,
            "cwd": str(self._workspace.cwd),
        }
        pre = await hooks.run("PreToolUse", payload, tool.name) if hooks else None
        if pre is not None:
            self._note(pre)
            if pre.blocked:
                call.decision, call.decided_by = "reject", "hook"
                return ToolResult.error(pre.for_model())
            if pre.updated_input is not None:
                try:
                    args = tool.parse(pre.updated_input)
                except ToolInputError as exc:
                    return ToolResult.error(str(exc))
                tool_input = pre.updated_input
        if pre is not None and pre.permission == "ask":
            why = pre.permission_reason or "a PreToolUse hook asked for confirmation"
            decision = PermissionDecision(
                False,
                f"Using {tool.name} needs the user's confirmation ({why}); this run cannot ask.",
                would_ask=True,
            )
        else:
            # A hook's "allow" settles what would be asked, never a deny rule or the workspace
            # boundary: the policy still decides.
            if pre is not None and pre.permission == "allow":
                ctx = dataclasses.replace(ctx, hook_approved=True)
            decision = await self._can_use_tool(tool, args, ctx)
            if decision.allowed and decision.updated_input is not None:
                try:
                    args = tool.parse(decision.updated_input)
                except ToolInputError as exc:
                    return ToolResult.error(str(exc))
                tool_input = decision.updated_input
                approved = dataclasses.replace(ctx, hook_approved=True)
                decision = await self._can_use_tool(tool, args, approved)
        if pre is not None and pre.permission is not None:
            call.decided_by = "hook"
        call.decision = "accept" if decision.allowed else "reject"
        if not decision.allowed:
            if decision.interrupt and self.hook_stop is None:
                self.hook_stop = decision.message
            if decision.would_ask and hooks is not None:
                message = f"codeloop needs your permission to use {tool.name}"
                notified = await hooks.run(
                    "Notification",
                    {
                        "message": message,
                        "title": "Permission needed",
                        "notification_type": "permission_prompt",
                    },
                )
                self._note(notified)
            return ToolResult.error(decision.message or f"Permission denied: {tool.name}")
        delegates = bool(getattr(tool, "delegates", False))
        if delegates:  # the checkpoint is taken while the sub-agent starts
            self._start_checkpoint(tool_use)
            ctx = dataclasses.replace(ctx, checkpoint=lambda: self._checkpointed(tool_use))
        elif not call.read_only:
            await self._checkpointed(tool_use)
        call.ran = True
        self._push(ToolRunning(tool_use.id))
        cwd_before = self._workspace.cwd
        started = time.monotonic()
        if delegates:  # its sub-agent's own calls take the lock
            result = await tool.call(args, ctx)
            await self._checkpointed(tool_use)  # over before the turn is
        else:
            async with self._workspace.write_lock.hold(exclusive=not call.read_only):
                result = await tool.call(args, ctx)
        elapsed_ms = round((time.monotonic() - started) * 1000)
        payload = {**payload, "tool_input": tool_input, "duration_ms": elapsed_ms}
        if hooks is not None and self._workspace.cwd != cwd_before:
            moved = await hooks.run(
                "CwdChanged", {"old_cwd": str(cwd_before), "new_cwd": str(self._workspace.cwd)}
            )
            self._note(moved)
        attached = await self._attachments(tool.name, tool_input, result)
        if pre is not None and pre.additional_context:  # a PreToolUse hook's word for the model
            attached = "\n\n".join((*pre.additional_context, *([attached] if attached else [])))
        if hooks is None:
            return _with_feedback(result, attached) if attached else result
        text = result.content if isinstance(result.content, str) else ""
        if result.is_error:
            failed = await hooks.run(
                "PostToolUseFailure",
                {**payload, "error": text, "is_interrupt": ctx.abort.is_set()},
                tool.name,
            )
            self._note(failed)
            feedback = "\n\n".join(t for t in (failed.for_model(), attached) if t)
            return _with_feedback(result, feedback) if feedback else result
        response = tool_response(tool.name, tool_input, text, False)
        post = await hooks.run("PostToolUse", {**payload, "tool_response": response}, tool.name)
        self._note(post)
        replaced = updated_text(post.updated_output) if post.updated_output is not None else None
        if replaced is not None:
            result = ToolResult(replaced, result.is_error, result.data)
        feedback = "\n\n".join(t for t in (post.for_model(), attached) if t)
        return _with_feedback(result, feedback) if feedback else result

    def _sized(self, tool_use: ToolUseBlock, result: ToolResult) -> ToolResult:
        """The result within what one result, and what is left of this turn's allowance, may
        take: a text result past either is saved to a file and previewed, the preview as long
        as the room left allows (the tool's own size when there is nowhere to save it).
        Results a tool sized itself pass as they are."""
        if result.sized:
            return result
        tokens = result_tokens(result.content)
        spill = self._workspace.spill
        room = self._room
        limit = max(min(self._workspace.result_limits.result_tokens, room.left), SAVED_NOTE_TOKENS)
        if spill is not None and tokens > limit and _text_only(result):
            preview = max(room.left - SAVED_NOTE_TOKENS, 0) * CHARS_PER_TOKEN
            result = dataclasses.replace(result, content=spill(tool_use, result.text, preview))
            tokens = result_tokens(result.content)
        room.take(tokens)
        return result

    async def _checkpointed(self, tool_use: ToolUseBlock) -> None:
        """The turn's checkpoint, taken once before the first call that may write; parallel
        calls (sub-agents) wait for it too."""
        taking = self._start_checkpoint(tool_use)
        if taking is not None:
            await asyncio.shield(taking)

    def _start_checkpoint(self, tool_use: ToolUseBlock) -> asyncio.Future[str | None] | None:
        """The turn's checkpoint, started now unless it has been; a failure is a warning (the
        write goes on)."""
        if self._before_write is None:
            return None
        if self._checkpoint is None:
            self._checkpoint = asyncio.ensure_future(self._before_write(tool_use))
            self._checkpoint.add_done_callback(self._checkpoint_taken)
        return self._checkpoint

    def _checkpoint_taken(self, taking: asyncio.Future[str | None]) -> None:
        if not taking.cancelled() and taking.exception() is None and (warning := taking.result()):
            self._push(Notice("warning", warning))

    def _emit(self, event: Event) -> None:
        """An event a call hands up from a nested run (a sub-agent, a task list change)."""
        if isinstance(event, SubagentEvent | TodosChanged | Notice):
            self._push(event)

    async def _attachments(
        self, tool_name: str, tool_input: dict[str, Any], result: ToolResult
    ) -> str:
        """Instructions that apply to the files this call touched (a nested CLAUDE.md, a rule
        whose `paths:` match), loaded the first time; empty when there are none."""
        instructions = self._workspace.instructions
        if instructions is None or result.is_error:
            return ""
        return await instructions.attach(tool_name, tool_input)

    async def finish_batch(self) -> str:
        """After every call of the turn has its result: the PostToolBatch hooks, and what async
        hooks finished meanwhile. Returns the text for the model (empty: none); a block or
        `continue: false` sets `hook_stop`, ending the run before the next model call."""
        hooks = self._hooks
        if hooks is None:
            return ""
        calls = [
            {
                "tool_name": c.tool_use.name,
                "tool_input": c.tool_use.input,
                "tool_use_id": c.tool_use.id,
                "tool_response": _serialized(c.result),
            }
            for c in self._calls
        ]
        parts: list[str] = []
        if calls:
            batch = await hooks.run("PostToolBatch", {"tool_calls": calls})
            self._note(batch)
            parts.extend(batch.additional_context)
            if (batch.blocked or batch.stop) and self.hook_stop is None:
                self.hook_stop = batch.reason or batch.stop_reason or "a PostToolBatch hook stopped"
        parts.extend(hooks.take_async_context())
        for message in await hooks.check_watched():  # what the calls (or anyone) changed
            self._push(Notice("warning", message))
        return system_reminder("\n\n".join(parts)) if parts else ""

    async def _tool_hook(self, event: str, payload: Mapping[str, Any]) -> HookOutcome:
        """An event a tool raises (TaskCreated): its messages reach the user and its
        `continue: false` ends the run, as for the executor's own events."""
        assert self._hooks is not None
        outcome = await self._hooks.run(event, payload)
        self._note(outcome)
        return outcome

    def _note(self, outcome: HookOutcome) -> None:
        for message in outcome.system_messages:
            self._push(Notice("warning", message))
        if outcome.stop and self.hook_stop is None:
            self.hook_stop = outcome.stop_reason or f"a {outcome.event} hook stopped the run"

    def _complete(self, call: _Call, result: ToolResult) -> None:
        if call.status in (Status.COMPLETED, Status.YIELDED):
            return
        call.status = Status.COMPLETED
        call.result = result
        self._release_results()

    def _release_results(self) -> None:
        """Queue the results whose turn has come: every completed call not behind a running one.

        They join the one event queue at the moment they become due, so the events tell the true
        story (a writer's successor starts after the writer's result, not before)."""
        for call in self._calls:
            if call.status is Status.YIELDED:
                continue
            if call.status is not Status.COMPLETED:
                break
            call.status = Status.YIELDED
            assert call.result is not None
            block = _result_block(call.tool_use, call.result)
            decided_by = call.decided_by if call.decision else None
            self._push(
                ToolFinished(
                    call.tool_use,
                    block,
                    call.duration_ms,
                    call.decision,
                    decided_by,
                    call.result.data,
                )
            )

    def _abort_siblings(self, failed: _Call) -> None:
        command = str(failed.tool_use.input.get("command", ""))[:60]
        self._stop_all(f"Cancelled: a parallel Bash call failed ({command})")

    def _stop_all(self, reason: str) -> None:
        self._abort.reason = reason
        self._abort.event.set()
        for call in self._calls:
            if call.status is Status.QUEUED:
                self._complete(call, ToolResult.error(reason))

    def _push(self, event: ExecutorEvent) -> None:
        self._events.append(event)
        self._changed.set()

    # --- output ---------------------------------------------------------------------------

    def ready(self) -> Iterator[ExecutorEvent]:
        """Events available now, in the order they happened; results in call order."""
        while self._events:
            yield self._events.popleft()

    @property
    def started_any(self) -> bool:
        """Whether any call has begun to run (its effects may already exist)."""
        return any(c.task is not None for c in self._calls)

    @property
    def done(self) -> bool:
        return all(c.status is Status.YIELDED for c in self._calls) and not self._events

    async def remaining(self) -> AsyncIterator[ExecutorEvent]:
        """Every event still to come, waiting for running calls to finish."""
        while True:
            self._changed.clear()
            for event in self.ready():
                yield event
            if self.done:
                return
            await self._changed.wait()

    async def abort(self, reason: str = INTERRUPTED_MESSAGE) -> None:
        """Stop everything: queued calls get `reason`, running ones are signalled, then cancelled
        if they do not stop within the grace period."""
        if not self._abort.reason:
            self._stop_all(reason)
        running = [c.task for c in self._calls if c.task is not None and not c.task.done()]
        if not running:
            return
        _, stragglers = await asyncio.wait(running, timeout=ABORT_GRACE_SECONDS)
        for task in stragglers:
            task.cancel()
        if stragglers:
            await asyncio.wait(stragglers)


def _serialized(result: ToolResult | None) -> Any:
    """A result as the model receives it: its text, or its content blocks."""
    if result is None:
        return ""
    if isinstance(result.content, str):
        return result.content
    return [block_to_dict(block) for block in result.content]


def _marked_interrupted(result: ToolResult, reason: str) -> ToolResult:
    """A call that finished after the abort was asked keeps its output but reads as an error."""
    text = result.content if isinstance(result.content, str) else ""
    body = f"{reason}\n{text}".rstrip() if text and text not in reason else reason
    return ToolResult.error(body)


def _with_feedback(result: ToolResult, feedback: str) -> ToolResult:
    if isinstance(result.content, str):
        return dataclasses.replace(result, content=f"{result.content}\n\n{feedback}")
    return dataclasses.replace(result, content=(*result.content, TextBlock(feedback)))


def _text_only(result: ToolResult) -> bool:
    """An image cannot be previewed: such a result is never saved."""
    return isinstance(result.content, str) or all(
        isinstance(part, TextBlock) for part in result.content
    )


def _result_block(tool_use: ToolUseBlock, result: ToolResult) -> ToolResultBlock:
    return ToolResultBlock(tool_use.id, result.content, result.is_error)
