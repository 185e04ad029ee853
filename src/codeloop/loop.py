"""The agentic loop: one `while True` state machine, in the shape the seeds dissect.

Each iteration streams one model call (retrying what a real API throws at it), hands every
tool_use to the executor the moment its block stops streaming, then either ends or builds a new
`State` whose `transition` names why the loop goes on. The loop does no I/O of its own: the
model call, compaction, sleeping, ids and the clock come from `LoopDeps`.

Invariant: every tool_use in the history is followed by exactly one tool_result.
Every guard against looping forever is a State field: one reactive compact per turn, one
max_tokens escalation, at most three output recoveries, one model fallback, the token budget's
low-yield streak, and max_turns.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Awaitable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from codeloop.aio import Aborted, IdleTimeout, Stalled, until_aborted, watched
from codeloop.context.pipeline import ContextManager
from codeloop.costs import total_cost_usd, usage_by_model
from codeloop.deps import LoopDeps
from codeloop.events import (
    AssistantTurn,
    ContinueReason,
    Continuing,
    EndReason,
    Event,
    LoopEnd,
    Notice,
    RequestStart,
    ResponseDiscarded,
    Retrying,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    UserTurn,
)
from codeloop.hooks import MAX_STOP_HOOK_CONTINUATIONS, HookRunner
from codeloop.models.assembler import MessageAssembler
from codeloop.models.base import (
    BlockDelta,
    Fatal,
    MediaError,
    ModelError,
    ModelRequest,
    Overloaded,
    PromptTooLong,
    RateLimited,
    StreamErrorEvent,
    StreamIdle,
    Transient,
)
from codeloop.models.retry import OVERLOADS_BEFORE_FALLBACK, RetryPolicy
from codeloop.token_budget import BudgetTracker
from codeloop.tools.base import AnyTool, SpawnAgent, Workspace
from codeloop.tools.executor import CanUseTool, ToolExecutor
from codeloop.types import Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage

MAX_OUTPUT_RECOVERIES = 3
OUTPUT_RECOVERY_PROMPT = (
    "Output token limit hit. Resume directly where you stopped: no apology, no recap of what "
    "you were doing. Pick up mid-thought if that is where the cut happened, and break the "
    "remaining work into smaller pieces."
)
TRUNCATED_TOOL_CALL = (
    "This tool call was cut off by the output token limit before its input was complete, so it "
    "was not run. Issue it again, smaller if it was large (e.g. write a big file in parts)."
)


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
    # The model's largest output: one escalation to it when an answer is cut at max_tokens.
    max_output_tokens: int | None = None
    max_turns: int | None = None
    # USD this run may still spend; checked at each turn boundary (--max-budget-usd).
    budget_usd: float | None = None
    # Output tokens the task should use (--token-budget, or `+500k` in the prompt).
    token_budget: int | None = None
    fallback_model: str | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    abort: asyncio.Event = field(default_factory=asyncio.Event)
    # Budget → microcompact → autocompact before each request; None sends the history as is.
    context: ContextManager | None = None
    # Sent ahead of `messages` in every request, never part of the history: the memory.
    user_context: tuple[Message, ...] = ()
    hooks: HookRunner | None = None
    # The hook event a final answer fires: a sub-agent's loop fires SubagentStop.
    stop_event: Literal["Stop", "SubagentStop"] = "Stop"
    spawn_agent: SpawnAgent | None = None


@dataclass(frozen=True)
class Transition:
    reason: ContinueReason


@dataclass(frozen=True)
class State:
    """Everything that changes between iterations; replaced whole at every `continue`."""

    messages: tuple[Message, ...]
    model: str
    turn_count: int = 1
    transition: Transition | None = None
    max_tokens_override: int | None = None
    output_recoveries: int = 0
    has_attempted_reactive_compact: bool = False
    fallback_used: bool = False
    budget: BudgetTracker | None = None
    # Times a Stop hook sent the model back to work; at most MAX_STOP_HOOK_CONTINUATIONS.
    stop_hook_continuations: int = 0


@dataclass
class _Totals:
    by_model: dict[str, Usage] = field(default_factory=dict)
    api_ms: float = 0.0

    @property
    def usage(self) -> Usage:
        return sum(self.by_model.values(), Usage())

    def cost_usd(self) -> float:
        return total_cost_usd(self.by_model)

    def add(self, model: str, usage: Usage, elapsed_ms: float) -> None:
        self.by_model = usage_by_model((*self.by_model.items(), (model, usage)))
        self.api_ms += elapsed_ms


@dataclass
class _Attempt:
    """One streamed model call and the tool calls it started."""

    assembler: MessageAssembler
    executor: ToolExecutor
    results: list[ToolResultBlock] = field(default_factory=list)
    error: ModelError | None = None
    aborted: bool = False


async def query_loop(params: LoopParams, deps: LoopDeps) -> AsyncIterator[Event]:
    tool_specs = tuple(tool.spec() for tool in params.tools.values())
    totals = _Totals()
    budget = BudgetTracker(params.token_budget) if params.token_budget else None
    state = State(messages=params.messages, model=params.model, budget=budget)

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
        if params.context is not None:
            prepared = await params.context.prepare(state.messages, params.abort)
            for event in prepared.events:
                yield event
            totals.add(state.model, prepared.usage, 0.0)
            state = replace(state, messages=prepared.messages)
            if prepared.blocked is not None:
                yield end("blocking_limit", state.messages, prepared.blocked)
                return
        messages, turn_count = state.messages, state.turn_count
        if state.transition is not None:
            yield Continuing(state.transition.reason, turn_count)
        max_tokens = state.max_tokens_override or params.max_tokens

        # --- stream the model call, retrying what can be retried ---------------------------
        attempt_no, overloads, non_streaming = 0, 0, False
        fallback: str | None = None
        while True:
            attempt_no += 1
            request = ModelRequest(
                model=state.model,
                messages=(*params.user_context, *messages),
                system=params.system,
                tools=tool_specs,
                max_tokens=max_tokens,
                stream=not non_streaming,
            )
            attempt = _Attempt(
                MessageAssembler(),
                ToolExecutor(
                    params.tools,
                    params.workspace,
                    params.can_use_tool,
                    hooks=params.hooks,
                    spawn_agent=params.spawn_agent,
                    before_write=(
                        functools.partial(deps.before_write, messages)
                        if deps.before_write
                        else None
                    ),
                ),
            )
            limiter = params.retry.limiter
            if limiter is not None and not await _unless_aborted(limiter.wait(), params.abort):
                attempt.aborted = True
                break
            yield RequestStart(turn_count, state.model, attempt_no)
            started = deps.clock()
            async for event in _stream(attempt, request, params, deps):
                yield event
            totals.add(state.model, attempt.assembler.usage, (deps.clock() - started) * 1000)
            error = attempt.error
            if attempt.aborted or error is None or attempt.executor.started_any:
                break
            if params.retry.gives_up(attempt_no, error):
                break
            overloaded = isinstance(error, Overloaded) and not isinstance(error, RateLimited)
            overloads = overloads + 1 if overloaded else 0
            if (
                overloads >= OVERLOADS_BEFORE_FALLBACK
                and params.fallback_model
                and not state.fallback_used
            ):
                fallback = params.fallback_model
                break
            # After an SSE error event, one plain (non-streaming) request, then stream again.
            non_streaming = isinstance(error, StreamErrorEvent) and not non_streaming
            wait = params.retry.delay(attempt_no, error)
            if limiter is not None and isinstance(error, Overloaded):
                await limiter.hold(wait)  # the quota is shared: every session sharing it waits
            if attempt.assembler.blocks or attempt.assembler.id:
                yield ResponseDiscarded(_describe(error))
            yield Retrying(
                attempt_no, params.retry.max_attempts, wait, _describe(error), error.status
            )
            if not await _unless_aborted(deps.sleep(wait), params.abort):
                # The failed attempt's partial answer was discarded: nothing of it is kept.
                attempt = _Attempt(MessageAssembler(), attempt.executor, aborted=True)
                break

        assembler, executor = attempt.assembler, attempt.executor

        if fallback is not None:
            yield Notice("warning", f"{state.model} is overloaded; switching to {fallback}")
            yield ResponseDiscarded("model fallback")
            state = replace(
                state, model=fallback, fallback_used=True, transition=Transition("model_fallback")
            )
            continue

        if attempt.aborted or (attempt.error is not None and executor.started_any):
            # Tool calls already under way get their results, so the finished part of the
            # answer stays in the history with every tool_use paired.
            if attempt.aborted:
                await executor.abort()
            kept = await _keep_partial(attempt, deps)
            for event_out in kept.events:
                yield event_out
            if attempt.aborted:
                yield end("aborted_streaming", messages + kept.messages)
                return
            yield Notice("warning", f"stream failed ({_describe(attempt.error)}); going on")
            state = replace(
                state,
                messages=messages + kept.messages,
                turn_count=turn_count + 1,
                transition=Transition("stream_error_recovery"),
            )
            continue

        if attempt.error is not None:
            error = attempt.error
            if isinstance(error, PromptTooLong) and not state.has_attempted_reactive_compact:
                compacted = await deps.reactive_compact(messages)
                if compacted is not None:
                    yield Notice("info", "the conversation was too long; compacted it")
                    state = replace(
                        state,
                        messages=compacted,
                        has_attempted_reactive_compact=True,
                        transition=Transition("reactive_compact_retry"),
                    )
                    continue
            reason: EndReason = "model_error"
            if isinstance(error, PromptTooLong):
                reason = "prompt_too_long"
            elif isinstance(error, MediaError):
                reason = "image_error"
            yield end(reason, messages, _describe(error))
            return

        # --- a complete response -------------------------------------------------------------
        truncated = assembler.stop_reason == "max_tokens"
        if (
            truncated
            and state.max_tokens_override is None
            and params.max_output_tokens is not None
            and params.max_output_tokens > max_tokens
            and not executor.started_any
        ):
            # Withheld: the same request again, with room for the whole answer.
            yield ResponseDiscarded("output token limit; retrying with a larger limit")
            state = replace(
                state,
                max_tokens_override=params.max_output_tokens,
                transition=Transition("max_output_tokens_escalate"),
            )
            continue

        assistant = Message("assistant", assembler.blocks, uuid=deps.uuid())
        if params.context is not None:
            params.context.record_usage(messages, assistant, assembler.usage)
        yield AssistantTurn(
            assistant,
            assembler.model or state.model,
            assembler.usage,
            assembler.stop_reason,
            assembler.id,
            (deps.clock() - started) * 1000,
        )
        recovering = truncated and state.output_recoveries < MAX_OUTPUT_RECOVERIES

        if not assistant.tool_uses and not recovering:
            if params.hooks is not None:
                active = state.stop_hook_continuations > 0
                stop = await params.hooks.run(
                    params.stop_event,
                    {"stop_hook_active": active, "last_assistant_message": _text_of(assistant)},
                )
                for text in stop.system_messages:
                    yield Notice("warning", text)
                if stop.stop:
                    why = stop.stop_reason or "a Stop hook ended the run"
                    yield end("stop_hook_prevented", (*messages, assistant), why)
                    return
                # A block, or a Stop hook's additionalContext, sends the model back to work.
                goes_on = stop.blocked or bool(stop.additional_context)
                if goes_on and state.stop_hook_continuations < MAX_STOP_HOOK_CONTINUATIONS:
                    feedback = Message(
                        "user", (TextBlock(stop.for_model()),), uuid=deps.uuid(), is_meta=True
                    )
                    yield UserTurn(feedback)
                    state = replace(
                        state,
                        messages=(*messages, assistant, feedback),
                        stop_hook_continuations=state.stop_hook_continuations + 1,
                        transition=Transition("stop_hook_blocking"),
                    )
                    continue
                if goes_on:
                    yield Notice(
                        "warning",
                        f"a Stop hook blocked {MAX_STOP_HOOK_CONTINUATIONS} times; the run ends",
                    )
            if state.budget is not None:
                used = totals.usage.output_tokens
                tracker = state.budget.next(used)
                if tracker is not None:
                    nudge = Message.user(tracker.prompt(used), is_meta=True)
                    yield UserTurn(nudge)
                    state = replace(
                        state,
                        messages=(*messages, assistant, nudge),
                        budget=tracker,
                        transition=Transition("token_budget_continuation"),
                    )
                    continue
            if truncated:
                yield Notice("warning", "the answer was cut off at the output token limit")
            yield end("completed", (*messages, assistant))
            return

        # --- tool results ------------------------------------------------------------------------
        try:
            async for event_out in until_aborted(executor.remaining(), params.abort):
                if isinstance(event_out, ToolFinished):
                    attempt.results.append(event_out.result)
                yield event_out
        except Aborted:
            await executor.abort()
            for event_out in executor.ready():
                if isinstance(event_out, ToolFinished):
                    attempt.results.append(event_out.result)
                yield event_out
            tool_message = Message("user", tuple(attempt.results), uuid=deps.uuid())
            yield UserTurn(tool_message)
            yield end("aborted_tools", (*messages, assistant, tool_message))
            return

        results = (
            _explain_truncated_calls(attempt.results, assistant) if truncated else (attempt.results)
        )
        content: tuple[ToolResultBlock | TextBlock, ...] = tuple(results)
        if batch_context := await executor.finish_batch():
            content = (*content, TextBlock(batch_context))
        if recovering:
            content = (*content, TextBlock(OUTPUT_RECOVERY_PROMPT))
        user_message = Message("user", content, uuid=deps.uuid(), is_meta=not results)
        yield UserTurn(user_message)
        next_messages = (*messages, assistant, user_message)
        if executor.hook_stop is not None:
            yield end("hook_stopped", next_messages, executor.hook_stop)
            return
        if recovering:
            state = replace(
                state,
                messages=next_messages,
                output_recoveries=state.output_recoveries + 1,
                transition=Transition("max_output_tokens_recovery"),
            )
            continue
        if params.max_turns is not None and turn_count + 1 > params.max_turns:
            yield end("max_turns", next_messages, f"Reached the limit of {params.max_turns} turns")
            return
        if params.budget_usd is not None and totals.cost_usd() >= params.budget_usd:
            spent = f"${totals.cost_usd():.4f} of ${params.budget_usd:.4f}"
            yield end("max_budget", next_messages, f"Reached the cost budget ({spent})")
            return
        state = State(
            messages=next_messages,
            model=state.model,
            turn_count=turn_count + 1,
            transition=Transition("next_turn"),
            fallback_used=state.fallback_used,
            budget=state.budget,
            stop_hook_continuations=state.stop_hook_continuations,
        )


async def _stream(
    attempt: _Attempt, request: ModelRequest, params: LoopParams, deps: LoopDeps
) -> AsyncIterator[Event]:
    """Feed one model stream to the assembler and the executor; failures land in `attempt`."""
    assembler, executor = attempt.assembler, attempt.executor
    try:
        source = deps.call_model(request)
        async for event in watched(source, params.abort, params.retry.idle_timeout):
            if isinstance(event, Stalled):
                yield Notice("warning", f"the model has sent nothing for {event.seconds:g} s")
                continue
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
                    attempt.results.append(ready.result)
                yield ready
    except Aborted:
        attempt.aborted = True
    except IdleTimeout as exc:
        attempt.error = StreamIdle(f"the stream stalled: {exc}")
    except ModelError as exc:
        attempt.error = exc


async def _unless_aborted(waiting: Awaitable[None], abort: asyncio.Event) -> bool:
    """Wait (before a retry, for a shared limiter); False if the user aborted meanwhile."""
    sleeper = asyncio.ensure_future(waiting)
    abort_wait = asyncio.ensure_future(abort.wait())
    await asyncio.wait({sleeper, abort_wait}, return_when=asyncio.FIRST_COMPLETED)
    sleeper.cancel()
    abort_wait.cancel()
    return not abort.is_set()


@dataclass(frozen=True)
class _Kept:
    messages: tuple[Message, ...] = ()
    events: tuple[Event, ...] = ()


async def _keep_partial(attempt: _Attempt, deps: LoopDeps) -> _Kept:
    """The finished blocks of a broken response, with a result for each tool call among them."""
    assembler, executor = attempt.assembler, attempt.executor
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
            attempt.results.append(event.result)
    tool_message = Message("user", tuple(attempt.results), uuid=deps.uuid())
    events.append(UserTurn(tool_message))
    return _Kept((assistant, tool_message), tuple(events))


def _text_of(message: Message) -> str:
    return "\n".join(b.text for b in message.content if isinstance(b, TextBlock))


def _explain_truncated_calls(
    results: list[ToolResultBlock], assistant: Message
) -> list[ToolResultBlock]:
    """A call cut off by max_tokens is a recovery case, not a malformed call: say so."""
    cut = {b.id for b in assistant.tool_uses if b.input_error is not None}
    return [
        ToolResultBlock(r.tool_use_id, TRUNCATED_TOOL_CALL, True) if r.tool_use_id in cut else r
        for r in results
    ]


# What each kind of failure is called in messages for people (most specific class first).
_FAILURE_NAMES: tuple[tuple[type[ModelError], str], ...] = (
    (RateLimited, "rate limited"),
    (Overloaded, "API overloaded"),
    (StreamIdle, "stream stalled"),
    (StreamErrorEvent, "error event in the stream"),
    (Transient, "connection problem"),
    (PromptTooLong, "prompt too long"),
    (MediaError, "image or document refused"),
    (Fatal, "request refused"),
)


def _describe(error: ModelError | None) -> str:
    if error is None:
        return "unknown model error"
    name = next((n for kind, n in _FAILURE_NAMES if isinstance(error, kind)), "model error")
    status = f" (HTTP {error.status})" if error.status else ""
    return f"{name}{status}: {error.message}"
