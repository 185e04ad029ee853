"""Weak models' formats, through the loop on the scripted model with the real tools: a tool
named in the wrong case runs (recorded under its real name), arguments with a slip run, a call
written as text is executed rather than taken for the answer, and a call repeated with the
same result gets a reminder, then ends the run."""

from __future__ import annotations

from pathlib import Path

from codeloop.events import AssistantTurn, ToolFinished
from codeloop.repetition import REMIND_AFTER, STOP_AFTER
from codeloop.testing.scenario import tool_use, turn
from codeloop.testing.scripted import ScriptedModel
from codeloop.types import Message, ToolUseBlock
from tests.unit.context_history import assert_paired
from tests.unit.test_loop import make_session, run


def calls(messages: tuple[Message, ...]) -> list[ToolUseBlock]:
    return [use for message in messages for use in message.tool_uses]


async def test_a_tool_named_in_another_case_runs_under_its_real_name(tmp_path: Path) -> None:
    model = ScriptedModel(
        [turn(tool_use("bash", {"command": "echo ran > out.txt"})), turn("Done.")]
    )
    events, end = await run(make_session(model, tmp_path), "go")
    assert end.reason == "completed" and end.final_text == "Done."
    assert (tmp_path / "out.txt").read_text() == "ran\n"
    (recorded,) = [
        e.message for e in events if isinstance(e, AssistantTurn) and e.message.tool_uses
    ]
    assert [use.name for use in recorded.tool_uses] == ["Bash"]  # what the transcript keeps
    (result,) = model.requests[1].messages[-1].tool_results
    assert not result.is_error


async def test_arguments_with_a_trailing_comma_run(tmp_path: Path) -> None:
    sloppy = tool_use("Bash", raw_input='{"command": "echo ran > out.txt",}')
    model = ScriptedModel([turn(sloppy), turn("Done.")])
    _, end = await run(make_session(model, tmp_path), "go")
    assert end.reason == "completed"
    assert (tmp_path / "out.txt").read_text() == "ran\n"
    assert calls(end.messages)[0].input == {"command": "echo ran > out.txt"}


async def test_a_call_written_as_a_json_block_is_executed_not_taken_for_the_answer(
    tmp_path: Path,
) -> None:
    written = (
        "I will write the file.\n```json\n"
        '{"name": "Write", "arguments": {"file_path": "a.txt", "content": "hello"}}\n```'
    )
    model = ScriptedModel([turn(written), turn("Wrote a.txt.")])
    events, end = await run(make_session(model, tmp_path), "write hello to a.txt")
    assert end.reason == "completed" and end.final_text == "Wrote a.txt."
    assert (tmp_path / "a.txt").read_text() == "hello"
    assert len(model.requests) == 2  # the written call was not the answer
    first_answer = end.messages[1]
    assert first_answer.text == "I will write the file."
    (use,) = first_answer.tool_uses
    assert (use.name, use.input) == ("Write", {"file_path": "a.txt", "content": "hello"})
    assert_paired(end.messages)
    assert any(isinstance(e, ToolFinished) and e.tool_use.id == use.id for e in events)


async def test_a_repeated_failing_call_gets_a_reminder_then_ends_the_run(tmp_path: Path) -> None:
    same = [turn(tool_use("Bash", {"command": "cat missing.txt"})) for _ in range(12)]
    model = ScriptedModel([*same, turn("never reached")])
    events, end = await run(make_session(model, tmp_path), "show missing.txt")
    executed = [e for e in events if isinstance(e, ToolFinished)]
    assert all(e.result.is_error for e in executed)
    # The model reads the reminder before it makes the 4th identical call.
    before_fourth = model.requests[REMIND_AFTER].messages[-1].text
    assert "same call 3 times" in before_fourth and "cat missing.txt" in before_fourth
    for request in model.requests[:REMIND_AFTER]:
        assert "same call" not in request.messages[-1].text
    assert end.reason == "repeated_calls"
    assert end.error is not None and "repeated the same tool call 6 times" in end.error
    assert "cat missing.txt" in end.error
    assert len(executed) == STOP_AFTER <= 9
    assert_paired(end.messages)


async def test_a_call_whose_result_changes_is_no_repetition(tmp_path: Path) -> None:
    poll = tool_use("Bash", {"command": "echo x >> log && wc -l < log"})
    model = ScriptedModel([*[turn(poll) for _ in range(STOP_AFTER + 1)], turn("Counted.")])
    _, end = await run(make_session(model, tmp_path), "count")
    assert end.reason == "completed"
    assert all("same call" not in request.messages[-1].text for request in model.requests)


async def test_another_call_in_between_starts_the_count_afresh(tmp_path: Path) -> None:
    failing = tool_use("Bash", {"command": "cat missing.txt"})
    other = tool_use("Glob", {"pattern": "*"})
    pattern = [failing, failing, other] * 3
    model = ScriptedModel([*[turn(call) for call in pattern], turn("Gave up.")])
    _, end = await run(make_session(model, tmp_path), "go")
    assert end.reason == "completed"
    assert all("same call" not in request.messages[-1].text for request in model.requests)
