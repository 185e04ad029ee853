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
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from codeloop.aio import (
    Aborted,
    IdleTimeout,
    Stalled,
    unless_aborted,
    until_aborted,
    watched,
)
from codeloop.context.media import strip_refused_media
from codeloop.context.pipeline import ContextManager
from codeloop.context.tokens import estimate_messages
from codeloop.costs import Ledger
from codeloop.deps import LoopDeps
from codeloop.events import (
    AssistantTurn,
    ContinueReason,
    Continuing,
    EndReason,
    Event,
    LoopEnd,
    MediaRemoved,
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
    MediaError,
    ModelError,
    ModelRequest,
    Overloaded,
    PromptTooLong,
    StreamIdle,
    describe,
)
from codeloop.models.retry import Attempts, Fallback, GiveUp, RetryPolicy
from codeloop.token_budget import BudgetTracker
from codeloop.tools.base import AnyTool, SpawnAgent, Workspace
from codeloop.tools.executor import CanUseTool, ToolExecutor
from codeloop.types import Message, TextBlock, ToolResultBlock, ToolUseBlock

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
    # USD the session may spend (--max-budget-usd), checked against `ledger` at each turn
    # boundary: the ledger is the session's, which every sub-agent's spending reaches too.
    max_budget_usd: float | None = None
    ledger: Ledger = field(default_factory=Ledger)
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
class _Attempt:
    """One streamed model call and the tool calls it started."""

    assembler: MessageAssembler
    executor: ToolExecutor
    results: list[ToolResultBlock] = field(default_factory=list)
    error: ModelError | None = None
    aborted: bool = False


async def query_loop(params: LoopParams, deps: LoopDeps) -> AsyncIterator[Event]:
    tool_specs = tuple(tool.spec() for tool in params.tools.values())
    # This run's spending; it reaches params.ledger (the session's) as it happens.
    totals = params.ledger.child()
    # The token budget counts what this prompt spends, sub-agents included.
    output_before = params.ledger.usage.output_tokens
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
        prompt_tokens = 0
        if params.context is not None:
            prepared = await params.context.prepare(state.messages, params.abort)
            for event in prepared.events:
                yield event
            totals.add(state.model, prepared.usage, 0.0)
            state = replace(state, messages=prepared.messages)
            if prepared.blocked is not None:
                yield end(prepared.blocked_reason, state.messages, prepared.blocked)
                return
            prompt_tokens = prepared.tokens
        elif params.retry.prefill_tokens_per_second:
            prompt_tokens = estimate_messages(state.messages)
        messages, turn_count = state.messages, state.turn_count
        if state.transition is not None:
            yield Continuing(state.transition.reason, turn_count)
        max_tokens = state.max_tokens_override or params.max_tokens

        # --- stream the model call, retrying what can be retried ---------------------------
        attempts = Attempts(params.retry, None if state.fallback_used else params.fallback_model)
        fallback: Fallback | None = None
        while True:
            attempt_no = attempts.begin()
            request = ModelRequest(
                model=state.model,
                messages=(*params.user_context, *messages),
                system=params.system,
                tools=tool_specs,
                max_tokens=max_tokens,
                stream=not attempts.non_streaming,
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
            if limiter is not None and not await unless_aborted(limiter.wait(), params.abort):
                attempt.aborted = True
                break
            yield RequestStart(turn_count, state.model, attempt_no)
            started = deps.clock()
            first_wait = params.retry.first_wait(prompt_tokens)
            async for event in _stream(attempt, request, params, deps, first_wait):
                yield event
            totals.add(state.model, attempt.assembler.usage, (deps.clock() - started) * 1000)
            error = attempt.error
            if attempt.aborted or error is None or attempt.executor.started_any:
                break
            step = attempts.after(error)
            if isinstance(step, GiveUp):
                break
            if isinstance(step, Fallback):
                fallback = step
                break
            wait = step.wait
            if limiter is not None and isinstance(error, Overloaded):
                await limiter.hold(wait)  # the quota is shared: every session sharing it waits
            if attempt.assembler.blocks or attempt.assembler.id:
                yield ResponseDiscarded(describe(error))
            yield Retrying(
                attempt_no, params.retry.max_attempts, wait, describe(error), error.status
            )
            if not await unless_aborted(deps.sleep(wait), params.abort):
                # The failed attempt's partial answer was discarded: nothing of it is kept.
                attempt = _Attempt(MessageAssembler(), attempt.executor, aborted=True)
                break

        assembler, executor = attempt.assembler, attempt.executor

        if fallback is not None and params.fallback_model is not None:
            new_model = params.fallback_model
            yield Notice("warning", f"{state.model} is {fallback.reason}; switching to {new_model}")
            yield ResponseDiscarded("model fallback")
            state = replace(
                state, model=new_model, fallback_used=True, transition=Transition("model_fallback")
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
            yield Notice("warning", f"stream failed ({describe(attempt.error)}); going on")
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
                for event in compacted.events:
                    yield event
                totals.add(state.model, compacted.usage)
                if compacted.messages is not None:
                    yield Notice("info", "the conversation was too long; compacted it")
                    state = replace(
                        state,
                        messages=compacted.messages,
                        has_attempted_reactive_compact=True,
                        transition=Transition("reactive_compact_retry"),
                    )
                    continue
            if isinstance(error, MediaError) and not state.has_attempted_reactive_compact:
                offset = len(params.user_context)
                stripped = strip_refused_media(messages, error.message, offset=offset)
                if stripped.removed:
                    yield MediaRemoved(stripped.removed, describe(error), stripped.messages)
                    state = replace(
                        state,
                        messages=stripped.messages,
                        has_attempted_reactive_compact=True,
                        transition=Transition("reactive_compact_retry"),
                    )
                    continue
            reason: EndReason = "model_error"
            if isinstance(error, PromptTooLong):
                reason = "prompt_too_long"
            elif isinstance(error, MediaError):
                reason = "image_error"
            yield end(reason, messages, describe(error))
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
                used = params.ledger.usage.output_tokens - output_before
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
        if (over := _over_budget(params)) is not None:
            yield end("max_budget", next_messages, over)
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


def _over_budget(params: LoopParams) -> str | None:
    """Why the session's spending (sub-agents' included) ends the run, if it does."""
    limit, spent = params.max_budget_usd, params.ledger.cost_usd()
    if limit is None or spent < limit:
        return None
    return f"Reached the cost budget (${spent:.4f} of ${limit:.4f})"


async def _stream(
    attempt: _Attempt,
    request: ModelRequest,
    params: LoopParams,
    deps: LoopDeps,
    first_wait: float,
) -> AsyncIterator[Event]:
    """Feed one model stream to the assembler and the executor; failures land in `attempt`.
    Any data proves the stream alive (keep-alives too); the first may take `first_wait`."""
    assembler, executor = attempt.assembler, attempt.executor
    try:
        source = deps.call_model(request)
        idle = params.retry.idle_timeout
        async for event in watched(source, params.abort, idle, first_wait):
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
