"""repair_history: whatever a crash left, the history becomes one the API accepts."""

from __future__ import annotations

from codeloop.store.repair import (
    INTERRUPTED_BY_EXIT,
    LOST_BEFORE,
    LOST_BETWEEN,
    repair,
    repair_history,
)
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
    assert fixed.content[2:] == (
        TextBlock("note"),
        TextBlock(
            "[The result of tool call zzz, whose call was lost from the transcript:]\n"
            "answers nothing"
        ),
    )
    assert problems(repaired) == []


def test_results_whose_call_was_lost_are_kept_as_text() -> None:
    repaired = repair_history((Message.user("go"), results("a"), Message.user("next")))
    assert [m.text for m in repaired] == [
        "go",
        "[The result of tool call a, whose call was lost from the transcript:]\nran a",
        "next",
    ]
    assert problems(repaired) == []


def test_duplicates_and_empty_answers_are_dropped() -> None:
    prompt, call, answer = Message.user("go"), calls("a"), results("a")
    empty = Message("assistant", ())
    repaired = repair_history((prompt, call, answer, answer, empty, call, answer))
    assert repaired == (prompt, call, answer)


# --- what a damaged transcript leaves ------------------------------------------------------


def test_a_history_that_lost_its_start_begins_with_a_note_saying_so() -> None:
    answer = Message("assistant", (TextBlock("Done."),))
    fixed = repair((answer, Message.user("next")))
    assert fixed.history[0].role == "user" and fixed.history[0].text == LOST_BEFORE
    assert fixed.history[0].is_meta
    assert fixed.history[1:] == (answer, fixed.history[2])
    assert (fixed.kept, fixed.dropped, fixed.notes) == (2, 0, 1)
    assert problems(fixed.history) == []


def test_a_lost_call_leaves_its_results_as_text_ahead_of_the_rest() -> None:
    repaired = repair_history((results("a"), calls("b"), results("b")))
    assert repaired[0].role == "user" and "call a, whose call was lost" in repaired[0].text
    assert problems(repaired) == []


def test_two_answers_in_a_row_get_a_note_for_the_prompt_lost_between() -> None:
    first, second = (
        Message("assistant", (TextBlock("A."),)),
        Message("assistant", (TextBlock("B."),)),
    )
    fixed = repair((Message.user("go"), first, second))
    assert [m.text for m in fixed.history] == ["go", "A.", LOST_BETWEEN, "B."]
    assert fixed.notes == 1
    assert problems(fixed.history) == []


def test_empty_text_blocks_and_reused_call_ids_go() -> None:
    blank = Message("user", (TextBlock(" \n"), TextBlock("real")))
    again = Message("assistant", (TextBlock("Again."), ToolUseBlock("a", "Bash", {})))
    only_blank = Message("user", (TextBlock(""),))
    history = (blank, calls("a"), results("a"), only_blank, again, Message.user("next"))
    fixed = repair(history)
    assert fixed.history[0].content == (TextBlock("real"),)
    assert fixed.history[3].content == (TextBlock("Again."),)
    assert fixed.dropped == 1  # only_blank
    assert problems(fixed.history) == []


def test_what_a_repair_did_is_counted() -> None:
    history = (Message.user("go"), calls("a", "b"), results("b"))
    fixed = repair(history)
    assert (fixed.kept, fixed.dropped, fixed.interrupted, fixed.notes) == (3, 0, 1, 0)
