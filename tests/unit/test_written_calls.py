"""Tool calls written as text, in the formats model families write them, read into tool_use
blocks; JSON that only looks like a call stays text; tool names in the wrong case resolve."""

from __future__ import annotations

import pytest

from codeloop.models.call_reader import CallReader
from codeloop.models.written_calls import WrittenCall, find_calls
from codeloop.types import TextBlock, ThinkingBlock, ToolUseBlock

READER = CallReader(["Bash", "Read", "Glob", "mcp__db__Query", "mcp__db__query"])

LS = WrittenCall("Bash", {"command": "ls"})


@pytest.mark.parametrize(
    ("text", "call"),
    [
        # a ```json block with name and arguments (or input), the commonest
        ('```json\n{"name": "Bash", "arguments": {"command": "ls"}}\n```', LS),
        ('```\n{"tool": "Bash", "input": {"command": "ls"}}\n```', LS),
        ('```json\n{"name": "Bash", "arguments": {"command": "ls",},}\n```', LS),
        # a bare object as the whole answer, OpenAI's shape with arguments as a string
        (
            '{"type": "function", "function": '
            '{"name": "Bash", "arguments": "{\\"command\\": \\"ls\\"}"}}',
            LS,
        ),
        # Qwen 2.5 / Hermes
        ('<tool_call>\n{"name": "Bash", "arguments": {"command": "ls"}}\n</tool_call>', LS),
        # Qwen3 Coder
        (
            "<tool_call>\n<function=Bash>\n<parameter=command>\nls\n</parameter>\n"
            "</function>\n</tool_call>",
            LS,
        ),
        # Llama 3.1
        ('<|python_tag|>{"name": "Bash", "parameters": {"command": "ls"}}<|eom_id|>', LS),
        ('<function=Bash>{"command": "ls"}</function>', LS),
        # Mistral, old and new
        ('[TOOL_CALLS] [{"name": "Bash", "arguments": {"command": "ls"}}]', LS),
        ('[TOOL_CALLS]Bash[ARGS]{"command": "ls"}', LS),
        # Gemma's tool_code, Llama 3.2's Python list
        ('```tool_code\nprint(Bash(command="ls"))\n```', LS),
        ("[Bash(command='ls')]", LS),
    ],
)
def test_a_call_in_a_known_format_is_read(text: str, call: WrittenCall) -> None:
    found = find_calls(text, READER.real_name)
    assert found is not None and found.calls == (call,) and found.rest == ""


def test_the_words_around_a_call_are_kept() -> None:
    text = 'Let me look.\n```json\n{"name": "Read", "arguments": {"file_path": "a.py"}}\n```\n'
    found = find_calls(text, READER.real_name)
    assert found is not None and found.rest == "Let me look."
    assert found.calls == (WrittenCall("Read", {"file_path": "a.py"}),)


def test_several_calls_are_read_in_order() -> None:
    text = (
        '<tool_call>{"name": "Glob", "arguments": {"pattern": "*"}}</tool_call>\n'
        '<tool_call>{"name": "Read", "arguments": {"file_path": "b"}}</tool_call>'
    )
    found = find_calls(text, READER.real_name)
    assert found is not None and [c.name for c in found.calls] == ["Glob", "Read"]


@pytest.mark.parametrize(
    "text",
    [
        "The answer is 42.",
        # JSON that names no tool, or is no call: an answer showing data
        '```json\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n```',
        '```json\n{"name": "Alice", "age": 3}\n```',
        '{"name": "Bash", "arguments": {"command": "ls"}, "note": "example"}',
        "```python\nprint('hi')\n```",
        "```python\nrun(command='ls')\n```",
        "Bash(command=make_command())",
        "Bash(**options)",
        "(" * 5000,
        "Qwen wraps its calls in <tool_call> tags.",
    ],
)
def test_what_is_not_a_call_stays_text(text: str) -> None:
    assert find_calls(text, READER.real_name) is None


def test_a_native_call_with_broken_json_is_a_call_the_model_hears_about() -> None:
    found = find_calls(
        '<tool_call>{"name": "Bash", "arguments": {"command": "ls"</tool_call>', READER.real_name
    )
    assert found is not None
    (call,) = found.calls
    assert call.name == "Bash" and call.input_error is not None
    assert "not valid JSON" in call.input_error


def test_a_native_call_to_an_unknown_tool_is_still_a_call() -> None:
    """The marker says it is one: the executor refuses it, naming the tools there are."""
    found = find_calls(
        '<tool_call>{"name": "list_files", "arguments": {}}</tool_call>', READER.real_name
    )
    assert found is not None and found.calls == (WrittenCall("list_files", {}),)


@pytest.mark.parametrize(
    ("written", "real"),
    [
        ("Bash", "Bash"),
        ("bash", "Bash"),
        ("BASH", "Bash"),
        ("read", "Read"),
        ("bashoutput", None),  # an old name's tool (TaskOutput) that is not offered here
        ("nope", None),
        # two tools differ only in case: each spelling of its own, no guessing otherwise
        ("mcp__db__query", "mcp__db__query"),
        ("mcp__db__Query", "mcp__db__Query"),
        ("MCP__DB__QUERY", None),
    ],
)
def test_tool_names_resolve_when_unambiguous(written: str, real: str | None) -> None:
    assert READER.real_name(written) == real


def test_an_old_name_in_another_case_resolves_to_the_current_tool() -> None:
    assert CallReader(["Agent"]).real_name("task") == "Agent"


def test_an_answer_with_a_written_call_becomes_a_tool_use() -> None:
    thinking = ThinkingBlock("hmm", "sig")
    text = TextBlock('I will list.\n```json\n{"name": "bash", "arguments": {"command": "ls"}}\n```')
    blocks = READER.written((thinking, text))
    assert blocks is not None
    kept_thinking, kept_text, call = blocks
    assert kept_thinking == thinking and kept_text == TextBlock("I will list.")
    assert isinstance(call, ToolUseBlock)
    assert (call.name, call.input) == ("Bash", {"command": "ls"})


def test_an_answer_that_calls_tools_is_left_alone() -> None:
    written = TextBlock('```json\n{"name": "Bash", "arguments": {"command": "ls"}}\n```')
    assert READER.written((written, ToolUseBlock("t1", "Read", {"file_path": "a"}))) is None
    assert READER.written((TextBlock("done"),)) is None
