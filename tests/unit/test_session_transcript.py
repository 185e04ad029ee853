"""Session + transcript: every message is on disk before anyone sees it, whatever ends the run."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from codeloop.events import AssistantTurn, Event, LoopEnd, Notice, RequestStart, UserTurn
from codeloop.models.scripted import ScriptedModel
from codeloop.permissions.policy import Policy
from codeloop.session import Session, SessionConfig
from codeloop.testing.scenario import tool_use, turn
from codeloop.tools.base import Workspace
from codeloop.tools.registry import default_tools
from codeloop.transcript import TranscriptWriter, read_transcript

SESSION = "9a8b7c6d-1234-4e5f-8a9b-0c1d2e3f4a5b"


def make_session(
    model: ScriptedModel, cwd: Path, path: Path, notices: Sequence[str] = ()
) -> Session:
    config = SessionConfig(
        model="claude-sonnet-4-5",
        system="test",
        max_tokens=1024,
        policy=Policy("bypassPermissions"),
    )
    writer = TranscriptWriter(path, SESSION, cwd)
    workspace = Workspace(cwd=cwd)
    return Session(model, default_tools(), workspace, config, transcript=writer, notices=notices)


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
