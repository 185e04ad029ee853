"""The agentic loop: one `while True` state machine, in the shape the seeds dissect.

Each iteration is one turn through five phases: prepare the context, request the model with
retries (every tool_use goes to the executor the moment its block stops streaming), then act
on a failure, on an answer, or on the tools' results. A phase either lets the next one run,
or decides the turn: a new `State` whose `transition` names why the loop goes on, or the
`LoopEnd`. The loop does no I/O of its own: every collaborator comes through `LoopDeps`.

Invariant: every tool_use in the history is followed by exactly one tool_result.
Every guard against looping forever is a State field: one reactive recovery per turn (a
compaction, or refused images replaced), one max_tokens escalation, at most three output
recoveries, one model fallback, the Stop-hook continuations, the token budget's low-yield
streak, the streak of identical calls (repetition.py), and max_turns. `State.next_turn`
resets the per-turn ones and carries the rest.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import field, replace
from typing import Any, Literal

from codeloop.context.media import strip_refused_media
from codeloop.context.memory import system_reminder
from codeloop.context.tokens import estimate_message
from codeloop.deps import Executor, LoopDeps
from codeloop.events import (
    AssistantTurn,
    CompactBoundary,
    Compacting,
    ContinueReason,
    Continuing,
    EndReason,
    Event,
    LoopEnd,
    MediaRemoved,
    MessagesDelivered,
    ModelStreamed,
    Notice,
    RequestEnd,
    RequestStart,
    ResponseDiscarded,
    Retrying,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolUseSummary,
    UserTurn,
)
from codeloop.hooks.hook_runner import MAX_STOP_HOOK_CONTINUATIONS
from codeloop.model_switch import switched
from codeloop.models.assembler import MessageAssembler
from codeloop.models.base import (
    BlockDelta,
    KeepAlive,
    MediaError,
    MessageStart,
    ModelError,
    ModelRequest,
    Overloaded,
    PromptTooLong,
    StreamIdle,
    ToolSpec,
    describe,
)
from codeloop.models.call_reader import CallReader
from codeloop.models.retry import Attempts, Fallback, GiveUp, RetryPolicy
from codeloop.repetition import Repeats
from codeloop.system.aio import (
    Aborted,
    IdleTimeout,
    Stalled,
    announced,
    unless_aborted,
    until_aborted,
    watched,
)
from codeloop.system.lull import lull
from codeloop.system.valueclass import valueclass
from codeloop.token_budget import BudgetTracker
from codeloop.tools.base import AnyTool, Workspace
from codeloop.types import Message, TaskBudget, TextBlock, ToolResultBlock, ToolUseBlock
from codeloop.usage.costs import Ledger

MAX_OUTPUT_RECOVERIES = 3
OUTPUT_RECOVERY_PROMPT = (
    "Output token limit hit. Resume directly where you stopped: no apology, no recap of what "
    "you were doing. Pick up mid-thought if that is where the cut happened, and break the "
    "remaining work into smaller pieces."
)
MID_TURN_MESSAGE = (
    "The user sent a new message while you were working:\n{text}\n\nTake it into account "
    "from here on: finish or adjust the current step as it asks, and answer it."
)
TRUNCATED_TOOL_CALL = (
    "This tool call was cut off by the output token limit before its input was complete, so it "
    "was not run. Issue it again, smaller if it was large (e.g. write a big file in parts)."
)


@valueclass
class LoopParams:
    """What the caller fixes for one run: values, and the two handles it holds on to (the
    abort signal it sets, the ledger it reads)."""

    messages: tuple[Message, ...]
    model: str
    tools: Mapping[str, AnyTool]
    workspace: Workspace
    system: str = ""
    max_tokens: int = 8192
    # Sampling, as the caller asked (Options): None and () leave the provider's default.
    temperature: float | None = None
    stop_sequences: tuple[str, ...] = ()
    # The model's largest output: one escalation to it when an answer is cut at max_tokens.
    max_output_tokens: int | None = None
    max_turns: int | None = None
    # USD the session may spend (--max-budget-usd), checked against `ledger` at each turn
    # boundary: the ledger is the session's, which every sub-agent's spending reaches too.
    max_budget_usd: float | None = None
    ledger: Ledger = field(default_factory=Ledger)
    # Output tokens the task should use (--token-budget, or `+500k` in the prompt).
    token_budget: int | None = None
    # Tokens the task may take, told to the model in every request (--task-budget).
    task_budget: int | None = None
    fallback_model: str | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    abort: asyncio.Event = field(default_factory=asyncio.Event)
    # Sent ahead of `messages` in every request, never part of the history: the memory.
    user_context: tuple[Message, ...] = ()
    # The hook event a final answer fires: a sub-agent's loop fires SubagentStop.
    stop_event: Literal["Stop", "SubagentStop"] = "Stop"
    # The tool definitions to send, asked before each turn's request (MCP servers change
    # theirs, tool search loads more); None: every tool's spec.
    offered_tools: Callable[[], Awaitable[Sequence[ToolSpec]]] | None = None
    # Each event of the model's stream goes out as it comes (ModelStreamed), before what the
    # loop makes of it: a face showing the raw stream asks for it.
    stream_events: bool = False
    # What the user sent while the model works (taken: each is given once), for the next
    # tool results; None: nobody can send any (a sub-agent's loop).
    inbox: Callable[[], Sequence[Message]] | None = None


@valueclass
class Transition:
    reason: ContinueReason


@valueclass
class State:
    """Everything that changes between iterations; replaced whole at every `continue`."""

    messages: tuple[Message, ...]
    model: str
    turn_count: int = 1
    transition: Transition | None = None
    # Per turn: reset by `next_turn`.
    max_tokens_override: int | None = None
    output_recoveries: int = 0
    # What this turn's one reactive recovery did, in a sentence (None: none yet): should the
    # request fail again, the run's end says it, so the user learns what was already tried.
    recovery: str | None = None
    # Per run: carried by `next_turn`.
    fallback_used: bool = False
    budget: BudgetTracker | None = None
    # Times a Stop hook sent the model back to work; at most MAX_STOP_HOOK_CONTINUATIONS.
    stop_hook_continuations: int = 0
    repeats: Repeats = field(default_factory=Repeats)

    def go_on(self, reason: ContinueReason, **changes: Any) -> State:
        """The same turn again (or its continuation), for `reason`."""
        return replace(self, transition=Transition(reason), **changes)

    def next_turn(self, messages: tuple[Message, ...]) -> State:
        """The next turn after the tools ran: per-turn guards start afresh."""
        return replace(
            self,
            messages=messages,
            turn_count=self.turn_count + 1,
            transition=Transition("next_turn"),
            max_tokens_override=None,
            output_recoveries=0,
            recovery=None,
        )


@valueclass(frozen=False)
class _Attempt:
    """One streamed model call and the tool calls it started."""

    assembler: MessageAssembler
    executor: Executor
    results: list[ToolResultBlock] = field(default_factory=list)
    error: ModelError | None = None
    aborted: bool = False
    started: float = 0.0  # the clock when it was sent
    ttft_ms: float | None = None  # when its message_start came, after `started`

    def collect(self, event: Event) -> Event:
        if isinstance(event, ToolFinished):
            self.results.append(event.result)
        return event


@valueclass(frozen=False)
class _Turn:
    """One iteration: the State it began with, what its phases found, and its outcome."""

    state: State
    next: State | LoopEnd | None = None
    prompt_tokens: int = 0
    attempt: _Attempt | None = None
    assistant: Message | None = None

    @property
    def done(self) -> _Attempt:
        assert self.attempt is not None, "the request phase sets the attempt"
        return self.attempt


Phase = Callable[["_Run", _Turn], AsyncIterator[Event]]


async def query_loop(params: LoopParams, deps: LoopDeps) -> AsyncIterator[Event]:
    """Run the loop to its end; the last event is the `LoopEnd`."""
    run = _Run(params, deps)
    state = run.first_state()
    try:
        while True:
            turn = _Turn(state)
            for phase in PHASES:
                async for event in phase(run, turn):
                    yield event
                if turn.next is not None:
                    break
            if not isinstance(turn.next, State):
                return  # the phase that ended the run yielded its LoopEnd
            state = turn.next
    finally:
        for _, task in run.summaries:  # a run that ended early leaves its labels unread
            task.cancel()


class _Run:
    """What stays fixed across the turns of one run."""

    def __init__(self, params: LoopParams, deps: LoopDeps) -> None:
        self.params, self.deps = params, deps
        self.tool_specs = tuple(tool.spec() for tool in params.tools.values())
        self.calls = CallReader(params.tools)
        # This run's spending; it reaches params.ledger (the session's) as it happens.
        self.totals = params.ledger.child()
        # The token budget counts what this prompt spends, sub-agents included.
        self.output_before = params.ledger.usage.output_tokens
        # A compaction hid what the history spent: the task budget then says what is left.
        self.compacted = False
        # Tool-use summaries (deps.summarize_tools): the labels under way with their batch's
        # call ids, read once the next response has finished.
        self.summaries: list[tuple[tuple[str, ...], asyncio.Future[str | None]]] = []

    async def specs(self) -> tuple[ToolSpec, ...]:
        """The tools this turn's request offers."""
        if self.params.offered_tools is None:
            return self.tool_specs
        return tuple(await self.params.offered_tools())

    def task_budget(self) -> TaskBudget | None:
        total = self.params.task_budget
        if total is None:
            return None
        if not self.compacted:
            return TaskBudget(total)
        spent = self.params.ledger.usage.output_tokens - self.output_before
        return TaskBudget(total, max(0, total - spent))

    def first_state(self) -> State:
        budget = self.params.token_budget
        return State(
            self.params.messages,
            self.params.model,
            budget=BudgetTracker(budget) if budget else None,
        )

    def end(
        self,
        turn: _Turn,
        reason: EndReason,
        messages: tuple[Message, ...],
        error: str | None = None,
    ) -> LoopEnd:
        totals = self.totals
        end = LoopEnd(
            reason,
            turn.state.turn_count,
            totals.usage,
            messages,
            error=error,
            api_duration_ms=totals.api_ms,
            usage_by_model=dict(totals.by_model),
            cost_by_model=dict(totals.cost_by_model),
        )
        turn.next = end
        return end

    def executor(self, history: tuple[Message, ...]) -> Executor:
        params, deps = self.params, self.deps
        before_write = deps.before_write
        return deps.executor(
            params.tools,
            params.workspace,
            deps.can_use_tool,
            hooks=deps.hooks,
            spawn_agent=deps.spawn_agent,
            before_write=functools.partial(before_write, history) if before_write else None,
        )

    def over_budget(self) -> str | None:
        """Why the session's spending (sub-agents' included) ends the run, if it does."""
        limit, spent = self.params.max_budget_usd, self.params.ledger.cost_usd()
        if limit is None or spent < limit:
            return None
        return f"Reached the cost budget (${spent:.4f} of ${limit:.4f})"


# --- 1. prepare the context ----------------------------------------------------------------


async def prepare_context(run: _Run, turn: _Turn) -> AsyncIterator[Event]:
    """Result budget → microcompact → autocompact; the request is not sent past the limit.
    What the pipeline announces as it starts a step (a compaction) is yielded right then."""
    starting: asyncio.Queue[Event] = asyncio.Queue()
    work = run.deps.context.prepare(turn.state.messages, run.params.abort, starting.put_nowait)
    task = asyncio.ensure_future(work)
    async for event in announced(task, starting):
        yield event
    prepared = task.result()
    for event in prepared.events:
        run.compacted = run.compacted or isinstance(event, CompactBoundary)
        yield event
    run.totals.add(turn.state.model, prepared.usage)
    turn.state = replace(turn.state, messages=prepared.messages)
    turn.prompt_tokens = prepared.tokens
    if prepared.blocked is not None:
        yield run.end(turn, prepared.blocked_reason, turn.state.messages, prepared.blocked)
    elif turn.state.transition is not None:
        yield Continuing(turn.state.transition.reason, turn.state.turn_count)


# --- 2. request with retries ---------------------------------------------------------------


async def request_with_retries(run: _Run, turn: _Turn) -> AsyncIterator[Event]:
    """Stream the call, retrying what can be retried (never once a tool has started); a model
    that stays unavailable hands the turn to the fallback."""
    params, deps, state = run.params, run.deps, turn.state
    attempts = Attempts(params.retry, None if state.fallback_used else params.fallback_model)
    tool_specs = await run.specs()
    while True:
        number = attempts.begin()
        executor = run.executor(state.messages)
        attempt = turn.attempt = _Attempt(MessageAssembler(run.calls), executor)
        limiter = params.retry.limiter
        if limiter is not None and not await unless_aborted(limiter.wait(), params.abort):
            attempt.aborted = True
            return
        attempt.started = deps.clock()
        yield RequestStart(state.turn_count, state.model, number)
        request = ModelRequest(
            model=state.model,
            messages=(*params.user_context, *state.messages),
            system=params.system,
            tools=tool_specs,
            max_tokens=state.max_tokens_override or params.max_tokens,
            temperature=params.temperature,
            stop_sequences=params.stop_sequences,
            stream=not attempts.non_streaming,
            task_budget=run.task_budget(),
        )
        async for event in _stream(
            run, attempt, request, params.retry.first_wait(turn.prompt_tokens)
        ):
            yield event
        elapsed_ms = (deps.clock() - attempt.started) * 1000
        run.totals.add(state.model, attempt.assembler.usage, elapsed_ms)
        error = attempt.error
        yield RequestEnd(
            request,
            state.turn_count,
            number,
            attempt.assembler.usage,
            elapsed_ms,
            attempt.assembler.id,
            describe(error) if error is not None else None,
            error.status if error is not None else None,
            ttft_ms=attempt.ttft_ms,
        )
        if attempt.aborted or error is None or attempt.executor.started_any:
            return
        step = attempts.after(error)
        if isinstance(step, GiveUp):
            return
        if isinstance(step, Fallback):
            to_model = attempts.fallback_model or state.model
            yield Notice("warning", f"{state.model} is {step.reason}; switching to {to_model}")
            yield ResponseDiscarded("model fallback")
            after = await switched(run.deps.hooks, state.model, to_model)
            for text in after.messages:
                yield Notice("warning", text)
            messages = state.messages
            if after.context:
                messages = (*messages, Message.user(system_reminder(after.context), is_meta=True))
            turn.next = state.go_on(
                "model_fallback", model=to_model, fallback_used=True, messages=messages
            )
            return
        if limiter is not None and isinstance(error, Overloaded):
            await limiter.hold(step.wait)  # the quota is shared: every session sharing it waits
        if attempt.assembler.blocks or attempt.assembler.id:
            yield ResponseDiscarded(describe(error))
        yield Retrying(number, params.retry.max_attempts, step.wait, describe(error), error.status)
        if not await unless_aborted(deps.sleep(step.wait), params.abort):
            # The failed attempt's partial answer was discarded: nothing of it is kept.
            turn.attempt = _Attempt(MessageAssembler(), attempt.executor, aborted=True)
            return


async def _stream(
    run: _Run, attempt: _Attempt, request: ModelRequest, first_wait: float
) -> AsyncIterator[Event]:
    """Feed one model stream to the assembler and the executor; failures land in `attempt`.
    Any data proves the stream alive (keep-alives too); the first may take `first_wait`."""
    assembler, executor = attempt.assembler, attempt.executor
    retry = run.params.retry
    try:
        source = run.deps.call_model(request)
        async for event in watched(source, run.params.abort, retry.idle_timeout, first_wait):
            if isinstance(event, Stalled):
                yield Notice("warning", f"the model has sent nothing for {event.seconds:g} s")
                continue
            ttft_ms = None
            if isinstance(event, MessageStart):
                ttft_ms = attempt.ttft_ms = (run.deps.clock() - attempt.started) * 1000
            if run.params.stream_events and not isinstance(event, KeepAlive):
                yield ModelStreamed(event, ttft_ms)
            block = assembler.feed(event)
            if isinstance(event, BlockDelta):
                if event.kind == "text":
                    yield TextDelta(event.value)
                elif event.kind == "thinking":
                    yield ThinkingDelta(event.value)
            if isinstance(block, ToolUseBlock):
                executor.add(block, estimate_message(assembler.message()))
            for ready in executor.ready():
                yield attempt.collect(ready)
        for block in assembler.written_calls():  # calls the answer wrote as text
            executor.add(block, estimate_message(assembler.message()))
    except Aborted:
        attempt.aborted = True
    except IdleTimeout as exc:
        attempt.error = StreamIdle(f"the stream stalled: {exc}")
    except ModelError as exc:
        attempt.error = exc


# --- 3. after a failure --------------------------------------------------------------------


async def after_failure(run: _Run, turn: _Turn) -> AsyncIterator[Event]:
    """An abort, a stream broken after its tools started (the finished part is kept), or an
    error: one reactive recovery for a too-long prompt or refused images, else the end."""
    attempt, state = turn.done, turn.state
    if attempt.aborted or (attempt.error is not None and attempt.executor.started_any):
        async for event in _keep_partial(run, turn):
            yield event
        return
    error = attempt.error
    if error is None:
        return
    if state.recovery is None:
        async for event in _recover(run, turn, error):
            yield event
        if turn.next is not None:
            return
    yield run.end(turn, _end_reason(error), state.messages, _explained(error, state.recovery))


def _end_reason(error: ModelError) -> EndReason:
    if isinstance(error, PromptTooLong):
        return "prompt_too_long"
    if isinstance(error, MediaError):
        return "image_error"
    return "model_error"


def _explained(error: ModelError, recovery: str | None) -> str:
    """The failure, and what the turn's reactive recovery did or why it could not help."""
    text = describe(error)
    return f"{text.rstrip('.')}. {recovery}" if recovery else text


async def _keep_partial(run: _Run, turn: _Turn) -> AsyncIterator[Event]:
    """Tool calls already under way get their results, so the finished part of the answer
    stays in the history with every tool_use paired."""
    attempt, state = turn.done, turn.state
    if attempt.aborted:
        await attempt.executor.abort()
    kept: tuple[Message, ...] = ()
    blocks = attempt.assembler.blocks
    if blocks:
        assistant = Message("assistant", blocks, uuid=run.deps.uuid())
        kept = (assistant,)
        yield AssistantTurn(assistant, attempt.assembler.model, attempt.assembler.usage, None)
        if assistant.tool_uses:
            async for event in attempt.executor.remaining():
                yield attempt.collect(event)
            tool_message = Message("user", tuple(attempt.results), uuid=run.deps.uuid())
            kept = (assistant, tool_message)
            yield UserTurn(tool_message)
    if attempt.aborted:
        yield run.end(turn, "aborted_streaming", state.messages + kept)
        return
    yield Notice("warning", f"stream failed ({describe(attempt.error)}); going on")
    turn.next = state.go_on(
        "stream_error_recovery", messages=state.messages + kept, turn_count=state.turn_count + 1
    )


async def _recover(run: _Run, turn: _Turn, error: ModelError) -> AsyncIterator[Event]:
    """The one reactive recovery of a turn: compact a too-long prompt, or replace images the
    API refused with a note (seed 001's path B). A compaction that cannot shrink the history
    ends the run, saying why."""
    state = turn.state
    if isinstance(error, PromptTooLong):
        yield Compacting("reactive", turn.prompt_tokens)
        compacted = await run.deps.context.reactive_compact(state.messages)
        for event in compacted.events:
            run.compacted = run.compacted or isinstance(event, CompactBoundary)
            yield event
        run.totals.add(state.model, compacted.usage)
        if compacted.messages is None:
            # Tried, and it cannot help: the end says why, not only that the API refused.
            explained = _explained(error, compacted.account)
            yield run.end(turn, "prompt_too_long", state.messages, explained)
            return
        yield Notice("info", "the conversation was too long; compacted it")
        turn.next = state.go_on(
            "reactive_compact_retry", messages=compacted.messages, recovery=compacted.account
        )
    elif isinstance(error, MediaError):
        offset = len(run.params.user_context)
        stripped = strip_refused_media(state.messages, error.message, offset=offset)
        if stripped.removed:
            yield MediaRemoved(stripped.removed, describe(error), stripped.messages)
            removed = (
                f"{stripped.removed} image(s) the API refused had been removed and the "
                "request sent again."
            )
            turn.next = state.go_on(
                "reactive_compact_retry", messages=stripped.messages, recovery=removed
            )


# --- 4. after an answer --------------------------------------------------------------------


async def after_answer(run: _Run, turn: _Turn) -> AsyncIterator[Event]:
    """An answer cut at max_tokens is withheld once for a larger limit (never once a tool
    started: resent, it would run again); a final answer passes the Stop hooks and the token
    budget, or the run is complete."""
    params, deps, state, attempt = run.params, run.deps, turn.state, turn.done
    assembler = attempt.assembler
    truncated = assembler.stop_reason == "max_tokens"
    max_tokens = state.max_tokens_override or params.max_tokens
    if (
        truncated
        and state.max_tokens_override is None
        and params.max_output_tokens is not None
        and params.max_output_tokens > max_tokens
        and not attempt.executor.started_any
    ):
        # Withheld: the same request again, with room for the whole answer.
        yield ResponseDiscarded("output token limit; retrying with a larger limit")
        turn.next = state.go_on(
            "max_output_tokens_escalate", max_tokens_override=params.max_output_tokens
        )
        return
    assistant = turn.assistant = Message("assistant", assembler.blocks, uuid=deps.uuid())
    deps.context.record_usage(state.messages, assistant, assembler.usage)
    yield AssistantTurn(
        assistant,
        assembler.model or state.model,
        assembler.usage,
        assembler.stop_reason,
        assembler.id,
        (deps.clock() - attempt.started) * 1000,
    )
    if run.summaries:
        async for event in _finished_summaries(run, wait=not assistant.tool_uses):
            yield event
    if assistant.tool_uses or _recovering(turn):
        return
    async for event in _stop_hooks(run, turn, assistant):
        yield event
    if turn.next is not None:
        return
    if state.budget is not None:
        used = params.ledger.usage.output_tokens - run.output_before
        tracker = state.budget.next(used)
        if tracker is not None:
            nudge = Message.user(tracker.prompt(used), is_meta=True)
            yield UserTurn(nudge)
            turn.next = state.go_on(
                "token_budget_continuation",
                messages=(*state.messages, assistant, nudge),
                budget=tracker,
            )
            return
    if truncated:
        yield Notice("warning", "the answer was cut off at the output token limit")
    yield run.end(turn, "completed", (*state.messages, assistant))


def _recovering(turn: _Turn) -> bool:
    """An answer cut at the output limit gets a recovery prompt, at most three times."""
    cut = turn.done.assembler.stop_reason == "max_tokens"
    return cut and turn.state.output_recoveries < MAX_OUTPUT_RECOVERIES


async def _stop_hooks(run: _Run, turn: _Turn, assistant: Message) -> AsyncIterator[Event]:
    """Stop (or SubagentStop) hooks may end the run, or send the model back to work."""
    hooks, state = run.deps.hooks, turn.state
    if hooks is None:
        return
    active = state.stop_hook_continuations > 0
    payload = {"stop_hook_active": active, "last_assistant_message": _text_of(assistant)}
    stop = await hooks.run(run.params.stop_event, payload)
    for text in stop.system_messages:
        yield Notice("warning", text)
    if stop.stop:
        why = stop.stop_reason or "a Stop hook ended the run"
        yield run.end(turn, "stop_hook_prevented", (*state.messages, assistant), why)
        return
    # A block, or a Stop hook's additionalContext, sends the model back to work.
    goes_on = stop.blocked or bool(stop.additional_context)
    if goes_on and state.stop_hook_continuations < MAX_STOP_HOOK_CONTINUATIONS:
        feedback = Message(
            "user", (TextBlock(stop.for_model()),), uuid=run.deps.uuid(), is_meta=True
        )
        yield UserTurn(feedback)
        turn.next = state.go_on(
            "stop_hook_blocking",
            messages=(*state.messages, assistant, feedback),
            stop_hook_continuations=state.stop_hook_continuations + 1,
        )
    elif goes_on:
        limit = MAX_STOP_HOOK_CONTINUATIONS
        yield Notice("warning", f"a Stop hook blocked {limit} times; the run ends")


def _summarize_batch(run: _Run, assistant: Message, results: list[ToolResultBlock]) -> None:
    """The batch's tool-use summary, under way beside the loop: its work waits for the loop to
    wait (codeloop.system.lull), so it never stands between the batch and the next request."""
    summarize = run.deps.summarize_tools
    if summarize is not None and results:
        label = asyncio.ensure_future(summarize(assistant.tool_uses, results))
        run.summaries.append((tuple(call.id for call in assistant.tool_uses), label))


async def _finished_summaries(run: _Run, *, wait: bool) -> AsyncIterator[Event]:
    """The tool-use summaries ready once a response has finished, in batch order. `wait`: the
    response ends the run's tool work, so the labels still coming are waited for (the answer
    is out already; an abort stops the wait)."""
    if wait:
        pending = [label for _, label in run.summaries if not label.done()]
        if pending:
            with lull().waiting():  # nothing else to do: the labels' turn
                await unless_aborted(asyncio.wait(pending), run.params.abort)
    kept = []
    for ids, label in run.summaries:
        if not label.done():
            kept.append((ids, label))
        elif not label.cancelled() and label.exception() is None and (summary := label.result()):
            yield ToolUseSummary(summary, ids)
    run.summaries = kept


# --- 5. after the tools --------------------------------------------------------------------


async def after_tools(run: _Run, turn: _Turn) -> AsyncIterator[Event]:
    """Every result in call order; then a hook's stop, an output recovery, the turn limit,
    the cost budget, or the next turn."""
    params, state, attempt = run.params, turn.state, turn.done
    assistant = turn.assistant
    assert assistant is not None, "after_answer sets the assistant message"
    try:
        async for event in until_aborted(attempt.executor.remaining(), params.abort):
            yield attempt.collect(event)
    except Aborted:
        await attempt.executor.abort()
        for event in attempt.executor.ready():
            yield attempt.collect(event)
        tool_message = Message("user", tuple(attempt.results), uuid=run.deps.uuid())
        yield UserTurn(tool_message)
        yield run.end(turn, "aborted_tools", (*state.messages, assistant, tool_message))
        return
    truncated = attempt.assembler.stop_reason == "max_tokens"
    recovering = _recovering(turn)
    results = _explain_truncated_calls(attempt.results, assistant) if truncated else attempt.results
    _summarize_batch(run, assistant, results)
    content: tuple[ToolResultBlock | TextBlock, ...] = tuple(results)
    repeats = state.repeats.after(assistant.tool_uses, results)
    if repeats.reminder is not None:
        content = (*content, TextBlock(system_reminder(repeats.reminder)))
    state = turn.state = replace(state, repeats=repeats)
    if batch_context := await attempt.executor.finish_batch():
        content = (*content, TextBlock(batch_context))
    for event in attempt.executor.ready():  # the batch hooks' messages for the user
        yield attempt.collect(event)
    if recovering:
        content = (*content, TextBlock(OUTPUT_RECOVERY_PROMPT))
    limit = params.max_turns
    turns_over = not recovering and limit is not None and state.turn_count + 1 > limit
    over = None if recovering or turns_over else run.over_budget()
    goes_on = attempt.executor.hook_stop is None and not turns_over and over is None
    # What the user sent meanwhile rides along, if the model gets these results at all.
    if goes_on and (arrived := params.inbox() if params.inbox is not None else ()):
        reminders = (_mid_turn(message) for message in arrived)
        content = (*content, *reminders)
        yield MessagesDelivered(tuple(message.uuid for message in arrived))
    user_message = Message("user", content, uuid=run.deps.uuid(), is_meta=not results)
    yield UserTurn(user_message)
    if run.summaries:  # the labels ready by now, their next response long finished
        async for label in _finished_summaries(run, wait=False):
            yield label
    messages = (*state.messages, assistant, user_message)
    if attempt.executor.hook_stop is not None:
        yield run.end(turn, "hook_stopped", messages, attempt.executor.hook_stop)
    elif repeats.stop is not None:
        yield run.end(turn, "repeated_calls", messages, repeats.stop)
    elif recovering:
        recoveries = state.output_recoveries + 1
        turn.next = state.go_on(
            "max_output_tokens_recovery", messages=messages, output_recoveries=recoveries
        )
    elif turns_over:
        yield run.end(turn, "max_turns", messages, f"Reached the limit of {limit} turns")
    elif over is not None:
        yield run.end(turn, "max_budget", messages, over)
    else:
        turn.next = state.next_turn(messages)


PHASES: tuple[Phase, ...] = (
    prepare_context,
    request_with_retries,
    after_failure,
    after_answer,
    after_tools,
)


def _mid_turn(message: Message) -> TextBlock:
    return TextBlock(system_reminder(MID_TURN_MESSAGE.format(text=_text_of(message))))


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
