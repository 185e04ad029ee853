"""Chat Completions conversion, both ways, without a server: history out, chunks back in."""

from __future__ import annotations

import json
from typing import Any

import pytest

from codeloop.models.assembler import MessageAssembler
from codeloop.models.base import (
    BlockDelta,
    BlockStart,
    BlockStop,
    MessageDelta,
    MessageStart,
    MessageStop,
    ModelRequest,
    StreamErrorEvent,
    StreamEvent,
    ToolSpec,
    Transient,
)
from codeloop.models.openai import ChunkConverter, completion_as_chunk, request_body
from codeloop.types import (
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)

URL = "http://127.0.0.1:8080/v1/chat/completions"


# --- request -------------------------------------------------------------------------------


def body(*messages: Message, **fields: Any) -> dict[str, Any]:
    return request_body(ModelRequest("local-model", messages, **fields))


def test_system_prompt_comes_first_and_user_text_is_a_plain_string() -> None:
    out = body(Message.user("hello"), system="Be brief.")
    assert out["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hello"},
    ]
    assert out["max_tokens"] == 8192 and out["model"] == "local-model"
    assert "stream" not in out  # the client adds the streaming fields


def test_no_system_message_when_the_prompt_is_empty() -> None:
    assert body(Message.user("x"))["messages"][0]["role"] == "user"


def test_several_text_blocks_join_into_one_string() -> None:
    message = Message("user", (TextBlock("<reminder>"), TextBlock("do it")))
    assert body(message)["messages"] == [{"role": "user", "content": "<reminder>\n\ndo it"}]


def test_assistant_tool_calls_have_empty_string_content_and_json_arguments() -> None:
    assistant = Message(
        "assistant",
        (
            ThinkingBlock("hmm", "sig"),
            RedactedThinkingBlock("opaque"),
            ToolUseBlock("call_1", "Bash", {"command": "ls -la", "timeout": 5}),
        ),
    )
    (out,) = body(assistant)["messages"]
    assert out["content"] == ""
    assert out["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {
                "name": "Bash",
                "arguments": json.dumps({"command": "ls -la", "timeout": 5}),
            },
        }
    ]


def test_assistant_text_and_calls_share_one_message() -> None:
    assistant = Message(
        "assistant", (TextBlock("Let me "), TextBlock("look."), ToolUseBlock("c", "Read", {}))
    )
    (out,) = body(assistant)["messages"]
    assert out["content"] == "Let me look."
    assert len(out["tool_calls"]) == 1


def test_assistant_text_only_has_no_tool_calls_key() -> None:
    (out,) = body(Message("assistant", (TextBlock("done"),)))["messages"]
    assert out == {"role": "assistant", "content": "done"}


def test_an_assistant_message_of_only_thinking_is_dropped() -> None:
    assert body(Message("assistant", (ThinkingBlock("x", "s"),)))["messages"] == []


def test_tool_results_become_tool_messages_before_any_user_text() -> None:
    user = Message(
        "user",
        (
            TextBlock("also, hurry"),
            ToolResultBlock("call_1", "file.txt"),
            ToolResultBlock("call_2", (TextBlock("exit 1"), TextBlock("boom")), is_error=True),
        ),
    )
    assert body(user)["messages"] == [
        {"role": "tool", "tool_call_id": "call_1", "content": "file.txt"},
        {"role": "tool", "tool_call_id": "call_2", "content": "Error: exit 1\nboom"},
        {"role": "user", "content": "also, hurry"},
    ]


def test_images_become_data_urls() -> None:
    user = Message("user", (TextBlock("what is this?"), ImageBlock("image/jpeg", "AAAA")))
    (out,) = body(user)["messages"]
    assert out["content"] == [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA"}},
    ]


def test_an_image_from_a_tool_result_follows_in_a_user_message() -> None:
    result = ToolResultBlock("call_9", (TextBlock("screenshot:"), ImageBlock("image/png", "QQ==")))
    tool, user = body(Message("user", (result,)))["messages"]
    assert tool == {"role": "tool", "tool_call_id": "call_9", "content": "screenshot:"}
    assert user["role"] == "user"
    assert "call_9" in user["content"][0]["text"]
    assert user["content"][1]["image_url"]["url"] == "data:image/png;base64,QQ=="


def test_tools_temperature_stop_and_extra() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    out = body(
        Message.user("x"),
        tools=(ToolSpec("Search", "Find things.", schema),),
        temperature=0.2,
        stop_sequences=("END",),
        thinking_budget=4096,  # Anthropic-only: not sent
        extra={"reasoning_effort": "low"},
    )
    assert out["tools"] == [
        {
            "type": "function",
            "function": {"name": "Search", "description": "Find things.", "parameters": schema},
        }
    ]
    assert (out["temperature"], out["stop"], out["reasoning_effort"]) == (0.2, ["END"], "low")
    assert "thinking" not in out


def test_max_tokens_field_is_chosen_by_the_caller() -> None:
    out = request_body(ModelRequest("gpt-5", ()), max_tokens_field="max_completion_tokens")
    assert out["max_completion_tokens"] == 8192 and "max_tokens" not in out


# --- response ------------------------------------------------------------------------------


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any):
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {"id": "chatcmpl-1", "model": "m", "choices": choices, **extra}


def convert(*chunks: dict[str, Any], done: bool = True) -> list[StreamEvent]:
    converter = ChunkConverter(URL)
    events = [event for c in chunks for event in converter.feed(c)]
    converter.saw_done = done
    return events + converter.finish()


def assemble(events: list[StreamEvent]) -> MessageAssembler:
    assembler = MessageAssembler()
    for event in events:
        assembler.feed(event)
    return assembler


def call(index: int, id_: str | None = None, name: str | None = None, args: str | None = None):
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if args is not None:
        function["arguments"] = args
    out: dict[str, Any] = {"index": index, "function": function}
    if id_ is not None:
        out |= {"id": id_, "type": "function"}
    return out


def test_text_stream() -> None:
    events = convert(
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Hel"}),
        chunk({"content": "lo"}),
        chunk({}, "stop"),
    )
    assert events == [
        MessageStart("chatcmpl-1", "m", Usage()),
        BlockStart(0, TextBlock("")),
        BlockDelta(0, "text", "Hel"),
        BlockDelta(0, "text", "lo"),
        BlockStop(0),
        MessageDelta("end_turn", Usage()),
        MessageStop(),
    ]


def test_reasoning_then_text_then_parallel_tools_in_order() -> None:
    events = convert(
        chunk({"reasoning_content": "think "}),
        chunk({"reasoning": "more"}),
        chunk({"content": "Running."}),
        chunk({"tool_calls": [call(0, "call_a", "Bash", "")]}),
        chunk({"tool_calls": [call(0, args='{"command"')]}),
        chunk({"tool_calls": [call(0, args=': "ls"}')]}),
        chunk({"tool_calls": [call(1, "call_b", "Read", '{"file_path": "x"}')]}),
        chunk({}, "tool_calls"),
    )
    kinds = [(type(e).__name__, getattr(e, "index", None)) for e in events]
    assert kinds == [
        ("MessageStart", None),
        ("BlockStart", 0),
        ("BlockDelta", 0),
        ("BlockDelta", 0),
        ("BlockStop", 0),
        ("BlockStart", 1),
        ("BlockDelta", 1),
        ("BlockStop", 1),
        ("BlockStart", 2),
        ("BlockDelta", 2),
        ("BlockDelta", 2),
        ("BlockStop", 2),  # stops the moment the next call starts: its tool can run already
        ("BlockStart", 3),
        ("BlockDelta", 3),
        ("BlockStop", 3),
        ("MessageDelta", None),
        ("MessageStop", None),
    ]
    message = assemble(events)
    assert message.blocks == (
        ThinkingBlock("think more"),
        TextBlock("Running."),
        ToolUseBlock("call_a", "Bash", {"command": "ls"}),
        ToolUseBlock("call_b", "Read", {"file_path": "x"}),
    )
    assert message.stop_reason == "tool_use"


@pytest.mark.parametrize(
    ("finish", "stop"),
    [
        ("stop", "end_turn"),
        ("length", "max_tokens"),
        ("content_filter", "refusal"),
        ("tool_calls", "tool_use"),
        ("something_new", "end_turn"),
    ],
)
def test_finish_reasons(finish: str, stop: str) -> None:
    assert assemble(convert(chunk({"content": "x"}, finish))).stop_reason == stop


def test_stop_after_tool_calls_means_tool_use() -> None:
    events = convert(chunk({"tool_calls": [call(0, "c1", "Bash", "{}")]}), chunk({}, "stop"))
    assert assemble(events).stop_reason == "tool_use"


def test_usage_from_the_final_chunk_with_cached_tokens() -> None:
    usage = {
        "prompt_tokens": 15670,
        "completion_tokens": 96,
        "total_tokens": 15766,
        "prompt_tokens_details": {"cached_tokens": 13184},
    }
    events = convert(chunk({"content": "x"}), chunk({}, "stop"), chunk(None, usage=usage))
    assert assemble(events).usage == Usage(
        input_tokens=2486, output_tokens=96, cache_read_input_tokens=13184
    )


def test_usage_without_details() -> None:
    usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    events = convert(chunk({"content": "x"}, "stop", usage=usage))
    assert assemble(events).usage == Usage(10, 2)


def test_a_stream_without_finish_or_done_is_transient() -> None:
    with pytest.raises(Transient, match="ended before its finish_reason"):
        convert(chunk({"content": "partial"}), done=False)
    with pytest.raises(Transient):
        convert(done=True)  # nothing at all


def test_done_without_finish_reason_is_accepted() -> None:
    events = convert(chunk({"content": "ok"}), done=True)
    assert assemble(events).stop_reason == "end_turn"


def test_finish_reason_without_done_is_accepted() -> None:
    assert assemble(convert(chunk({"content": "ok"}, "stop"), done=False)).message().text == "ok"


def test_an_error_chunk_raises() -> None:
    error = {"error": {"message": "upstream overloaded", "type": "server_error"}}
    with pytest.raises(StreamErrorEvent, match="upstream overloaded"):
        convert(chunk({"content": "x"}), error)


def test_a_new_id_at_the_same_index_is_a_new_call() -> None:
    events = convert(
        chunk({"tool_calls": [call(0, "call_1", "Read", '{"file_path": "a"}')]}),
        chunk({"tool_calls": [call(0, "call_2", "Read", '{"file_path": "b"}')]}),
        chunk({}, "tool_calls"),
    )
    assert [b.id for b in assemble(events).message().tool_uses] == ["call_1", "call_2"]


def test_a_call_without_id_gets_one() -> None:
    events = convert(chunk({"tool_calls": [call(0, name="Bash", args="{}")]}), chunk({}, "stop"))
    (tool,) = assemble(events).message().tool_uses
    assert tool.id.startswith("call_") and tool.name == "Bash"


def test_arguments_sent_as_an_object_are_serialized() -> None:
    fragment = {"index": 0, "id": "c", "function": {"name": "Bash", "arguments": {"command": "ls"}}}
    events = convert(chunk({"tool_calls": [fragment]}), chunk({}, "tool_calls"))
    assert assemble(events).message().tool_uses[0].input == {"command": "ls"}


def test_arguments_for_an_already_closed_call_are_refused() -> None:
    with pytest.raises(Transient, match="continued tool call 0"):
        convert(
            chunk({"tool_calls": [call(0, "c0", "A", "{")]}),
            chunk({"tool_calls": [call(1, "c1", "B", "{}")]}),
            chunk({"tool_calls": [call(0, args="}")]}),
        )


def test_other_choices_are_ignored() -> None:
    other = {"index": 1, "delta": {"content": "alt"}, "finish_reason": None}
    first = chunk({"content": "main"})
    first["choices"].append(other)
    assert assemble(convert(first, chunk({}, "stop"))).message().text == "main"


def test_a_whole_completion_converts_like_a_stream() -> None:
    completion = {
        "id": "chatcmpl-9",
        "object": "chat.completion",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "reasoning_content": "plan",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "A", "arguments": "{}"},
                        },
                        {
                            "id": "c2",
                            "type": "function",
                            "function": {"name": "B", "arguments": '{"x": 1}'},
                        },
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 7},
    }
    message = assemble(convert(completion_as_chunk(completion)))
    assert message.blocks == (
        ThinkingBlock("plan"),
        ToolUseBlock("c1", "A", {}),
        ToolUseBlock("c2", "B", {"x": 1}),
    )
    assert (message.stop_reason, message.usage, message.id) == (
        "tool_use",
        Usage(5, 7),
        "chatcmpl-9",
    )
