"""Session + transcript: every message is on disk before anyone sees it, whatever ends the run."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from codeloop.context.compact import SummaryModel
from codeloop.context.pipeline import ContextManager, ContextSettings
from codeloop.context.tokens import ContextLimits
from codeloop.events import (
    AssistantTurn,
    CompactBoundary,
    Compacting,
    Event,
    LoopEnd,
    Notice,
    RequestStart,
    UserTurn,
)
from codeloop.models.base import ModelClient, ModelRequest, StreamEvent
from codeloop.permissions.policy import Policy
from codeloop.session import Session
from codeloop.session_config import SessionConfig
from codeloop.store.transcript import TranscriptWriter, read_transcript
from codeloop.testing.scenario import earlier_calls, tool_use, turn
from codeloop.testing.scripted import ScriptedModel
from codeloop.tools.base import Workspace
from codeloop.tools.registry import default_tools

SESSION = "9a8b7c6d-1234-4e5f-8a9b-0c1d2e3f4a5b"


def make_session(
    model: ModelClient,
    cwd: Path,
    path: Path,
    notices: Sequence[str] = (),
    context: ContextManager | None = None,
) -> Session:
    config = SessionConfig(
        model="claude-sonnet-4-5",
        system="test",
        max_tokens=1024,
        policy=Policy("bypassPermissions"),
    )
    writer = TranscriptWriter(path, SESSION, cwd)
    workspace = Workspace(cwd=cwd)
    return Session(
        model,
        default_tools(),
        workspace,
        config,
        transcript=writer,
        notices=notices,
        context=context,
    )


async def test_each_message_is_saved_before_it_is_yielded(tmp_path: Path) -> None:
    model = ScriptedModel(
        [turn("Looking.", tool_use("Bash", {"command": "echo hi"})), turn("It says hi.")]
    )
    path = tmp_path / "t.jsonl"
    session = make_session(model, tmp_path, path)
    checked = 0
    async for event in session.submit("what does echo say?"):
        saved = read_transcript(path).messages if path.exists() else ()
        if isinstance(event, RequestStart):
            assert saved[-1].role == "user"  # the prompt, or the tool results, went first
            checked += 1
        if isinstance(event, AssistantTurn | UserTurn):
            assert saved[-1] == event.message
            checked += 1
        if isinstance(event, LoopEnd):
            assert saved == event.messages
    assert checked == 5  # two requests, two answers, one tool result
    await session.aclose()
    assert session.session_id == SESSION


async def test_an_interrupted_run_leaves_a_complete_transcript(tmp_path: Path) -> None:
    calls = [tool_use("Bash", {"command": f"sleep 30 # {i}"}) for i in range(2)]
    model = ScriptedModel([turn(*calls), turn("resumed")])
    path = tmp_path / "t.jsonl"
    session = make_session(model, tmp_path, path)
    end = None
    async for event in session.submit("go"):
        if isinstance(event, AssistantTurn):
            session.interrupt()
        if isinstance(event, LoopEnd):
            end = event
    assert end is not None and end.reason == "aborted_tools"
    assert read_transcript(path).messages == end.messages
    await session.aclose()


async def test_a_transcript_that_cannot_be_written_costs_a_warning_not_the_run(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.jsonl"
    path.mkdir()  # a directory where the file should go: every write fails
    session = make_session(ScriptedModel([turn("Fine.")]), tmp_path, path)
    events: list[Event] = [e async for e in session.submit("hi")]
    warnings = [e for e in events if isinstance(e, Notice) and e.level == "warning"]
    assert len(warnings) == 1 and "stopped saving" in warnings[0].text
    assert isinstance(events[-1], LoopEnd) and events[-1].reason == "completed"
    assert session.transcript is None
    await session.aclose()


async def test_notices_from_loading_come_first(tmp_path: Path) -> None:
    session = make_session(
        ScriptedModel([turn("a"), turn("b")]),
        tmp_path,
        tmp_path / "t.jsonl",
        notices=["t.jsonl: line 3 is cut short"],
    )
    first = [e async for e in session.submit("one")]
    second = [e async for e in session.submit("two")]
    assert first[0] == Notice("warning", "t.jsonl: line 3 is cut short")
    assert not any(isinstance(e, Notice) for e in second)
    await session.aclose()


async def test_a_compaction_is_a_boundary_and_the_original_stays_on_disk(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("line of the big file\n" * 600)  # ~3 000 tokens
    model = ScriptedModel(
        [
            *earlier_calls(),  # something for the summary to replace
            turn("Reading.", tool_use("Read", {"file_path": str(tmp_path / "big.txt")})),
            turn("1. User requests and intent: read big.txt."),  # the summary call
            turn("It is a big file."),
        ]
    )
    limits = ContextLimits(4_000, 1_000)  # autocompact past 1 000 tokens
    context = ContextManager(
        SummaryModel(model.stream, "claude-sonnet-4-5"),
        limits,
        Workspace(cwd=tmp_path),
        tmp_path / "tool-results",
        settings=ContextSettings(persist_results=False, microcompact=False),
    )
    path = tmp_path / "t.jsonl"
    session = make_session(model, tmp_path, path, context=context)
    events = [e async for e in session.submit("read big.txt")]
    (boundary,) = [e for e in events if isinstance(e, CompactBoundary)]
    end = events[-1]
    assert isinstance(end, LoopEnd) and end.reason == "completed"
    assert read_transcript(path).messages == end.messages
    saved = [json.loads(line) for line in path.read_text().splitlines()]
    boundaries = [line for line in saved if line.get("subtype") == "compact_boundary"]
    assert [b["compactMetadata"]["trigger"] for b in boundaries] == ["auto"]
    assert boundaries[0]["compactMetadata"]["preTokens"] == boundary.tokens_before
    said = [json.dumps(line["message"]) for line in saved if line["type"] in ("user", "assistant")]
    assert any(message.count("line of the big file") == 600 for message in said)  # the result
    await session.aclose()


async def test_an_automatic_compaction_is_announced_while_its_summary_is_awaited(
    tmp_path: Path,
) -> None:
    """Frontends hear `Compacting` as the compaction starts, not only its boundary after: the
    summary's answer is held until the consumer of the events has seen it."""
    (tmp_path / "big.txt").write_text("line of the big file\n" * 600)  # ~3 000 tokens
    model = ScriptedModel(
        [
            *earlier_calls(),  # something for the summary to replace
            turn("Reading.", tool_use("Read", {"file_path": str(tmp_path / "big.txt")})),
            turn("1. User requests and intent: read big.txt."),  # the summary call
            turn("It is a big file."),
        ]
    )
    heard = asyncio.Event()

    async def held_summary(request: ModelRequest) -> AsyncIterator[StreamEvent]:
        await asyncio.wait_for(heard.wait(), 30)
        async for item in model.stream(request):
            yield item

    context = ContextManager(
        SummaryModel(held_summary, "claude-sonnet-4-5"),
        ContextLimits(4_000, 1_000),
        Workspace(cwd=tmp_path),
        tmp_path / "tool-results",
        settings=ContextSettings(persist_results=False, microcompact=False),
    )
    session = make_session(model, tmp_path, tmp_path / "t.jsonl", context=context)
    events: list[Event] = []
    async for event in session.submit("read big.txt"):
        if isinstance(event, Compacting):
            heard.set()
        events.append(event)
    kinds = [type(e) for e in events]
    (announced,) = [e for e in events if isinstance(e, Compacting)]
    (boundary,) = [e for e in events if isinstance(e, CompactBoundary)]
    assert kinds.index(Compacting) < kinds.index(CompactBoundary)
    assert (announced.trigger, announced.tokens) == ("auto", boundary.tokens_before)
    assert isinstance(events[-1], LoopEnd) and events[-1].reason == "completed"
    await session.aclose()


class _Watched:
    """The scripted model, noting at each answer's first event whether the transcript's
    fsync worker had been handed anything yet (its thread starts with its first sync)."""

    provider = "scripted"

    def __init__(self, model: ScriptedModel) -> None:
        self.model = model
        self.handed_over: list[tuple[bool, bool]] = []  # (before, after) the first event

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        before = _fsync_worker()
        first = True
        async for event in self.model.stream(request):
            yield event
            if first:
                first = False
                self.handed_over.append((before, _fsync_worker()))

    async def aclose(self) -> None:
        await self.model.aclose()


def _fsync_worker() -> bool:
    return any(t.name.startswith("codeloop-fsync") for t in threading.enumerate())


async def test_a_tool_rounds_sync_is_handed_over_once_the_next_answer_begins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between a tool result and the next request the session wakes no thread (on a busy
    machine that costs the waker its CPU): the round's fsync goes to the worker when the
    answer to that request begins, and the run's end at once."""
    disk = threading.Event()
    synced: list[int] = []
    real_fsync = os.fsync

    def slow_fsync(fd: int) -> None:
        if threading.current_thread().name.startswith("codeloop-fsync"):  # not the folder's
            disk.wait()
            synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    model = _Watched(ScriptedModel([turn(tool_use("Bash", {"command": "echo hi"})), turn("hi")]))
    path = tmp_path / "t.jsonl"
    session = make_session(model, tmp_path, path)
    async for _ in session.submit("say hi"):
        pass
    assert model.handed_over == [(False, False), (False, True)]
    disk.set()
    await session.aclose()
    assert synced  # the worker's fsyncs ran, close's own too
    assert read_transcript(path).messages[-1].text == "hi"
