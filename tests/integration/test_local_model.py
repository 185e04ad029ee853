"""The `local:` provider on the real bundled model (SmolLM2-135M), in-process.

Structure only: what a 135M model says is not the point; that its output always parses into
the normalized stream, a schema-valid call or a streamed answer, is. Skipped when the
`local` extra is not installed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from codeloop.models.assembler import MessageAssembler
from codeloop.models.base import (
    BlockDelta,
    BlockStart,
    MessageDelta,
    MessageStart,
    MessageStop,
    ModelRequest,
    PromptTooLong,
    StreamEvent,
)
from codeloop.models.local import LocalModel, bundled_model, open_model
from codeloop.tools.registry import default_tools
from codeloop.types import Message, TextBlock, ToolResultBlock, ToolUseBlock
from tests import needs

needs.local_model()

TOOLS = default_tools()
SPECS = tuple(tool.spec() for tool in TOOLS.values())


def request(*messages: Message, **fields: object) -> ModelRequest:
    return ModelRequest("smollm2-135m-instruct", messages, max_tokens=200, **fields)  # type: ignore[arg-type]


async def events_of(model: LocalModel, req: ModelRequest) -> list[StreamEvent]:
    return [event async for event in model.stream(req)]


def assembled(events: list[StreamEvent]) -> MessageAssembler:
    assembler = MessageAssembler()
    for event in events:
        assembler.feed(event)
    return assembler


@pytest.fixture
async def model() -> AsyncIterator[LocalModel]:
    client = open_model("smollm2")
    yield client
    await client.aclose()


async def test_an_answer_streams_in_pieces(model: LocalModel) -> None:
    events = await events_of(model, request(Message.user("Write two sentences about rivers.")))
    assert isinstance(events[0], MessageStart) and isinstance(events[-1], MessageStop)
    assert isinstance(events[1], BlockStart) and isinstance(events[1].block, TextBlock)
    assert sum(isinstance(e, BlockDelta) and e.kind == "text" for e in events) >= 2
    result = assembled(events)
    assert result.stop_reason == "end_turn"
    assert result.message().text.strip()
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0


async def test_a_forced_call_matches_the_tools_schema(model: LocalModel) -> None:
    req = request(
        Message.user("Show me the Python files."),
        tools=SPECS,
        extra={"tool_choice": {"type": "any"}},
    )
    result = assembled(await events_of(model, req))
    assert result.stop_reason == "tool_use"
    (call,) = result.message().content
    assert isinstance(call, ToolUseBlock) and call.input_error is None
    tool = TOOLS[call.name]
    tool.parse(call.input)  # raises unless the input is valid for the tool
    assert sorted(call.input) == sorted(tool.spec().input_schema["required"])


async def test_the_demo_model_answers_after_one_tool_round(model: LocalModel) -> None:
    call = ToolUseBlock("toolu_1", "Glob", {"pattern": "*"})
    history = (
        Message.user("What is here?"),
        Message("assistant", (call,)),
        Message("user", (ToolResultBlock("toolu_1", "README.md\napp.py"),)),
    )
    result = assembled(await events_of(model, request(*history, tools=SPECS)))
    assert result.stop_reason == "end_turn"
    assert [type(b) for b in result.blocks] == [TextBlock]


async def test_a_prompt_over_the_window_is_prompt_too_long() -> None:
    path = bundled_model()
    assert path is not None
    small = LocalModel(path, context_window=256)
    try:
        with pytest.raises(PromptTooLong) as caught:
            await events_of(small, request(Message.user("word " * 600)))
    finally:
        await small.aclose()
    assert caught.value.limit == 256
    assert caught.value.actual is not None and caught.value.actual > 256


async def test_a_stream_left_early_frees_the_model_for_the_next(model: LocalModel) -> None:
    stream = model.stream(request(Message.user("Count from one to fifty in words.")))
    async for event in stream:
        if isinstance(event, BlockDelta):
            break
    await stream.aclose()  # type: ignore[attr-defined]
    events = await events_of(model, request(Message.user("Say hello.")))
    assert isinstance(events[-2], MessageDelta) and events[-2].stop_reason == "end_turn"


async def test_concurrent_streams_take_turns(model: LocalModel) -> None:
    prompts = ("Name a colour.", "Name an animal.")
    results = await asyncio.gather(*(events_of(model, request(Message.user(p))) for p in prompts))
    for events in results:
        assert assembled(events).stop_reason == "end_turn"
