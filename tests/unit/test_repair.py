"""repair_history: whatever a crash left, the history becomes one the API accepts."""

from __future__ import annotations

from codeloop.repair import INTERRUPTED_BY_EXIT, repair_history
from codeloop.testing.history_check import history_problems
from codeloop.types import Message, TextBlock, ToolResultBlock, ToolUseBlock, message_to_dict


def calls(*ids: str) -> Message:
    return Message("assistant", tuple(ToolUseBlock(i, "Bash", {"command": i}) for i in ids))


def results(*ids: str) -> Message:
    return Message("user", tuple(ToolResultBlock(i, f"ran {i}") for i in ids))


def problems(messages: tuple[Message, ...]) -> list[str]:
    return history_problems([message_to_dict(m) for m in messages])


def interrupted(message: Message) -> list[str]:
    return [r.tool_use_id for r in message.tool_results if r.text == INTERRUPTED_BY_EXIT]


def test_a_valid_history_comes_back_object_for_object() -> None:
    history = (Message.user("go"), calls("a", "b"), results("a", "b"), Message.user("more"))
    repaired = repair_history(history)
    assert len(repaired) == len(history)
    assert all(x is y for x, y in zip(repaired, history, strict=True))


def test_calls_left_at_the_end_get_interrupted_results() -> None:
    history = (Message.user("go"), calls("a", "b"))
    repaired = repair_history(history)
    assert repaired[:2] == history
    assert interrupted(repaired[2]) == ["a", "b"]
    assert all(r.is_error for r in repaired[2].tool_results)
    assert problems(repaired) == []


def test_calls_followed_by_a_prompt_get_results_ahead_of_it() -> None:
    prompt = Message.user("go on")
    repaired = repair_history((Message.user("go"), calls("a"), prompt))
    fixed = repaired[2]
    assert fixed.uuid == prompt.uuid
    assert interrupted(fixed) == ["a"]
    assert fixed.content[-1] == TextBlock("go on")
    assert problems(repaired) == []


def test_calls_followed_by_another_answer_get_their_own_results() -> None:
    repaired = repair_history((Message.user("go"), calls("a"), calls("b"), results("b")))
    assert [m.role for m in repaired] == ["user", "assistant", "user", "assistant", "user"]
    assert interrupted(repaired[2]) == ["a"]
    assert problems(repaired) == []


def test_partial_and_stray_results_are_put_right() -> None:
    mixed = Message(
        "user",
        (
            TextBlock("note"),
            ToolResultBlock("b", "ran b"),
            ToolResultBlock("b", "ran b again"),
            ToolResultBlock("zzz", "answers nothing"),
        ),
    )
    repaired = repair_history((Message.user("go"), calls("a", "b"), mixed))
    fixed = repaired[2]
    assert [r.tool_use_id for r in fixed.tool_results] == ["a", "b"]
    assert interrupted(fixed) == ["a"] and fixed.tool_results[1].text == "ran b"
    assert fixed.content[-1] == TextBlock("note")
    assert problems(repaired) == []


def test_results_with_no_call_before_them_go() -> None:
    repaired = repair_history((Message.user("go"), results("a"), Message.user("next")))
    assert [m.text for m in repaired] == ["go", "next"]


def test_duplicates_and_empty_answers_are_dropped() -> None:
    prompt, call, answer = Message.user("go"), calls("a"), results("a")
    empty = Message("assistant", ())
    repaired = repair_history((prompt, call, answer, answer, empty, call, answer))
    assert repaired == (prompt, call, answer)
