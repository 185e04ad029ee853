"""L3: the summary replaces the history; the latest request, the files and the todos survive."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from codeloop.context.compact import (
    SUMMARY_PROMPT,
    compact_history,
    is_compact_summary,
    is_summary_request,
    latest_user_request,
)
from codeloop.context.pipeline import ContextManager
from codeloop.context.tokens import ContextLimits, Shares, estimate_messages, result_tokens
from codeloop.events import CompactTrigger, Notice, RequestEnd, Retrying
from codeloop.models.retry import RetryPolicy
from codeloop.testing.scenario import fault, turn
from codeloop.testing.scripted import ScriptedModel
from codeloop.tools.base import Workspace
from codeloop.types import Message, TextBlock
from tests.unit.context_history import (
    SYSTEM,
    TOOLS,
    assert_paired,
    bash,
    exchange,
    read,
    summarizer,
)

LIMITS = ContextLimits(64_000, 20_000)  # autocompact at 31 000, blocking at 41 000
SUMMARY = "1. User requests and intent: make the parser accept tabs.\n7. Next step: run tests."
TODOS = [
    {"content": "Read the parser", "status": "completed", "activeForm": "Reading"},
    {"content": "Accept tabs in the tokenizer", "status": "in_progress", "activeForm": "Fixing"},
    {"content": "Run the tests", "status": "pending", "activeForm": "Running tests"},
]
LATEST = "Now make it accept tabs too — and keep `parse()` signature unchanged!"


def _session(tmp_path: Path) -> tuple[Message, ...]:
    return (
        Message.user("Fix the parser in src/parser.py."),
        *read(str(tmp_path / "parser.py"), "def parse(s):\n    ...\n" * 300, "t1"),
        *exchange("TodoWrite", {"todos": TODOS}, "Todos updated", id="t2"),
        *bash("pytest", "FAILED test_tabs\n" * 400, "t3"),
        Message("assistant", (TextBlock("test_tabs fails: tabs are not split on."),)),
        Message.user(LATEST),
        *bash("pytest -k tabs", "1 failed\n" * 500, "t4"),
    )


async def _compact(
    history: tuple[Message, ...],
    model: ScriptedModel,
    tmp_path: Path,
    trigger: CompactTrigger = "auto",
    **kwargs: Any,
) -> Any:
    return await compact_history(
        history, summarizer(model), LIMITS, Workspace(cwd=tmp_path), trigger=trigger, **kwargs
    )


async def test_the_summary_replaces_the_history_and_the_latest_request_stays(
    tmp_path: Path,
) -> None:
    (tmp_path / "parser.py").write_text("def parse(s):\n    return s.split()\n")
    history = _session(tmp_path)
    model = ScriptedModel([turn(SUMMARY)])
    result = await _compact(history, model, tmp_path)

    head, *kept = result.messages
    # The newest turns stay word for word (the last test output too: the model need not rerun
    # it), and with them the latest request, the very message.
    assert 3 <= len(kept) < len(history) - 1
    assert all(a is b for a, b in zip(kept, history[-len(kept) :], strict=True))
    latest = next(m for m in kept if m.role == "user" and not m.tool_results)
    assert latest is history[-3] and latest.text == LATEST
    assert "most recent turns follow" in head.text
    assert latest.text == LATEST
    assert head.is_meta and is_compact_summary(head)
    assert f"<summary>\n{SUMMARY}\n</summary>" in head.text
    assert "go on from the current work" in head.text  # work on the request was under way
    # The todo list as the last TodoWrite set it.
    assert "2. [in_progress] Accept tabs in the tokenizer" in head.text
    # The file read earlier, as it is on disk now.
    assert f'<file path="{tmp_path / "parser.py"}">' in head.text
    assert "     2\t    return s.split()" in head.text

    boundary = result.boundary
    assert boundary is not None and result.failure is None
    assert (boundary.trigger, boundary.summary) == ("auto", SUMMARY)
    assert boundary.messages_replaced == len(history)
    assert boundary.messages == result.messages  # what a transcript writes at the boundary
    assert boundary.tokens_after < boundary.tokens_before
    assert result.usage.output_tokens > 0

    (request,) = model.requests
    assert is_summary_request(request)
    # Same system prompt, tools and history prefix as the session's requests: a cache hit.
    assert (request.system, request.tools) == (SYSTEM, TOOLS)
    assert request.tool_choice == "none"  # the tools are sent, not to be called
    assert all(a is b for a, b in zip(request.messages[:-1], history[:-1], strict=True))
    assert request.messages[-1].tool_results == history[-1].tool_results
    assert request.messages[-1].content[-1].text.startswith(SUMMARY_PROMPT)  # type: ignore[union-attr]
    overhead = summarizer(model).overhead
    assert request.max_tokens == Shares(LIMITS, overhead).summary == (31_000 - overhead) // 4
    # What it replaced, reviewable: every tool result, with its call and its size.
    assert boundary.kept == tuple(m.uuid for m in kept)
    replaced = [r.tool_use_id for m in history if m not in kept for r in m.tool_results]
    assert [r.tool_use_id for r in boundary.results] == replaced and "t1" in replaced
    assert all(r.fate == "summarized" for r in boundary.results)
    assert boundary.results[0].tool == "Read" and boundary.results[0].target.endswith("parser.py")
    assert boundary.results[0].tokens == result_tokens(history[2].tool_results[0].content)


async def test_a_request_not_yet_worked_on_ends_the_new_history(tmp_path: Path) -> None:
    history = (*_session(tmp_path), Message("assistant", ()), Message.user("What next?"))
    result = await _compact(
        history, ScriptedModel([turn(f"<summary>{SUMMARY}</summary>")]), tmp_path
    )
    head, *kept = result.messages
    assert kept[-1] is history[-1] and kept[-2] is history[-2]  # the newest turns, then it
    assert "go on from" not in head.text and "follows word for word" in head.text
    assert result.boundary is not None
    assert result.boundary.summary == SUMMARY  # the <summary> tags are taken off


@dataclass(frozen=True)
class Answer:
    """What hooks answer (the shape of hooks.HookOutcome the compactor reads)."""

    blocked: bool = False
    reason: str = ""
    system_messages: tuple[str, ...] = ()
    context: str = ""

    def for_model(self) -> str:
        return self.context


async def test_instructions_and_the_pre_compact_hook_reach_the_summary_call(
    tmp_path: Path,
) -> None:
    calls: list[tuple[str, str | None]] = []

    async def hook(trigger: CompactTrigger, instructions: str | None) -> Answer:
        calls.append((trigger, instructions))
        return Answer(context="Keep the names of failing tests.")

    summaries: list[tuple[str, str]] = []

    async def after(trigger: CompactTrigger, summary: str) -> Answer:
        summaries.append((trigger, summary))
        return Answer(system_messages=("saved the summary to notes/",))

    model = ScriptedModel([turn(SUMMARY)])
    manager = ContextManager(
        summarizer(model),
        LIMITS,
        Workspace(cwd=tmp_path),
        tmp_path / "r",
        pre_compact=hook,
        post_compact=after,
    )
    result = await manager.compact(_session(tmp_path), "Focus on the tokenizer.")
    assert calls == [("manual", "Focus on the tokenizer.")]
    prompt = model.requests[0].messages[-1].content[-1].text  # type: ignore[union-attr]
    assert prompt.endswith("Focus on the tokenizer.\n\nKeep the names of failing tests.")
    assert result.boundary is not None and result.boundary.trigger == "manual"
    assert summaries == [("manual", SUMMARY)]
    assert Notice("warning", "saved the summary to notes/") in result.events


async def test_a_pre_compact_hook_can_refuse_the_compaction(tmp_path: Path) -> None:
    async def hook(trigger: CompactTrigger, instructions: str | None) -> Answer:
        return Answer(blocked=True, reason="a release is being cut")

    model = ScriptedModel([turn(SUMMARY)])
    manager = ContextManager(
        summarizer(model), LIMITS, Workspace(cwd=tmp_path), tmp_path / "r", pre_compact=hook
    )
    history = _session(tmp_path)
    result = await manager.compact(history)
    assert result.boundary is None and result.messages is history and model.requests == []
    assert result.failure is not None and "a release is being cut" in result.failure


async def test_todos_from_a_todo_store_are_kept(tmp_path: Path) -> None:
    history = (Message.user("go"), *bash("ls", "a\n" * 2_000, "t1"))
    store = [{"content": "Write the changelog", "status": "pending"}]
    result = await _compact(history, ScriptedModel([turn(SUMMARY)]), tmp_path, todos=store)
    assert "1. [pending] Write the changelog" in result.messages[0].text


async def test_a_failed_summary_is_retried_like_the_main_call(tmp_path: Path) -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    model = ScriptedModel([turn(SUMMARY, faults=[fault("overloaded")])])
    patient = replace(summarizer(model), retry=RetryPolicy(random=lambda: 0.0), sleep=sleep)
    result = await compact_history(
        _session(tmp_path), patient, LIMITS, Workspace(cwd=tmp_path), trigger="auto"
    )
    assert result.failure is None and result.boundary is not None
    assert result.boundary.summary == SUMMARY
    assert len(model.requests) == 2 and waits == [0.5]
    (retry,) = [e for e in result.events if not isinstance(e, RequestEnd)]
    # both tries were billed, the failed one included
    assert len([e for e in result.events if isinstance(e, RequestEnd)]) == 2
    assert isinstance(retry, Retrying) and retry.status == 529


async def test_a_summary_that_keeps_failing_drops_nothing(tmp_path: Path) -> None:
    history: tuple[Message, ...] = (Message.user("Start."),)
    history += exchange("TodoWrite", {"todos": TODOS}, "ok", id="todo")
    history += (Message.user(LATEST),)
    for i in range(40):
        history += bash(f"step {i}", "output line\n" * 1_000, f"t{i}")
    model = ScriptedModel([turn(SUMMARY, faults=[fault("auth")])])
    result = await _compact(history, model, tmp_path)
    assert result.boundary is None
    assert result.failure is not None and "request refused (HTTP 401)" in result.failure
    assert result.messages is history


async def test_a_reactive_summary_that_leaves_no_less_is_not_applied(tmp_path: Path) -> None:
    """One short request, which the API still calls too long: the summary is made (and billed),
    but what it would leave is no smaller, so the history stays as it was, no PostCompact hook
    hears of a compaction that did not happen, and the manager says why, and what else the
    request carries."""
    posted: list[str] = []

    async def after(trigger: CompactTrigger, summary: str) -> Answer:
        posted.append(summary)
        return Answer()

    history = (Message.user(LATEST),)
    model = ScriptedModel([turn(SUMMARY)])
    manager = ContextManager(
        summarizer(model), LIMITS, Workspace(cwd=tmp_path), tmp_path / "r", post_compact=after
    )
    compacted = await manager.reactive_compact(history)
    assert compacted.messages is None and posted == [] and len(model.requests) == 1
    assert compacted.usage.output_tokens > 0
    account = compacted.account
    assert account.startswith(
        "A summary of the conversation was tried to make room, but the history it would leave"
    )
    left, now, carried = [int(n.replace(",", "")) for n in re.findall(r"about ([\d,]+)", account)]
    assert left >= now == estimate_messages(history)
    assert (
        "which is already at the floor (a compaction keeps up to 2,000 tokens of history as it is)"
        in account
    )
    assert carried == manager.summarizer.overhead and account.endswith(" Nothing was dropped.")


async def test_a_summary_switches_to_the_fallback_model_like_the_main_call(
    tmp_path: Path,
) -> None:
    storm = fault("overloaded", times=50, model="scripted-model")
    model = ScriptedModel([turn(SUMMARY, faults=[storm])])
    switching = replace(
        summarizer(model),
        retry=RetryPolicy(random=lambda: 0.0),
        fallback_model="backup",
        sleep=_no_sleep,
    )
    result = await compact_history(
        _session(tmp_path), switching, LIMITS, Workspace(cwd=tmp_path), trigger="auto"
    )
    assert result.boundary is not None and result.boundary.summary == SUMMARY
    assert [r.model for r in model.requests] == ["scripted-model"] * 3 + ["backup"]
    assert any(isinstance(e, Notice) and "switching to backup" in e.text for e in result.events)


async def _no_sleep(_: float) -> None:
    return None


async def test_a_history_too_big_to_summarize_is_cut_to_fit(tmp_path: Path) -> None:
    history: tuple[Message, ...] = (Message.user(LATEST),)
    for i in range(60):  # ~180K tokens: far past the 64K window
        history += bash(f"step {i}", "z" * 12_000, f"t{i}")
    model = ScriptedModel([turn(SUMMARY)])
    result = await _compact(history, model, tmp_path, trigger="reactive")
    (request,) = model.requests
    assert estimate_messages(request.messages) <= LIMITS.blocking_at
    assert_paired(request.messages)
    assert result.messages[1] is history[0]
    assert result.boundary.trigger == "reactive"


async def test_a_small_window_with_a_big_system_prompt_keeps_the_latest_request(
    tmp_path: Path,
) -> None:
    # 16K window: autocompact at ~3K, so half of it minus a 2.4K-token prompt is below zero.
    small = ContextLimits(16_000, 1_024)
    big_system = summarizer(ScriptedModel([turn(SUMMARY)]))
    big_system = type(big_system)(big_system.call_model, big_system.model, "x" * 10_000, TOOLS)
    history = _session(tmp_path)
    result = await compact_history(
        history, big_system, small, Workspace(cwd=tmp_path), trigger="auto"
    )
    kept = latest_user_request(result.messages)
    assert kept is not None and kept.text == LATEST
    assert_paired(result.messages)
