"""Cassettes: a session recorded through the real loop and tools, then replayed with no model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codeloop.events import LoopEnd, Retrying
from codeloop.models.base import (
    BlockDelta,
    BlockStart,
    BlockStop,
    Fatal,
    MessageDelta,
    MessageStart,
    MessageStop,
    ModelRequest,
    StreamEvent,
    ToolSpec,
    Transient,
)
from codeloop.models.cassette import (
    FORMAT,
    CassetteMismatch,
    Normalizer,
    RecordingModel,
    ReplayModel,
    event_from_dict,
    event_to_dict,
    first_difference,
)
from codeloop.testing.scenario import fault, tool_use, turn
from codeloop.testing.scripted import ScriptedModel
from codeloop.types import (
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    message_to_dict,
)
from tests.unit.context_history import assert_paired
from tests.unit.test_loop import make_session, run


def reading_session() -> ScriptedModel:
    return ScriptedModel(
        [
            turn("Reading.", tool_use("Read", {"file_path": "notes.txt"}), chunk_chars=4),
            turn("It says alpha and beta."),
        ]
    )


def project(root: Path, notes: str = "alpha\nbeta\n") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "notes.txt").write_text(notes)
    return root


def history(end: LoopEnd) -> list[dict[str, object]]:
    return [message_to_dict(m) for m in end.messages]


async def record(cwd: Path, cassette: Path, model: ScriptedModel, prompt: str) -> LoopEnd:
    recorder = RecordingModel(model, cassette, cwd=cwd)
    _, end = await run(make_session(recorder, cwd), prompt)  # type: ignore[arg-type]
    await recorder.aclose()
    return end


async def replay(cwd: Path, cassette: Path, *prompts: str) -> tuple[ReplayModel, LoopEnd]:
    player = ReplayModel(cassette, cwd=cwd)
    session = make_session(player, cwd)  # type: ignore[arg-type]
    end = None
    for prompt in prompts:
        _, end = await run(session, prompt)
    assert end is not None
    return player, end


async def test_a_recorded_session_replays_identically(tmp_path: Path) -> None:
    cwd, cassette = project(tmp_path / "p"), tmp_path / "session.jsonl"
    recorded = await record(cwd, cassette, reading_session(), "what is in notes.txt?")
    player, replayed = await replay(cwd, cassette, "what is in notes.txt?")
    assert replayed.reason == recorded.reason == "completed"
    assert history(replayed) == history(recorded)
    assert_paired(replayed.messages)
    assert (player.requests, player.remaining) == (2, 0)
    assert player.provider == "scripted" and player.model == "scripted-model"


async def test_the_cassette_is_a_header_then_one_line_per_call(tmp_path: Path) -> None:
    cwd, cassette = project(tmp_path / "p"), tmp_path / "session.jsonl"
    await record(cwd, cassette, reading_session(), "what is in notes.txt?")
    header, *calls = [json.loads(line) for line in cassette.read_text().splitlines()]
    assert header == {"format": FORMAT, "provider": "scripted"}
    assert [c["request"]["messages"][-1]["role"] for c in calls] == ["user", "user"]
    first = calls[0]["events"]
    assert first[0]["type"] == "message_start" and first[-1] == {"type": "message_stop"}


async def test_a_cassette_replays_in_another_directory(tmp_path: Path) -> None:
    here, there = project(tmp_path / "here"), project(tmp_path / "there")
    absolute = str(here / "notes.txt")
    model = ScriptedModel(
        [turn(tool_use("Read", {"file_path": absolute})), turn(f"Read {absolute}.")]
    )
    cassette = tmp_path / "session.jsonl"
    await record(here, cassette, model, f"read {absolute}")
    assert str(here) not in cassette.read_text()
    _, end = await replay(there, cassette, f"read {there / 'notes.txt'}")
    assert end.reason == "completed"
    assert end.messages[1].tool_uses[0].input == {"file_path": str(there / "notes.txt")}
    assert end.messages[-1].text == f"Read {there / 'notes.txt'}."


async def test_a_request_that_went_elsewhere_names_the_first_differing_field(
    tmp_path: Path,
) -> None:
    cwd, cassette = project(tmp_path / "p"), tmp_path / "session.jsonl"
    await record(cwd, cassette, reading_session(), "what is in notes.txt?")
    (cwd / "notes.txt").write_text("alpha\ngamma\n")  # so the Read result differs
    _, end = await replay(cwd, cassette, "what is in notes.txt?")
    assert end.reason == "model_error"
    assert end.error is not None
    assert "request 2 differs from recorded call 2 at $.messages[2].content[0].content" in (
        end.error
    )
    assert "beta" in end.error and "gamma" in end.error


async def test_a_request_beyond_the_recording_says_so(tmp_path: Path) -> None:
    cwd, cassette = project(tmp_path / "p"), tmp_path / "one.jsonl"
    await record(cwd, cassette, ScriptedModel([turn("hi")]), "hello")
    _, end = await replay(cwd, cassette, "hello", "again")
    assert end.error is not None
    assert "request 2 was not recorded (all 1 recorded calls were served)" in end.error


async def test_errors_are_recorded_and_replayed(tmp_path: Path) -> None:
    cwd, cassette = project(tmp_path / "p"), tmp_path / "flaky.jsonl"
    flaky = ScriptedModel([turn("fine", faults=[fault("overloaded", retry_after=0)])])
    await record(cwd, cassette, flaky, "hi")
    player = ReplayModel(cassette, cwd=cwd)
    events, end = await run(make_session(player, cwd), "hi")  # type: ignore[arg-type]
    (retry,) = [e for e in events if isinstance(e, Retrying)]
    assert retry.status == 529
    assert (end.reason, end.messages[-1].text, player.remaining) == ("completed", "fine", 0)


async def test_a_stream_left_early_is_marked_and_replays_as_cut(tmp_path: Path) -> None:
    cassette = tmp_path / "left.jsonl"
    recorder = RecordingModel(ScriptedModel([turn("a long answer")]), cassette, cwd=tmp_path)
    request = ModelRequest("m", (Message.user("hi"),))
    stream = recorder.stream(request)
    async for _ in stream:
        break
    await stream.aclose()  # type: ignore[attr-defined]
    call = json.loads(cassette.read_text().splitlines()[1])
    assert call["abandoned"] is True and len(call["events"]) == 1
    served: list[StreamEvent] = []
    with pytest.raises(Transient, match="stops here"):
        async for event in ReplayModel(cassette, cwd=tmp_path).stream(request):
            served.append(event)
    assert [type(e) for e in served] == [MessageStart]


def test_events_survive_the_round_trip() -> None:
    events: list[StreamEvent] = [
        MessageStart("msg_1", "m", Usage(10, 1, 2, 3)),
        BlockStart(0, ThinkingBlock("")),
        BlockDelta(0, "thinking", "hmm"),
        BlockDelta(0, "signature", "sig"),
        BlockStop(0),
        BlockStart(1, TextBlock("")),
        BlockDelta(1, "text", "hi"),
        BlockStart(2, ToolUseBlock("toolu_1", "Read", {})),
        BlockDelta(2, "input_json", '{"file_path": "a"}'),
        MessageDelta("stop_sequence", Usage(0, 5), "END"),
        MessageStop(),
    ]
    assert [event_from_dict(json.loads(json.dumps(event_to_dict(e)))) for e in events] == events


def test_volatile_values_are_normalized(tmp_path: Path) -> None:
    call = ToolUseBlock("toolu_abc", "Read", {"file_path": str(tmp_path / "src" / "a.py")})
    messages = (
        Message.user("session 0b7e1f7c-9a1e-4c2b-8d6f-3f1e2d4c5b6a on 2025-01-31"),
        Message("assistant", (call,)),
        Message("user", (ToolResultBlock("toolu_abc", "made /tmp/tmpk2x9/out.log at 12:00"),)),
    )
    request = ModelRequest("m", messages, system=f"cwd {tmp_path}, today 2026-11-05T10:11:12Z")
    normalized = Normalizer(tmp_path).request(request)
    assert normalized["system"] == "cwd <cwd>, today <date>"
    first, second, third = normalized["messages"]
    assert first["content"][0]["text"] == "session <uuid> on <date>"
    assert second["content"][0]["id"] == "<id 1>"
    assert second["content"][0]["input"] == {"file_path": "<cwd>/src/a.py"}
    assert third["content"][0]["tool_use_id"] == "<id 1>"
    assert third["content"][0]["content"] == "made <tmp> at 12:00"


def test_two_runs_with_different_ids_compare_equal(tmp_path: Path) -> None:
    def request(id_: str) -> ModelRequest:
        call = ToolUseBlock(id_, "Glob", {"pattern": "*"})
        return ModelRequest(
            "m",
            (
                Message.user("go"),
                Message("assistant", (call,)),
                Message("user", (ToolResultBlock(id_, "a.py"),)),
            ),
            tools=(ToolSpec("Glob", "find files", {"type": "object"}),),
        )

    normalizer = Normalizer(tmp_path)
    assert normalizer.request(request("toolu_1")) == normalizer.request(request("call_xyz"))


@pytest.mark.parametrize(
    ("recorded", "live", "where"),
    [
        ({"a": {"b": [1, 2]}}, {"a": {"b": [1, 3]}}, "$.a.b[1]"),
        ({"a": [1, 2]}, {"a": [1]}, "$.a[1]"),
        ({"a": 1}, {"a": 1, "z": 2}, "$.z"),
        ({"-n": True}, {"-n": False}, '$["-n"]'),
        ({"a": "x"}, {"a": 1}, "$.a"),
    ],
)
def test_first_difference_is_a_json_path(recorded: object, live: object, where: str) -> None:
    assert first_difference(recorded, live)[0] == where


def test_long_strings_are_shown_around_where_they_part() -> None:
    head = "x" * 100
    where, recorded, got = first_difference({"t": head + "beta" + "y" * 100}, {"t": head + "gamma"})
    assert where == "$.t"
    assert recorded.startswith("…") and "beta" in recorded and len(recorded) < 90
    assert got.startswith("…") and "gamma" in got


def test_an_absent_value_is_shown_as_nothing() -> None:
    assert first_difference({"a": 1}, {}) == ("$.a", "1", "(nothing)")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "not a codeloop cassette"),
        ('{"format": "other"}\n', "not a codeloop cassette"),
        (f'{{"format": "{FORMAT}"}}\n{{oops\n', "line 2: not JSON"),
    ],
)
def test_a_bad_cassette_is_a_clear_error(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    with pytest.raises(ValueError, match=says):
        ReplayModel(path)


def test_a_missing_cassette_or_an_unwritable_one_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="No such file"):
        ReplayModel(tmp_path / "nope.jsonl")
    with pytest.raises(ValueError, match="cannot record to"):
        RecordingModel(ScriptedModel([]), tmp_path / "no" / "dir.jsonl")


def test_a_mismatch_is_fatal_not_retried() -> None:
    assert issubclass(CassetteMismatch, Fatal) and not CassetteMismatch("x").retryable
