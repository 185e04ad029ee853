"""history_problems: the checker the crash tests rely on must see each kind of invalid history."""

from __future__ import annotations

from typing import Any

import pytest

from codeloop.testing.history_check import history_problems


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
    ]
    assert history_problems(messages) == []


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ([], "no messages"),
        ([assistant(text("hi"))], "first message"),
        ([user()], "empty"),
        ([user(text("go")), assistant(use("a"))], "no result answers"),
        ([user(text("go")), assistant(use("a")), user(text("next"))], "no tool_result for"),
        ([user(text("go")), assistant(use("a")), user(result("a"), result("a"))], "twice"),
        ([user(text("go")), assistant(use("a")), user(result("a"), result("b"))], "for no call"),
        ([user(text("go")), assistant(use("a")), user(text("x"), result("a"))], "before the tool"),
        ([user(text("go"), use("a"))], "tool_use in a user message"),
        ([user(text("go")), assistant(result("a"))], "tool_result in an assistant"),
        (
            [user(text("go")), assistant(use("a")), user(result("a")), assistant(use("a"))],
            "used before",
        ),
    ],
)
def test_each_invalid_history_is_reported(messages: list[dict[str, Any]], problem: str) -> None:
    found = history_problems(messages)
    assert any(problem in p for p in found), found
