"""L3: the summary replaces the history; the latest request, the files and the todos survive."""

from __future__ import annotations

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
from codeloop.context.tokens import ContextLimits, estimate_messages
from codeloop.events import CompactTrigger
from codeloop.models.scripted import ScriptedModel
from codeloop.testing.scenario import fault, turn
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

    head, latest = result.messages
    assert latest is history[-3]  # the very message, word for word
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
    assert (boundary.trigger, boundary.summary, boundary.fallback) == ("auto", SUMMARY, None)
    assert boundary.messages_replaced == len(history)
    assert boundary.messages == result.messages  # what a transcript writes at the boundary
    assert boundary.tokens_after < boundary.tokens_before
    assert result.usage.output_tokens > 0

    (request,) = model.requests
    assert is_summary_request(request)
    # Same system prompt, tools and history prefix as the session's requests: a cache hit.
    assert (request.system, request.tools) == (SYSTEM, TOOLS)
    assert all(a is b for a, b in zip(request.messages[:-1], history[:-1], strict=True))
    assert request.messages[-1].tool_results == history[-1].tool_results
    assert request.messages[-1].content[-1].text.startswith(SUMMARY_PROMPT)  # type: ignore[union-attr]
    assert request.max_tokens == LIMITS.autocompact_at // 4


async def test_a_request_not_yet_worked_on_ends_the_new_history(tmp_path: Path) -> None:
    history = (*_session(tmp_path), Message("assistant", ()), Message.user("What next?"))
    result = await _compact(
        history, ScriptedModel([turn(f"<summary>{SUMMARY}</summary>")]), tmp_path
    )
    head, latest = result.messages
    assert latest is history[-1]
    assert "go on from" not in head.text and "follows word for word" in head.text
    assert result.boundary.summary == SUMMARY  # the <summary> tags are taken off


async def test_instructions_and_the_pre_compact_hook_reach_the_summary_call(
    tmp_path: Path,
) -> None:
    calls: list[tuple[str, str | None]] = []

    async def hook(trigger: CompactTrigger, instructions: str | None) -> str | None:
        calls.append((trigger, instructions))
        return "Keep the names of failing tests."

    model = ScriptedModel([turn(SUMMARY)])
    manager = ContextManager(
        summarizer(model), LIMITS, Workspace(cwd=tmp_path), tmp_path / "r", pre_compact=hook
    )
    result = await manager.compact(_session(tmp_path), "Focus on the tokenizer.")
    assert calls == [("manual", "Focus on the tokenizer.")]
    prompt = model.requests[0].messages[-1].content[-1].text  # type: ignore[union-attr]
    assert prompt.endswith("Focus on the tokenizer.\n\nKeep the names of failing tests.")
    assert result.boundary.trigger == "manual"


async def test_todos_from_a_todo_store_are_kept(tmp_path: Path) -> None:
    history = (Message.user("go"), *bash("ls", "a\n" * 2_000, "t1"))
    store = [{"content": "Write the changelog", "status": "pending"}]
    result = await _compact(history, ScriptedModel([turn(SUMMARY)]), tmp_path, todos=store)
    assert "1. [pending] Write the changelog" in result.messages[0].text


async def test_a_failed_summary_drops_the_oldest_turns_instead(tmp_path: Path) -> None:
    history: tuple[Message, ...] = (Message.user("Start."),)
    history += exchange("TodoWrite", {"todos": TODOS}, "ok", id="todo")
    history += (Message.user(LATEST),)
    for i in range(40):
        history += bash(f"step {i}", "output line\n" * 1_000, f"t{i}")
    model = ScriptedModel([turn(SUMMARY, faults=[fault("server_error")])])
    result = await _compact(history, model, tmp_path)

    assert result.boundary.fallback is not None and "failed" in result.boundary.fallback
    assert result.boundary.summary == ""
    new = result.messages
    assert_paired(new)
    assert new[0].is_meta and is_compact_summary(new[0])
    assert "3. [pending] Run the tests" in new[0].text
    assert latest_user_request(new) is history[3]
    assert new[-1] is history[-1]  # the newest turns are kept as they were
    assert estimate_messages(new) <= LIMITS.autocompact_at // 2


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


async def test_an_earlier_summary_outlives_a_failed_compaction(tmp_path: Path) -> None:
    first = await _compact(_session(tmp_path), ScriptedModel([turn(SUMMARY)]), tmp_path)
    history = first.messages
    for i in range(40):
        history += bash(f"step {i}", "output line\n" * 1_000, f"t{i}")
    failing = ScriptedModel([turn(SUMMARY, faults=[fault("overloaded")])])
    second = await _compact(history, failing, tmp_path)
    assert second.boundary.fallback is not None
    note, earlier, latest, *_ = second.messages
    assert is_compact_summary(note) and "dropped" in note.text
    assert earlier is first.messages[0] and latest is first.messages[1]
    assert_paired(second.messages)


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
    assert result.messages[-1].text == LATEST
