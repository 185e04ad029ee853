"""history_problems, chat_problems: the APIs' own validation, which the fake server applies, must
refuse each kind of invalid history in the API's words, and take every valid one."""

from __future__ import annotations

from typing import Any

import pytest

from codeloop.testing.history_check import ChatProblem, chat_problems, history_problems


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def use(id_: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": id_, "name": "Bash", "input": {}}


def result(id_: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": id_, "content": "ok"}


def test_a_valid_history_has_no_problems() -> None:
    messages = [
        {"role": "user", "content": "go"},
        assistant(text("on it"), use("a"), use("b")),
        user(result("a"), result("b"), text("and then?")),
        user(text("two user messages in a row are merged by the API")),
        assistant(text("done")),
        assistant(),  # an empty final assistant message: a prefill
    ]
    assert history_problems(messages) == []


def test_messages_of_one_role_in_a_row_are_one_turn() -> None:
    """The API merges them: the calls of two assistant messages are answered together."""
    messages = [user(text("go")), assistant(use("a")), assistant(use("b"))]
    messages += [user(result("a")), user(result("b"))]
    assert history_problems(messages) == []
    late = [user(text("go")), assistant(use("a")), user(text("first")), user(result("a"))]
    assert history_problems(late)[0].startswith("messages.1: `tool_use` ids were found without")


UNANSWERED = (
    "`tool_use` ids were found without `tool_result` blocks immediately after: {}. Each "
    "`tool_use` block must have a corresponding `tool_result` block in the next message."
)
STRAY = (
    "unexpected `tool_use_id` found in `tool_result` blocks: {}. Each `tool_result` block "
    "must have a corresponding `tool_use` block in the previous message."
)


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ([], "messages: at least one message is required"),
        ("hi", "messages: Input should be a valid list"),
        (None, "messages: Field required"),
        ([assistant(text("hi"))], 'messages: first message must use the "user" role'),
        (
            [user(), assistant(text("x"))],
            "messages.0: all messages must have non-empty content except for the optional "
            "final assistant message",
        ),
        ([user(text(""))], "messages: text content blocks must be non-empty"),
        ([user(text(" \n"))], "messages: text content blocks must contain non-whitespace text"),
        (
            [user(text("go")), assistant(text("so "))],
            "messages: final assistant content cannot end with trailing whitespace",
        ),
        (
            [user(text("go")), assistant(use("a"), use("b"))],
            "messages.1: " + UNANSWERED.format("a, b"),
        ),
        (
            [user(text("go")), assistant(use("a")), user(text("next"))],
            "messages.1: " + UNANSWERED.format("a"),
        ),
        (
            [user(text("go")), assistant(use("a")), user(text("x"), result("a"))],
            "messages.1: " + UNANSWERED.format("a"),
        ),
        (
            [user(text("go")), assistant(use("a")), user(result("a"), result("b"))],
            "messages.2.content.1: " + STRAY.format("b"),
        ),
        ([user(result("a"))], "messages.0.content.0: " + STRAY.format("a")),
        (
            [user(text("go")), assistant(use("a")), user(result("a"), result("a"))],
            "messages.2.content.1: `tool_use` a is answered by two `tool_result`s",
        ),
        (
            [user(text("go"), use("a"))],
            "messages.0.content.1: tool_use blocks can only be in assistant messages",
        ),
        (
            [user(text("go")), assistant(result("a"))],
            "messages.1.content.0: tool_result blocks can only be in user messages",
        ),
        (
            [user(text("go")), assistant(use("a")), user(result("a")), assistant(use("a"))],
            "messages.3.content.0: `tool_use` ids must be unique",
        ),
    ],
)
def test_each_invalid_history_is_refused_in_the_api_words(messages: Any, problem: str) -> None:
    found = history_problems(messages)
    assert problem in found, found


def tool(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "ok"}


def calling(*ids: str) -> dict[str, Any]:
    calls = [
        {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids
    ]
    return {"role": "assistant", "content": None, "tool_calls": calls}


def test_chat_tool_messages_answer_the_assistant_message_they_follow() -> None:
    prompt = {"role": "user", "content": "go"}
    assert chat_problems([prompt, calling("a", "b"), tool("b"), tool("a"), prompt]) == []
    assert chat_problems([prompt, tool("a")]) == [
        ChatProblem(
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
            "message with 'tool_calls'.",
            "messages.[1].role",
        )
    ]
    (unanswered,) = chat_problems([prompt, calling("a", "b"), tool("a")])
    assert unanswered.message.endswith("did not have response messages: b")
    (stray,) = chat_problems([prompt, calling("a"), tool("a"), tool("z")])
    assert stray == ChatProblem(
        "Invalid parameter: 'tool_call_id' of 'z' not found in 'tool_calls' of previous message.",
        "messages.[3].tool_call_id",
    )
