"""The agentic loop: one `while True` state machine, in the shape the seeds dissect.

Each iteration streams one model call, hands every tool_use to the executor the moment its block
stops streaming, then either ends (no tool calls, an error, an abort, the turn limit) or builds a
new `State` whose `transition` names why the loop goes on. The loop does no I/O of its own:
the model call, ids and the clock come from `LoopDeps`; tools come from the caller.

Invariant: every tool_use in the history is followed by exactly one tool_result.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field

from codeloop.aio import Aborted, until_aborted
from codeloop.deps import LoopDeps
from codeloop.events import (
    AssistantTurn,
    ContinueReason,
    EndReason,
    Event,
    LoopEnd,
    RequestStart,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    UserTurn,
)
from codeloop.models.assembler import MessageAssembler
from codeloop.models.base import BlockDelta, ModelError, ModelRequest
from codeloop.models.catalog import cost_usd
from codeloop.tools.base import AnyTool, Workspace
from codeloop.tools.executor import CanUseTool, ToolExecutor
from codeloop.types import Message, ToolResultBlock, ToolUseBlock, Usage


@dataclass(frozen=True)
class LoopParams:
    """What the caller fixes for one run of the loop."""

    messages: tuple[Message, ...]
    model: str
    tools: Mapping[str, AnyTool]
    workspace: Workspace
    can_use_tool: CanUseTool
    system: str = ""
    max_tokens: int = 8192
    max_turns: int | None = None
    # USD this run may still spend; checked at each turn boundary (--max-budget-usd).
    budget_usd: float | None = None
    abort: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass(frozen=True)
class Transition:
    reason: ContinueReason


@dataclass(frozen=True)
class State:
    """Everything that changes between iterations; replaced whole at every `continue`."""

    messages: tuple[Message, ...]
    turn_count: int = 1
    transition: Transition | None = None


@dataclass
class _Totals:
    usage: Usage = field(default_factory=Usage)
    by_model: dict[str, Usage] = field(default_factory=dict)
    api_ms: float = 0.0

    def cost_usd(self) -> float:
        return sum(cost_usd(model, usage) for model, usage in self.by_model.items())

    def add(self, model: str, usage: Usage, elapsed_ms: float) -> None:
        self.usage = self.usage + usage
        self.by_model[model] = self.by_model.get(model, Usage()) + usage
        self.api_ms += elapsed_ms


async def query_loop(params: LoopParams, deps: LoopDeps) -> AsyncIterator[Event]:
    tool_specs = tuple(tool.spec() for tool in params.tools.values())
    totals = _Totals()
    state = State(messages=params.messages)

    def end(reason: EndReason, messages: tuple[Message, ...], error: str | None = None) -> LoopEnd:
        return LoopEnd(
            reason,
            state.turn_count,
            totals.usage,
            messages,
            error=error,
            api_duration_ms=totals.api_ms,
            usage_by_model=dict(totals.by_model),
        )

    while True:
        messages, turn_count = state.messages, state.turn_count
        request = ModelRequest(
            model=params.model,
            messages=messages,
            system=params.system,
            tools=tool_specs,
            max_tokens=params.max_tokens,
        )
        executor = ToolExecutor(params.tools, params.workspace, params.can_use_tool)
        assembler = MessageAssembler()
        yield RequestStart(turn_count, params.model)
        started = deps.clock()
        failure: ModelError | None = None
        aborted = False
        results: list[ToolResultBlock] = []  # in call order, whenever they become ready
        try:
            async for event in until_aborted(deps.call_model(request), params.abort):
                block = assembler.feed(event)
                if isinstance(event, BlockDelta):
                    if event.kind == "text":
                        yield TextDelta(event.value)
                    elif event.kind == "thinking":
                        yield ThinkingDelta(event.value)
                if isinstance(block, ToolUseBlock):
                    executor.add(block)
                for ready in executor.ready():
                    if isinstance(ready, ToolFinished):
                        results.append(ready.result)
                    yield ready
        except Aborted:
            aborted = True
        except ModelError as exc:
            failure = exc
        totals.add(params.model, assembler.usage, (deps.clock() - started) * 1000)

        if aborted or failure is not None:
            # Tools already started from finished blocks get their (synthetic) results, so the
            # partial answer can stay in the history with every tool_use paired.
            await executor.abort()
            kept = await _keep_partial(assembler, executor, results, deps)
            for event_out in kept.events:
                yield event_out
            reason: EndReason = "aborted_streaming" if aborted else "model_error"
            yield end(reason, messages + kept.messages, None if aborted else _describe(failure))
            return

        assistant = Message("assistant", assembler.blocks, uuid=deps.uuid())
        yield AssistantTurn(
            assistant,
            assembler.model or params.model,
            assembler.usage,
            assembler.stop_reason,
            assembler.id,
            (deps.clock() - started) * 1000,
        )
        if not assistant.tool_uses:
            yield end("completed", (*messages, assistant))
            return

        try:
            async for event_out in until_aborted(executor.remaining(), params.abort):
                if isinstance(event_out, ToolFinished):
                    results.append(event_out.result)
                yield event_out
        except Aborted:
            await executor.abort()
            for event_out in executor.ready():
                if isinstance(event_out, ToolFinished):
                    results.append(event_out.result)
                yield event_out
            tool_message = Message("user", tuple(results), uuid=deps.uuid())
            yield UserTurn(tool_message)
            yield end("aborted_tools", (*messages, assistant, tool_message))
            return

        tool_message = Message("user", tuple(results), uuid=deps.uuid())
        yield UserTurn(tool_message)
        next_messages = (*messages, assistant, tool_message)
        if params.max_turns is not None and turn_count + 1 > params.max_turns:
            yield end("max_turns", next_messages, f"Reached the limit of {params.max_turns} turns")
            return
        if params.budget_usd is not None and totals.cost_usd() >= params.budget_usd:
            spent = f"${totals.cost_usd():.4f} of ${params.budget_usd:.4f}"
            yield end("max_budget", next_messages, f"Reached the cost budget ({spent})")
            return
        state = State(
            messages=next_messages,
            turn_count=turn_count + 1,
            transition=Transition("next_turn"),
        )


@dataclass(frozen=True)
class _Kept:
    messages: tuple[Message, ...] = ()
    events: tuple[Event, ...] = ()


async def _keep_partial(
    assembler: MessageAssembler,
    executor: ToolExecutor,
    results: list[ToolResultBlock],
    deps: LoopDeps,
) -> _Kept:
    """The finished blocks of a broken response, with a result for each tool call among them."""
    blocks = assembler.blocks
    if not blocks:
        return _Kept()
    assistant = Message("assistant", blocks, uuid=deps.uuid())
    events: list[Event] = [AssistantTurn(assistant, assembler.model, assembler.usage, None)]
    if not assistant.tool_uses:
        return _Kept((assistant,), tuple(events))
    async for event in executor.remaining():
        events.append(event)
        if isinstance(event, ToolFinished):
            results.append(event.result)
    tool_message = Message("user", tuple(results), uuid=deps.uuid())
    events.append(UserTurn(tool_message))
    return _Kept((assistant, tool_message), tuple(events))


def _describe(error: ModelError | None) -> str:
    if error is None:
        return "unknown model error"
    status = f" (HTTP {error.status})" if error.status else ""
    return f"{type(error).__name__}{status}: {error.message}"
