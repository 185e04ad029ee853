"""The pipeline: cheapest step first, later steps skipped once under the threshold; and the
invariants every step keeps, over generated histories."""

from __future__ import annotations

import asyncio
import itertools
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from codeloop.context.compact import (
    SummaryModel,
    compact_history,
    drop_oldest,
    fit,
    is_summary_request,
    latest_user_request,
    unanswered_start,
)
from codeloop.context.microcompact import KeepRecent, microcompact
from codeloop.context.pipeline import ContextManager, ContextSettings
from codeloop.context.tokens import ContextLimits, Shares
from codeloop.deps import LoopDeps
from codeloop.events import (
    CompactBoundary,
    Compacting,
    Event,
    LoopEnd,
    Notice,
    RequestEnd,
    ResultsFolded,
)
from codeloop.loop import LoopParams, query_loop
from codeloop.models.base import ModelRequest, StreamEvent
from codeloop.permissions.policy import Policy
from codeloop.testing.scenario import fault, turn
from codeloop.testing.scripted import ScriptedModel
from codeloop.tools.base import Workspace
from codeloop.types import Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from tests.unit.context_history import assert_paired, bash, read, summarizer

LIMITS = ContextLimits(64_000, 20_000)  # autocompact at 31 000, blocking at 41 000
SUMMARY = "1. User requests and intent: the user wants the build fixed."


def said(events: tuple[Event, ...]) -> tuple[Event, ...]:
    """What the pipeline tells the user: its events but the requests' cost reports."""
    return tuple(e for e in events if not isinstance(e, RequestEnd))


def calls(events: tuple[Event, ...]) -> list[RequestEnd]:
    return [e for e in events if isinstance(e, RequestEnd)]


def _manager(tmp_path: Path, model: ScriptedModel, **settings: bool) -> ContextManager:
    return ContextManager(
        summarizer(model),
        LIMITS,
        Workspace(cwd=tmp_path),
        tmp_path / "tool-results",
        settings=ContextSettings(**settings),
    )


def _results(messages: tuple[Message, ...]) -> list[str]:
    return [r.text for m in messages for r in m.tool_results]


async def test_a_small_history_goes_through_untouched(tmp_path: Path) -> None:
    history = (Message.user("hi"), *bash("ls", "a\n" * 3_000, "t1"))
    model = ScriptedModel([])
    prepared = await _manager(tmp_path, model).prepare(history)
    assert prepared.messages is history
    assert (prepared.folded, prepared.events) == (0, ())
    assert model.requests == []


async def test_the_workspace_gets_the_windows_shares_for_its_results(tmp_path: Path) -> None:
    """L1 runs as results are made (the executor, test_context_budget.py): the manager only
    tells the tools how big they may be, and where to save what is bigger."""
    manager = _manager(tmp_path, ScriptedModel([]))
    shares = Shares(LIMITS, manager.summarizer.overhead)
    limits = manager.workspace.result_limits
    assert (limits.result_tokens, limits.turn_tokens) == (shares.result, shares.turn_results)
    assert manager.workspace.spill == manager.spill
    assert _manager(tmp_path, ScriptedModel([]), persist_results=False).workspace.spill is None


async def test_microcompact_can_spare_the_summary_call(tmp_path: Path) -> None:
    history: tuple[Message, ...] = (Message.user("go"),)
    for i in range(12):  # 12 × ~3 000 tokens: past the 31 000 threshold
        history += read(f"/src/m{i}.py", "x = 1\n" * 2_000, f"t{i}")
    model = ScriptedModel([])
    prepared = await _manager(tmp_path, model).prepare(history)
    (folded,) = prepared.events
    assert isinstance(folded, ResultsFolded) and len(folded.results) == prepared.folded > 0
    assert folded.results[0].target == "/src/m0.py" and folded.results[0].tokens == 3_000
    assert prepared.tokens <= LIMITS.autocompact_at // 3
    assert _results(prepared.messages)[-1] == "x = 1\n" * 2_000
    assert model.requests == []
    assert_paired(prepared.messages)


async def test_autocompact_runs_when_the_cheaper_steps_are_not_enough(tmp_path: Path) -> None:
    # Long answers, not tool results, fill the window: only a summary helps.
    history: tuple[Message, ...] = ()
    for i in range(10):
        history += (Message.user(f"question {i}"), Message("assistant", (TextBlock("w" * 14_000),)))
    model = ScriptedModel([turn(SUMMARY)])
    prepared = await _manager(tmp_path, model).prepare(history)
    (boundary,) = said(prepared.events)
    (summary,) = calls(prepared.events)  # the summary call, reported with what it cost
    assert summary.purpose == "summary" and summary.usage == prepared.usage
    assert isinstance(boundary, CompactBoundary) and boundary.trigger == "auto"
    assert any(m is history[-2] for m in prepared.messages)  # "question 9", word for word
    assert prepared.usage.output_tokens > 0
    assert prepared.tokens < LIMITS.autocompact_at // 2
    assert len(model.requests) == 1


async def test_reported_usage_past_the_threshold_triggers_compaction(tmp_path: Path) -> None:
    """The estimate says the history is small; the API said otherwise, and the API wins."""
    sent = (Message.user("go"),)
    reply = Message("assistant", (TextBlock("ok"),))
    model = ScriptedModel([turn(SUMMARY)])
    manager = _manager(tmp_path, model)
    manager.record_usage(sent, reply, Usage(input_tokens=35_000))
    prepared = await manager.prepare((*sent, reply, Message.user("and now?")))
    assert len(said(prepared.events)) == 1 and len(model.requests) == 1


async def test_a_fold_keeps_the_reported_count_and_still_compacts(tmp_path: Path) -> None:
    """The API counts this history at 2.5 times the estimate (a dense tokenizer): microcompact's
    fold takes the estimate under the threshold, but not the real count, and the compaction
    that calls for still happens."""
    history: tuple[Message, ...] = (Message.user("go"),)
    for i in range(8):  # 8 × ~3 000 estimated tokens
        history += read(f"/src/m{i}.py", "x = 1\n" * 2_000, f"t{i}")
    model = ScriptedModel([turn(SUMMARY)])
    manager = _manager(tmp_path, model)
    sent, reply = history[:-2], history[-2]
    manager.record_usage(sent, reply, Usage(input_tokens=5 * manager.count((*sent, reply)) // 2))
    reported = manager.count(history)
    prepared = await manager.prepare(history)
    folded, boundary = said(prepared.events)
    assert isinstance(folded, ResultsFolded) and isinstance(boundary, CompactBoundary)
    assert boundary.tokens_before < reported  # the fold took off its share of the real count
    assert boundary.tokens_before >= LIMITS.autocompact_at
    assert len(model.requests) == 1


async def test_with_autocompact_off_a_full_window_blocks(tmp_path: Path) -> None:
    history: tuple[Message, ...] = ()
    for i in range(12):
        history += (Message.user(f"q{i}"), Message("assistant", (TextBlock("w" * 14_000),)))
    model = ScriptedModel([])
    prepared = await _manager(tmp_path, model, autocompact=False).prepare(history)
    assert prepared.blocked is not None and "41,000" in prepared.blocked
    assert model.requests == []
    # Under the blocking limit (though past autocompact) it is sent as it is.
    shorter = history[:18]
    short = await _manager(tmp_path, model, autocompact=False).prepare(shorter)
    assert short.tokens > LIMITS.autocompact_at
    assert short.blocked is None and short.messages is shorter


async def test_a_reactive_compaction_reports_its_boundary_and_cost(tmp_path: Path) -> None:
    history: tuple[Message, ...] = (Message.user("Fix the build."),)
    for i in range(6):
        history += bash(f"make {i}", "error\n" * 1_000, f"t{i}")
    model = ScriptedModel([turn(SUMMARY)])
    manager = _manager(tmp_path, model)
    compacted = await manager.reactive_compact(history)
    assert compacted.messages is not None and compacted.messages[1] is history[0]
    (boundary,) = said(compacted.events)
    assert [c.usage for c in calls(compacted.events)] == [compacted.usage]
    assert isinstance(boundary, CompactBoundary) and boundary.trigger == "reactive"
    assert compacted.usage.output_tokens > 0
    assert compacted.account.startswith(
        f"The conversation had been compacted to make room (about {boundary.tokens_before:,} "
        f"→ {boundary.tokens_after:,} tokens;"
    )
    assert (await manager.prepare(compacted.messages)).events == ()


async def test_a_failed_reactive_compaction_drops_nothing_and_says_why(tmp_path: Path) -> None:
    history: tuple[Message, ...] = (Message.user("Fix the build."),)
    for i in range(6):
        history += bash(f"make {i}", "error\n" * 1_000, f"t{i}")
    model = ScriptedModel([turn(SUMMARY, faults=[fault("auth")])])
    compacted = await _manager(tmp_path, model).reactive_compact(history)
    assert compacted.messages is None and said(compacted.events) == ()
    assert compacted.account.startswith(
        "A summary of the conversation was tried to make room, but the summary request "
        "failed: request refused (HTTP 401)"
    )
    assert compacted.account.endswith(" Nothing was dropped.")


async def test_a_failed_autocompact_goes_on_uncompacted_while_the_window_allows(
    tmp_path: Path,
) -> None:
    sent = (Message.user("go"),)
    reply = Message("assistant", (TextBlock("ok"),))
    history = (*sent, reply, Message.user("and now?"))
    failing = [turn(SUMMARY, faults=[fault("auth")])] * 2
    manager = _manager(tmp_path, ScriptedModel(failing))
    manager.record_usage(sent, reply, Usage(input_tokens=35_000))  # past 31 000, under 41 000
    prepared = await manager.prepare(history)
    assert prepared.messages is history and prepared.blocked is None
    (notice,) = said(prepared.events)
    assert isinstance(notice, Notice) and "going on uncompacted" in notice.text
    # past the blocking limit, the request is not sent: the run ends, nothing dropped
    manager = _manager(tmp_path, ScriptedModel(failing))
    manager.record_usage(sent, reply, Usage(input_tokens=45_000))
    blocked = await manager.prepare(history)
    assert blocked.messages is history
    assert blocked.blocked is not None and blocked.blocked_reason == "prompt_too_long"


# --- invariants over generated histories -------------------------------------------------

_NAMES = st.sampled_from(["Read", "Read", "Bash", "Grep", "Write", "Edit"])
_PATHS = st.sampled_from(["/src/a.py", "/src/b.py", "src/c.py"])


@st.composite
def histories(draw: st.DrawFn) -> tuple[Message, ...]:
    messages: list[Message] = [Message.user(draw(st.text(min_size=1, max_size=30)))]
    for t in range(draw(st.integers(0, 14))):
        if draw(st.integers(0, 4)) == 0:
            messages.append(Message.user(f"request {t}"))
        calls = [
            ToolUseBlock(f"t{t}_{j}", draw(_NAMES), {"file_path": draw(_PATHS), "command": "x"})
            for j in range(draw(st.integers(1, 3)))
        ]
        text = TextBlock("r" * draw(st.integers(0, 8_000)))
        messages.append(Message("assistant", (text, *calls)))
        results = [
            ToolResultBlock(c.id, "o" * draw(st.integers(0, 60_000)), draw(st.booleans()))
            for c in calls
        ]
        messages.append(Message("user", tuple(results)))
        if draw(st.booleans()):
            messages.append(Message("assistant", (TextBlock("done"),)))
    return tuple(messages)


@settings(max_examples=60, deadline=None)
@given(
    history=histories(),
    need=st.integers(0, 200_000),
    keep=st.builds(KeepRecent, st.integers(0, 4), st.integers(0, 30_000)),
    budget=st.integers(0, 60_000),
)
def test_every_step_keeps_every_call_paired_and_the_latest_request(
    history: tuple[Message, ...],
    need: int,
    keep: KeepRecent,
    budget: int,
) -> None:
    assert_paired(history)
    latest = latest_user_request(history)
    with tempfile.TemporaryDirectory() as folder:
        folded, _ = microcompact(history, need, keep)
        unseen = unanswered_start(history)
        assert folded[unseen:] == history[unseen:]
        assert_paired(folded)
        assert_paired(fit(folded, budget))
        dropped = drop_oldest(folded, budget, [latest] if latest else [], (), reason="test")
        assert_paired(dropped)
        assert latest is None or any(m is latest for m in dropped)

        async def compact(model: ScriptedModel) -> tuple[Message, ...]:
            workspace = Workspace(cwd=Path(folder))
            result = await compact_history(
                folded, summarizer(model), LIMITS, workspace, trigger="auto"
            )
            return result.messages

        for model in (ScriptedModel([turn(SUMMARY)]), ScriptedModel([])):  # summary, fallback
            compacted = asyncio.run(compact(model))
            assert_paired(compacted)
            assert latest is None or latest_user_request(compacted) is latest


def weigh(manager: ContextManager, history: tuple[Message, ...], tokens: int) -> None:
    """Make `history` count `tokens` exactly, as the API's report for the request before its
    last message (with the answer to it) would."""
    sent, reply = history[:-2], history[-2]
    manager.record_usage(sent, reply, Usage(input_tokens=tokens))
    manager.record_usage(sent, reply, Usage(input_tokens=2 * tokens - manager.count(history)))
    assert manager.count(history) == tokens


def asked(n: int) -> tuple[Message, ...]:
    """A short history whose latest request is the nth."""
    return (Message.user("go"), Message("assistant", (TextBlock("ok"),)), Message.user(f"q{n}"))


async def test_autocompact_starts_at_the_threshold_itself(tmp_path: Path) -> None:
    """31 000 tokens is the threshold: a count of exactly 31 000 compacts, 30 999 does not."""
    for tokens, summaries in ((30_999, 0), (31_000, 1)):
        model = ScriptedModel([turn(SUMMARY)])
        manager = _manager(tmp_path, model)
        weigh(manager, asked(1), tokens)
        prepared = await manager.prepare(asked(1))
        assert len(model.requests) == summaries, tokens
        boundaries = [e for e in prepared.events if isinstance(e, CompactBoundary)]
        assert [b.tokens_before for b in boundaries] == [31_000] * summaries


async def test_a_compaction_that_cannot_get_under_the_threshold_is_not_repeated(
    tmp_path: Path,
) -> None:
    """A system prompt too big for the window: the summary cannot help, and compacting again
    every turn would only cost a model call each time. It is tried again once the history
    has grown by a tenth of the threshold (3 100 tokens) from the count that followed it."""
    model = ScriptedModel([turn(SUMMARY), turn(SUMMARY)])
    manager = _manager(tmp_path, model)
    weigh(manager, asked(1), 35_000)
    first = await manager.prepare(asked(1))
    assert len(said(first.events)) == 1
    reply = Message("assistant", (TextBlock("ok"),))

    def after(n: int) -> tuple[Message, ...]:
        return (*first.messages, reply, Message.user(f"q{n}"))

    # the API says the prompt is still past the threshold after the compaction: 35 000
    for n, tokens, summaries in ((2, 35_000, 1), (3, 38_099, 1), (4, 38_100, 2)):
        weigh(manager, after(n), tokens)
        prepared = await manager.prepare(after(n))
        assert len(model.requests) == summaries, tokens
        assert len(said(prepared.events)) == (tokens == 38_100)


async def test_a_failed_autocompact_is_tried_again_only_after_the_same_regrowth(
    tmp_path: Path,
) -> None:
    """The count a failed summary was tried at is the mark: 3 100 tokens more, not fewer."""
    model = ScriptedModel([turn(SUMMARY, faults=[fault("auth", times=3)])])
    manager = _manager(tmp_path, model)
    for n, tokens, summaries in ((1, 32_000, 1), (2, 35_099, 1), (3, 35_100, 2)):
        weigh(manager, asked(n), tokens)
        prepared = await manager.prepare(asked(n))
        assert len(model.requests) == summaries, tokens
        assert prepared.blocked is None  # under the blocking limit: it goes on uncompacted


async def test_the_loop_says_compacting_while_the_summary_is_being_made(tmp_path: Path) -> None:
    """The Compacting event reaches the frontend before the summary call ends: the summary
    model here waits for the loop's listener to have seen it (else the test times out)."""
    history: tuple[Message, ...] = ()
    for i in range(10):
        history += (Message.user(f"question {i}"), Message("assistant", (TextBlock("w" * 14_000),)))
    seen = asyncio.Event()
    summaries, main = ScriptedModel([turn(SUMMARY)]), ScriptedModel([turn("Answer.")])

    async def summary(request: ModelRequest) -> AsyncIterator[StreamEvent]:
        await asyncio.wait_for(seen.wait(), 30)
        async for event in summaries.stream(request):
            yield event

    def route(request: ModelRequest) -> AsyncIterator[StreamEvent]:
        return summary(request) if is_summary_request(request) else main.stream(request)

    manager = ContextManager(
        SummaryModel(route, "scripted-model", "system", ()),
        LIMITS,
        Workspace(cwd=tmp_path),
        tmp_path / "tool-results",
    )
    params = LoopParams(
        (*history, Message.user("and now?")), "scripted-model", {}, manager.workspace
    )
    deps = LoopDeps(route, Policy("bypassPermissions").can_use_tool, context=manager)
    told: list[Event | LoopEnd] = []
    async for event in query_loop(params, deps):
        if isinstance(event, Compacting | CompactBoundary | LoopEnd):
            told.append(event)
        if isinstance(event, Compacting):
            seen.set()
    assert [type(e) for e in told] == [Compacting, CompactBoundary, LoopEnd]
    assert isinstance(told[0], Compacting) and told[0].trigger == "auto"
    assert told[0].tokens >= LIMITS.autocompact_at
    assert isinstance(told[-1], LoopEnd) and told[-1].reason == "completed"


async def test_old_results_fold_in_rare_batches_over_the_room_the_overhead_leaves(
    tmp_path: Path,
) -> None:
    """A Read of ~3 000 tokens a turn: the history grows past the room under the threshold
    (31 000 less the overhead) four times over, yet it is folded only when it nearly fills
    that room, down to a quarter of it, so most requests extend the one before unchanged and
    the newest result always reaches the model whole."""
    manager = _manager(tmp_path, ScriptedModel([]))
    shares = manager.shares
    history: tuple[Message, ...] = (Message.user("go"),)
    sent: list[tuple[Message, ...]] = []
    for i in range(40):
        history += read(f"/src/m{i}.py", f"line {i}\n" * 1_500, f"t{i}")
        prepared = await manager.prepare(history)
        assert prepared.events == () or isinstance(prepared.events[0], ResultsFolded)
        history = prepared.messages
        assert prepared.tokens < LIMITS.autocompact_at and prepared.blocked is None
        assert _results(history)[-1] == f"line {i}\n" * 1_500
        if prepared.folded:
            assert prepared.tokens - shares.overhead <= shares.fold_to + 3_100
        sent.append(history)
    extended = [b[: len(a)] == a for a, b in itertools.pairwise(sent)]
    assert extended.count(False) <= len(extended) // 7  # a fold in seven requests at most


async def test_nothing_is_compacted_while_there_is_nothing_to_summarize(tmp_path: Path) -> None:
    """A window the overhead fills: the first request, and the first call's results, are all
    a compaction would keep word for word, so none is asked for; the request goes as it is."""
    model = ScriptedModel([turn(SUMMARY)])
    manager = _manager(tmp_path, model)
    call = Message("assistant", (ToolUseBlock("t1", "Bash", {"command": "ls"}),))
    for history in (
        (Message.user("go"),),
        (Message.user("go"), call, Message("user", (ToolResultBlock("t1", "a\nb"),))),
    ):
        manager.record_usage(history, Message("assistant", (TextBlock("x"),)), Usage(35_000))
        prepared = await manager.prepare(history)
        assert prepared.tokens >= LIMITS.autocompact_at
        assert (prepared.messages, prepared.events, prepared.blocked) == (history, (), None)
    assert model.requests == []
