"""Messages API events → normalized events, and the request body, without a server."""

from __future__ import annotations

from typing import Any

import pytest

from codeloop.models.anthropic import EventMapper, replay, request_body
from codeloop.models.assembler import MessageAssembler
from codeloop.models.base import (
    BlockDelta,
    BlockStart,
    MessageDelta,
    ModelRequest,
    PromptTooLong,
    StreamErrorEvent,
    ToolSpec,
    Transient,
)
from codeloop.types import (
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)

URL = "http://127.0.0.1:1/v1/messages"


def run(*events: tuple[str, dict[str, Any]]) -> MessageAssembler:
    mapper, assembler = EventMapper(URL), MessageAssembler()
    for kind, data in events:
        if (event := mapper.feed(kind, data)) is not None:
            assembler.feed(event)
    mapper.finish()
    return assembler


START = (
    "message_start",
    {"message": {"id": "msg_1", "model": "claude", "usage": {"input_tokens": 3}}},
)
STOP: tuple[str, dict[str, Any]] = ("message_stop", {})


def delta(index: int, **fields: Any) -> tuple[str, dict[str, Any]]:
    return "content_block_delta", {"index": index, "delta": fields}


def test_blocks_of_unknown_types_are_skipped_with_their_deltas() -> None:
    message = run(
        START,
        (
            "content_block_start",
            {
                "index": 0,
                "content_block": {
                    "type": "server_tool_use",
                    "id": "s",
                    "name": "web_search",
                    "input": {},
                },
            },
        ),
        delta(0, type="input_json_delta", partial_json='{"query": "x"}'),
        ("content_block_stop", {"index": 0}),
        ("content_block_start", {"index": 1, "content_block": {"type": "text", "text": ""}}),
        delta(1, type="text_delta", text="found it"),
        delta(1, type="citations_delta", citation={"url": "u"}),
        ("content_block_stop", {"index": 1}),
        ("some_future_event", {"index": 1}),
        ("ping", {}),
        ("message_delta", {"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}}),
        STOP,
    )
    assert message.blocks == (TextBlock("found it"),)
    assert message.usage == Usage(3, 9)


def test_redacted_thinking_opens_whole() -> None:
    mapper = EventMapper(URL)
    start = {"index": 0, "content_block": {"type": "redacted_thinking", "data": "EmwKAhgB"}}
    assert mapper.feed("content_block_start", start) == BlockStart(
        0, RedactedThinkingBlock("EmwKAhgB")
    )


def test_an_error_event_raises() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    with pytest.raises(StreamErrorEvent, match="Overloaded"):
        run(START, ("error", error))


def test_a_prompt_too_long_error_event_stays_prompt_too_long() -> None:
    message = "prompt is too long: 210000 tokens > 200000 maximum"
    error = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    with pytest.raises(PromptTooLong):
        run(START, ("error", error))


def test_a_stream_without_message_stop_is_transient() -> None:
    with pytest.raises(Transient, match="ended before message_stop"):
        run(START)


@pytest.mark.parametrize(
    ("wire", "ours"),
    [
        ("tool_use", "tool_use"),
        ("pause_turn", "pause_turn"),
        ("refusal", "refusal"),
        ("model_context_window_exceeded", "max_tokens"),
        ("brand_new_reason", "end_turn"),
    ],
)
def test_stop_reasons(wire: str, ours: str) -> None:
    event = EventMapper(URL).feed("message_delta", {"delta": {"stop_reason": wire}, "usage": {}})
    assert isinstance(event, MessageDelta) and event.stop_reason == ours


def test_a_whole_message_replays_as_streamed_events() -> None:
    message = {
        "id": "msg_9",
        "model": "claude",
        "content": [
            {"type": "thinking", "thinking": "plan", "signature": "sig"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a"}},
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 20, "cache_read_input_tokens": 5},
    }
    events = list(replay(message))
    assembled = run(*events)
    assert assembled.blocks == (
        ThinkingBlock("plan", "sig"),
        RedactedThinkingBlock("opaque"),
        TextBlock("Reading."),
        ToolUseBlock("toolu_1", "Read", {"file_path": "a"}),
    )
    assert (assembled.id, assembled.stop_reason) == ("msg_9", "tool_use")
    assert assembled.usage == Usage(10, 20, 0, 5)
    mapper = EventMapper(URL)
    mapped = [mapper.feed(kind, data) for kind, data in events]
    assert BlockDelta(2, "text", "Reading.") in mapped  # text arrives as a delta, as streamed


def test_request_body() -> None:
    schema = {"type": "object", "properties": {}}
    request = ModelRequest(
        "claude-haiku-4-5",
        (
            Message.user("hi"),
            Message(
                "assistant", (ToolUseBlock("t1", "Bash", {"command": "ls"}, input_error=None),)
            ),
            Message("user", (ToolResultBlock("t1", "out", is_error=True),)),
        ),
        system="sys",
        tools=(ToolSpec("Bash", "Run.", schema),),
        max_tokens=100,
        temperature=0.5,
        thinking_budget=2000,
        stop_sequences=("X",),
        extra={"metadata": {"user_id": "u"}},
    )
    assert request_body(request) == {
        "model": "claude-haiku-4-5",
        "max_tokens": 100,
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": "out",
                        "is_error": True,
                        "cache_control": {"type": "ephemeral"},
                    }
                ],
            },
        ],
        "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
        "tools": [
            {
                "name": "Bash",
                "description": "Run.",
                "input_schema": schema,
                "cache_control": {"type": "ephemeral"},
            }
        ],
        "temperature": 0.5,
        "thinking": {"type": "enabled", "budget_tokens": 2000},
        "stop_sequences": ["X"],
        "metadata": {"user_id": "u"},
    }


def test_minimal_request_body_leaves_optional_fields_out() -> None:
    assert set(request_body(ModelRequest("m", (Message.user("x"),)))) == {
        "model",
        "max_tokens",
        "messages",
    }
