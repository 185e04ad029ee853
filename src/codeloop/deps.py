"""The loop's one seam: every collaborator that does I/O, each typed by a small Protocol, so a
test or an embedder replaces any one of them (the model, the context pipeline, hooks, the
permission callback, the sub-agent spawner, the tool executor, the clock, sleep, ids).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import field
from typing import Protocol

from codeloop.context.pipeline import Compacted, Prepared
from codeloop.context.tokens import estimate_messages
from codeloop.context.trim import TRIM_FAILED, drop_oldest_exchanges
from codeloop.events import Announce
from codeloop.hooks.hook_runner import Hooks
from codeloop.models.base import ModelClient, ModelRequest, StreamEvent
from codeloop.system.valueclass import valueclass
from codeloop.tools.base import AnyTool, SpawnAgent, Workspace
from codeloop.tools.executor import ExecutorEvent, ToolExecutor
from codeloop.tools.permission import CanUseTool
from codeloop.types import Message, ToolResultBlock, ToolUseBlock, Usage, new_uuid

CallModel = Callable[[ModelRequest], AsyncIterator[StreamEvent]]


class ContextPipeline(Protocol):
    """What runs before every request, and what shrinks a history the API called too long."""

    async def prepare(
        self,
        messages: tuple[Message, ...],
        abort: asyncio.Event | None = None,
        announce: Announce | None = None,
    ) -> Prepared: ...

    def record_usage(self, sent: tuple[Message, ...], reply: Message, usage: Usage) -> None: ...

    async def reactive_compact(self, messages: tuple[Message, ...]) -> Compacted: ...


class Executor(Protocol):
    """Runs one answer's tool calls as they stream (see tools/executor.py)."""

    hook_stop: str | None

    def add(self, tool_use: ToolUseBlock, answer_tokens: int = 0) -> None: ...

    def ready(self) -> Iterator[ExecutorEvent]: ...

    def remaining(self) -> AsyncIterator[ExecutorEvent]: ...

    async def abort(self) -> None: ...

    async def finish_batch(self) -> str: ...

    @property
    def started_any(self) -> bool: ...


class ExecutorFactory(Protocol):
    def __call__(
        self,
        tools: Mapping[str, AnyTool],
        workspace: Workspace,
        can_use_tool: CanUseTool,
        *,
        hooks: Hooks | None = None,
        spawn_agent: SpawnAgent | None = None,
        before_write: Callable[[ToolUseBlock], Awaitable[str | None]] | None = None,
    ) -> Executor: ...


# Labels one tool batch (its calls, their results) beside the loop: a side request on the small
# fast model (side_requests.py); None when it failed.
SummarizeTools = Callable[
    [Sequence[ToolUseBlock], Sequence[ToolResultBlock]], Awaitable[str | None]
]


# Called before the first writer of a turn runs, with the history before that turn: a checkpoint
# (checkpoints/). Returns once it is on disk, or a warning for the user when it failed.
BeforeWrite = Callable[[tuple[Message, ...], ToolUseBlock], Awaitable[str | None]]


class TrimOnly:
    """The pipeline of a loop that has no context manager (a sub-agent, a test): the history
    goes out as it is, and a too-long one loses its oldest exchanges."""

    async def prepare(
        self,
        messages: tuple[Message, ...],
        abort: asyncio.Event | None = None,
        announce: Announce | None = None,
    ) -> Prepared:
        return Prepared(messages, estimate_messages(messages))

    def record_usage(self, sent: tuple[Message, ...], reply: Message, usage: Usage) -> None:
        return None

    async def reactive_compact(self, messages: tuple[Message, ...]) -> Compacted:
        trimmed = drop_oldest_exchanges(messages)
        if trimmed is None:
            return Compacted(None, TRIM_FAILED)
        dropped = len(messages) - len(trimmed)
        return Compacted(
            trimmed,
            f"The {dropped} oldest messages had been dropped to make room and the "
            "request sent again.",
        )


@valueclass
class LoopDeps:
    call_model: CallModel
    # Asked before every tool call: a Policy's `can_use_tool`, or an embedder's own.
    can_use_tool: CanUseTool
    context: ContextPipeline = field(default_factory=TrimOnly)
    hooks: Hooks | None = None
    # How the Task tool starts a sub-agent; None where there is no session to run one in.
    spawn_agent: SpawnAgent | None = None
    executor: ExecutorFactory = ToolExecutor
    uuid: Callable[[], str] = new_uuid
    clock: Callable[[], float] = field(default=time.monotonic)
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    before_write: BeforeWrite | None = None
    # Tool-use summaries (CLAUDE_CODE_EMIT_TOOL_USE_SUMMARIES); None: none asked for.
    summarize_tools: SummarizeTools | None = None

    @staticmethod
    def for_client(client: ModelClient, can_use_tool: CanUseTool) -> LoopDeps:
        return LoopDeps(call_model=client.stream, can_use_tool=can_use_tool)
