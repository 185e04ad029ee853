"""Histories for the context-management tests, and the pairing invariant they all check."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from codeloop.context.compact import SummaryModel
from codeloop.models.base import ToolSpec
from codeloop.testing.scripted import ScriptedModel
from codeloop.types import Message, TextBlock, ToolResultBlock, ToolUseBlock

SYSTEM = "test system prompt"
TOOLS = (ToolSpec("Read", "Read a file.", {"type": "object"}),)


def assert_paired(messages: Sequence[Message]) -> None:
    """Every tool_use is answered by exactly one tool_result, in the very next message, and
    every tool_result answers a tool_use of the message before it."""
    for i, message in enumerate(messages):
        uses = [b.id for b in message.tool_uses]
        if uses:
            assert message.role == "assistant"
            assert i + 1 < len(messages), "tool_use at the end of the history"
            answers = [b.tool_use_id for b in messages[i + 1].tool_results]
            assert answers == uses, f"message {i}: calls {uses}, answers {answers}"
        results = [b.tool_use_id for b in message.tool_results]
        if results:
            assert i > 0, "a tool_result opens the history"
            calls = [b.id for b in messages[i - 1].tool_uses]
            assert results == calls, f"message {i}: answers {results}, calls {calls}"


def exchange(
    name: str,
    input: dict[str, Any],
    result: str,
    *,
    id: str,
    is_error: bool = False,
) -> tuple[Message, Message]:
    """One tool call and its answer."""
    use = ToolUseBlock(id, name, input)
    call = Message("assistant", (TextBlock(f"Calling {name}."), use))
    return call, Message("user", (ToolResultBlock(id, result, is_error),))


def read(path: str, result: str, id: str) -> tuple[Message, Message]:
    return exchange("Read", {"file_path": path}, result, id=id)


def bash(command: str, result: str, id: str) -> tuple[Message, Message]:
    return exchange("Bash", {"command": command}, result, id=id)


def summarizer(model: ScriptedModel) -> SummaryModel:
    return SummaryModel(model.stream, "scripted-model", SYSTEM, TOOLS)
