"""Our wire-format clients against the official SDKs, over a real socket on 127.0.0.1.

Recorded streams (tests/fixtures/streams/*.sse) are served byte for byte to the SDK's own stream
accumulator and to our client + MessageAssembler; both must build the same message. The request
side is checked on what the server received.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import anthropic
import openai
import pytest

from codeloop.models.anthropic import AnthropicClient
from codeloop.models.assembler import MessageAssembler, collect
from codeloop.models.base import (
    Fatal,
    MediaError,
    ModelClient,
    ModelError,
    ModelRequest,
    Overloaded,
    PromptTooLong,
    RateLimited,
    StreamErrorEvent,
    ToolSpec,
    Transient,
)
from codeloop.models.openai import OpenAIClient
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import (
    RawResponse,
    Turn,
    fault,
    text,
    thinking,
    tool_use,
    turn,
)
from codeloop.types import (
    ContentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    message_from_dict,
)

STREAMS = Path(__file__).parents[1] / "fixtures" / "streams"
KEY = "sk-test-key"
HELLO = (Message.user("hi"),)


def _recording(name: str) -> str:
    return (STREAMS / name).read_text(encoding="utf-8")


def _raw(body: str) -> Turn:
    return Turn(raw=RawResponse(body=body))


def _fixtures(prefix: str) -> list[str]:
    names = sorted(p.name for p in STREAMS.glob(f"{prefix}_*.sse"))
    assert names, f"no {prefix} fixtures in {STREAMS}"
    return names


async def _ours(client: ModelClient, request: ModelRequest) -> MessageAssembler:
    try:
        return await collect(client.stream(request))
    finally:
        await client.aclose()


# --- the recorded streams: ours == the SDK's -----------------------------------------------


@pytest.mark.parametrize("name", _fixtures("anthropic"))
async def test_anthropic_stream_matches_sdk(name: str) -> None:
    recording = _recording(name)
    with FakeModelServer([_raw(recording), _raw(recording)]) as server:
        sdk = anthropic.AsyncAnthropic(
            api_key=KEY, base_url=server.anthropic_base_url, max_retries=0
        )
        async with sdk.messages.stream(
            model="claude-haiku-4-5", max_tokens=1024, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            expected = await stream.get_final_message()
        await sdk.close()
        client = AnthropicClient(base_url=server.anthropic_base_url, api_key=KEY)
        got = await _ours(client, ModelRequest("claude-haiku-4-5", HELLO))

    sdk_blocks = [block.model_dump() for block in expected.content]
    assert got.blocks == message_from_dict({"role": "assistant", "content": sdk_blocks}).content
    assert all(not isinstance(b, ToolUseBlock) or b.input_error is None for b in got.blocks)
    assert (got.id, got.model) == (expected.id, expected.model)
    assert got.stop_reason == expected.stop_reason
    assert got.stop_sequence == expected.stop_sequence
    assert got.usage == Usage(
        expected.usage.input_tokens,
        expected.usage.output_tokens,
        expected.usage.cache_creation_input_tokens or 0,
        expected.usage.cache_read_input_tokens or 0,
    )


_FINISH = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


@pytest.mark.parametrize("name", _fixtures("openai"))
async def test_openai_stream_matches_sdk(name: str) -> None:
    recording = _recording(name)
    with FakeModelServer([_raw(recording), _raw(recording)]) as server:
        sdk = openai.AsyncOpenAI(api_key=KEY, base_url=server.openai_base_url, max_retries=0)
        async with sdk.chat.completions.stream(
            model="gpt-4.1",
            messages=[{"role": "user", "content": "hi"}],
            stream_options={"include_usage": True},
        ) as stream:
            try:
                completion: Any = await stream.get_final_completion()
            except openai.LengthFinishReasonError as exc:  # the SDK's way to say "length"
                completion = exc.completion
        await sdk.close()
        client = OpenAIClient(base_url=server.openai_base_url, api_key=KEY)
        got = await _ours(client, ModelRequest("gpt-4.1", HELLO))

    choice = completion.choices[0]
    message = choice.message
    expected: list[ContentBlock] = []
    if reasoning := getattr(message, "reasoning_content", None):
        expected.append(ThinkingBlock(reasoning))
    if message.content:
        expected.append(TextBlock(message.content))
    for call in message.tool_calls or []:
        arguments = json.loads(call.function.arguments)
        expected.append(ToolUseBlock(call.id, call.function.name, arguments))
    if "reasoning_content" in recording:  # the SDK kept the non-standard field
        assert isinstance(expected[0], ThinkingBlock)
    assert got.blocks == tuple(expected)
    assert (got.id, got.model) == (completion.id, completion.model)
    assert got.stop_reason == _FINISH[choice.finish_reason]
    usage = completion.usage
    cached = usage.prompt_tokens_details.cached_tokens or 0
    assert got.usage == Usage(
        input_tokens=usage.prompt_tokens - cached,
        output_tokens=usage.completion_tokens,
        cache_read_input_tokens=cached,
    )


def test_fixtures_cover_the_interesting_cases() -> None:
    """Guard against a fixture edit quietly dropping what the conformance tests are for."""
    tools = _recording("anthropic_tool_use.sse")
    assert tools.count('"type":"tool_use"') >= 2 and tools.count("input_json_delta") >= 10
    assert '"cache_read_input_tokens":13210' in tools
    assert "signature_delta" in _recording("anthropic_thinking.sse")
    interleaved = _recording("anthropic_interleaved_thinking.sse")
    assert interleaved.count('"type":"thinking"') == 2 and '"redacted_thinking"' in interleaved
    assert '"stop_reason":"max_tokens"' in _recording("anthropic_max_tokens.sse")
    parallel = _recording("openai_tool_calls.sse")
    assert '"index":2,"id"' in parallel and '"cached_tokens":13184' in parallel
    assert "reasoning_content" in _recording("openai_reasoning.sse")
    assert '"finish_reason":"length"' in _recording("openai_length.sse")


# --- what we send ---------------------------------------------------------------------------

_TOOL = ToolSpec(
    "Read",
    "Read a file.",
    {"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]},
)
_HISTORY = (
    Message.user("Read setup.py and look at this picture"),
    Message(
        "assistant",
        (
            ThinkingBlock("I should read it.", "sig-1"),
            ToolUseBlock("toolu_1", "Read", {"file_path": "setup.py"}),
            ToolUseBlock("toolu_2", "Read", {"file_path": "missing.py"}),
        ),
    ),
    Message(
        "user",
        (
            ToolResultBlock("toolu_1", "print('hi')"),
            ToolResultBlock("toolu_2", "no such file", is_error=True),
            TextBlock("and this one"),
            ImageBlock("image/png", "iVBORw0KGgo="),
        ),
    ),
)
_REQUEST = ModelRequest(
    "claude-haiku-4-5",
    _HISTORY,
    system="You are a coding agent.",
    tools=(_TOOL,),
    max_tokens=2048,
    thinking_budget=1024,
    stop_sequences=("STOP",),
)


async def test_anthropic_request_is_what_the_sdk_sends() -> None:
    with FakeModelServer([turn("ok"), turn("ok")]) as server:
        client = AnthropicClient(base_url=server.anthropic_base_url, api_key=KEY)
        await _ours(client, _REQUEST)
        sdk = anthropic.AsyncAnthropic(
            api_key=KEY, base_url=server.anthropic_base_url, max_retries=0
        )
        ours = server.requests[0].body
        params = {k: v for k, v in ours.items() if k != "stream"}
        async with sdk.messages.stream(**params) as stream:
            await stream.get_final_message()
        await sdk.close()
        mine, theirs = server.requests

    assert mine.path == theirs.path == "/v1/messages"
    assert mine.body == theirs.body
    assert mine.body["stream"] is True
    assert mine.body["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert mine.body["tools"][0]["input_schema"] == _TOOL.input_schema
    assert mine.headers["content-type"] == theirs.headers["content-type"]
    # The stable version and key header every Messages API server accepts (the installed SDK
    # sends a later version and the key as a Bearer token).
    assert mine.headers["anthropic-version"] == "2023-06-01"
    assert mine.headers["x-api-key"] == KEY
    assert "authorization" not in mine.headers


async def test_thinking_and_effort_fields_are_what_the_sdk_sends() -> None:
    """Adaptive thinking, effort and beta headers as the SDK's own parameters send them."""
    request = ModelRequest(
        "claude-sonnet-5-5",
        HELLO,
        tools=(_TOOL,),
        adaptive_thinking=True,
        effort="high",
        betas=("interleaved-thinking-2025-05-14",),
    )
    with FakeModelServer([turn("ok"), turn("ok")]) as server:
        await _ours(AnthropicClient(base_url=server.anthropic_base_url, api_key=KEY), request)
        sdk = anthropic.AsyncAnthropic(
            api_key=KEY, base_url=server.anthropic_base_url, max_retries=0
        )
        async with sdk.messages.stream(
            model="claude-sonnet-5-5",
            max_tokens=8192,
            messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
            tools=[
                {
                    "name": _TOOL.name,
                    "description": _TOOL.description,
                    "input_schema": _TOOL.input_schema,
                    "cache_control": {"type": "ephemeral"},
                }
            ],
            thinking={"type": "adaptive"},
            output_config={"effort": "high"},
            extra_headers={"anthropic-beta": "interleaved-thinking-2025-05-14"},
        ) as stream:
            await stream.get_final_message()
        await sdk.close()
        mine, theirs = server.requests
    for body in (mine.body, theirs.body):  # cache markers aside, which the SDK leaves to us
        body["messages"][0]["content"][0].pop("cache_control", None)
    assert mine.body == theirs.body
    assert mine.headers["anthropic-beta"] == theirs.headers["anthropic-beta"]


async def test_thinking_blocks_go_back_unchanged_on_the_next_turn() -> None:
    """Thinking with its signature, redacted thinking, thinking between tool calls: what the
    SDK's accumulator built is exactly what our next request sends back."""
    recording = _recording("anthropic_interleaved_thinking.sse")
    with FakeModelServer([_raw(recording), _raw(recording), turn("done")]) as server:
        sdk = anthropic.AsyncAnthropic(
            api_key=KEY, base_url=server.anthropic_base_url, max_retries=0
        )
        async with sdk.messages.stream(
            model="claude-sonnet-4-6", max_tokens=1024, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            expected = await stream.get_final_message()
        await sdk.close()
        client = AnthropicClient(base_url=server.anthropic_base_url, api_key=KEY)
        try:
            first = await collect(client.stream(ModelRequest("claude-sonnet-4-6", HELLO)))
            results = Message(
                "user", tuple(ToolResultBlock(b.id, "...") for b in first.message().tool_uses)
            )
            history = (*HELLO, first.message(), results)
            await collect(client.stream(ModelRequest("claude-sonnet-4-6", history)))
        finally:
            await client.aclose()
        sent = server.requests[2].body["messages"][1]["content"]
    for block in sent:
        block.pop("cache_control", None)
    assert sent == [block.model_dump(exclude_none=True) for block in expected.content]
    kinds = [block["type"] for block in sent]
    assert kinds == ["thinking", "redacted_thinking", "tool_use", "thinking", "tool_use"]


async def test_anthropic_auth_token_is_a_bearer_token() -> None:
    with FakeModelServer([turn("ok")]) as server:
        client = AnthropicClient(base_url=server.anthropic_base_url, auth_token="tok-123")
        await _ours(client, ModelRequest("claude-haiku-4-5", HELLO))
        (request,) = server.requests
    assert request.headers["authorization"] == "Bearer tok-123"
    assert "x-api-key" not in request.headers


async def test_openai_request_shape() -> None:
    with FakeModelServer([turn("ok")]) as server:
        client = OpenAIClient(base_url=server.openai_base_url, api_key=KEY)
        await _ours(client, _REQUEST)
        (request,) = server.requests

    body = request.body
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["content-type"] == "application/json"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 2048
    assert body["stop"] == ["STOP"]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "Read",
                "description": "Read a file.",
                "parameters": _TOOL.input_schema,
            },
        }
    ]
    system, user, assistant, result_1, result_2, follow_up = body["messages"]
    assert system == {"role": "system", "content": "You are a coding agent."}
    assert user == {"role": "user", "content": "Read setup.py and look at this picture"}
    assert assistant["content"] == ""  # never null: llama.cpp answers null with a 500
    assert [c["id"] for c in assistant["tool_calls"]] == ["toolu_1", "toolu_2"]
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {
        "file_path": "setup.py"
    }
    assert result_1 == {"role": "tool", "tool_call_id": "toolu_1", "content": "print('hi')"}
    assert result_2 == {"role": "tool", "tool_call_id": "toolu_2", "content": "Error: no such file"}
    assert follow_up["role"] == "user"
    assert follow_up["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
    }


async def test_official_openai_endpoint_gets_max_completion_tokens() -> None:
    from codeloop.models.openai import request_body

    client = OpenAIClient(api_key=KEY)  # api.openai.com; nothing is sent
    await client.aclose()
    body = request_body(ModelRequest("gpt-5", HELLO), max_tokens_field=client._max_tokens_field)
    assert "max_completion_tokens" in body and "max_tokens" not in body


# --- one shape for streaming and non-streaming answers --------------------------------------

_RICH_TURN = turn(
    thinking("Let me think.", "sig-abc"),
    text("Reading two files."),
    tool_use("Read", {"file_path": "a.py"}, id="call_a"),
    tool_use("Read", {"file_path": "b.py"}, id="call_b"),
    chunk_chars=3,
)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_non_streaming_answer_is_replayed_as_the_same_events(provider: str) -> None:
    with FakeModelServer([_RICH_TURN, _RICH_TURN]) as server:
        streamed = await _ours(_client(provider, server), ModelRequest("m", HELLO))
        whole_request = ModelRequest("m", HELLO, stream=False)
        client = _client(provider, server)
        try:
            events = [event async for event in client.stream(whole_request)]
        finally:
            await client.aclose()
        assert "stream" not in server.requests[1].body
    whole = MessageAssembler()
    for event in events:
        whole.feed(event)
    assert [type(b) for b in whole.blocks] == [ThinkingBlock, TextBlock, ToolUseBlock, ToolUseBlock]
    assert whole.blocks == streamed.blocks
    assert (whole.stop_reason, whole.usage) == (streamed.stop_reason, streamed.usage)
    assert [type(e).__name__ for e in events][:2] == ["MessageStart", "BlockStart"]
    assert type(events[-1]).__name__ == "MessageStop"


def _client(provider: str, server: FakeModelServer) -> ModelClient:
    if provider == "anthropic":
        return AnthropicClient(base_url=server.anthropic_base_url, api_key=KEY)
    return OpenAIClient(base_url=server.openai_base_url, api_key=KEY)


# --- failures over HTTP ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "kind", "fields", "expected"),
    [
        ("anthropic", "overloaded", {}, Overloaded),
        ("openai", "overloaded", {}, Transient),  # a 503 there
        ("anthropic", "rate_limited", {"retry_after": 7}, RateLimited),
        ("openai", "rate_limited", {"retry_after_ms": 1500}, RateLimited),
        ("anthropic", "server_error", {}, Transient),
        ("anthropic", "prompt_too_long", {"actual": 210_000, "limit": 200_000}, PromptTooLong),
        ("openai", "prompt_too_long", {"actual": 140_000, "limit": 128_000}, PromptTooLong),
        ("anthropic", "media", {}, MediaError),
        ("openai", "auth", {}, Fatal),
        ("anthropic", "cut", {"after": 3}, Transient),
        ("openai", "cut", {"after": 3}, Transient),
        ("anthropic", "sse_error", {"after": 3}, StreamErrorEvent),
        ("openai", "sse_error", {"after": 3}, StreamErrorEvent),
    ],
)
async def test_failures_map_to_the_taxonomy(
    provider: str, kind: Any, fields: dict[str, Any], expected: type[ModelError]
) -> None:
    scenario = [turn("never seen", faults=[fault(kind, **fields)], chunk_chars=2)]
    with FakeModelServer(scenario) as server, pytest.raises(ModelError) as caught:
        await _ours(_client(provider, server), ModelRequest("some-model", HELLO))
    error = caught.value
    assert type(error) is expected, error
    if isinstance(error, RateLimited):
        assert error.retry_after == (7.0 if provider == "anthropic" else 1.5)
    if isinstance(error, PromptTooLong):
        assert (error.actual, error.limit) == (fields["actual"], fields["limit"])
    if isinstance(error, Fatal):
        assert "OPENAI_API_KEY" in error.message


async def test_a_stream_cut_before_message_stop_is_transient() -> None:
    recording = _recording("anthropic_tool_use.sse")
    cut = recording[: recording.index("event: message_delta")]
    with (
        FakeModelServer([_raw(cut)]) as server,
        pytest.raises(Transient, match="ended before message_stop"),
    ):
        await _ours(_client("anthropic", server), ModelRequest("m", HELLO))


async def test_an_openai_stream_without_finish_is_transient() -> None:
    recording = _recording("openai_tool_calls.sse")
    cut = recording[: recording.index('"finish_reason":"tool_calls"')]
    cut = cut[: cut.rindex("data: ")]
    with (
        FakeModelServer([_raw(cut)]) as server,
        pytest.raises(Transient, match="ended before its finish_reason"),
    ):
        await _ours(_client("openai", server), ModelRequest("m", HELLO))


async def test_connection_refused_names_the_url() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = AnthropicClient(base_url=f"http://127.0.0.1:{port}", api_key=KEY)
    with pytest.raises(Transient) as caught:
        await _ours(client, ModelRequest("m", HELLO))
    assert str(caught.value) == (
        f"cannot connect to http://127.0.0.1:{port}/v1/messages: connection refused"
    )


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_one_connection_serves_consecutive_calls(provider: str) -> None:
    with FakeModelServer([turn("one"), turn("two")]) as server:
        client = _client(provider, server)
        try:
            for _ in range(2):
                await collect(client.stream(ModelRequest("m", HELLO)))
        finally:
            await client.aclose()
        first, second = server.requests
    assert first.client_port == second.client_port


# --- OpenAI's Responses API ---------------------------------------------------------------


def _sdk_response_blocks(response: Any) -> list[ContentBlock]:
    from codeloop.models.responses import reasoning_signature

    blocks: list[ContentBlock] = []
    for item in response.output:
        if item.type == "reasoning":
            text = "\n\n".join(part.text for part in item.summary)
            summary = [part.model_dump() for part in item.summary]
            data = {"id": item.id, "summary": summary, "encrypted_content": item.encrypted_content}
            blocks.append(ThinkingBlock(text, reasoning_signature(data)))
        elif item.type == "message":
            blocks.append(TextBlock("".join(part.text for part in item.content)))
        elif item.type == "function_call":
            blocks.append(ToolUseBlock(item.call_id, item.name, json.loads(item.arguments)))
    return blocks


def _comparable(blocks: Sequence[ContentBlock]) -> list[Any]:
    """Blocks with reasoning signatures parsed: the carried item, not its key order."""
    return [
        (b.thinking, json.loads(b.signature)) if isinstance(b, ThinkingBlock) else b for b in blocks
    ]


@pytest.mark.parametrize("name", _fixtures("responses"))
async def test_responses_stream_matches_sdk(name: str) -> None:
    from codeloop.models.responses import ResponsesClient

    recording = _recording(name)
    with FakeModelServer([_raw(recording), _raw(recording)]) as server:
        sdk = openai.AsyncOpenAI(api_key=KEY, base_url=server.openai_base_url, max_retries=0)
        async with sdk.responses.stream(model="gpt-6.2-sol", input="hi") as stream:
            # The accumulator's final response comes with response.completed, or (cut at the
            # output limit) with response.incomplete.
            expected: Any = [e.response async for e in stream if hasattr(e, "response")][-1]
        await sdk.close()
        client = ResponsesClient(base_url=server.openai_base_url, api_key=KEY)
        got = await _ours(client, ModelRequest("gpt-6.2-sol", HELLO))
        assert server.requests[1].path == "/v1/responses"

    assert _comparable(got.blocks) == _comparable(_sdk_response_blocks(expected))
    assert (got.id, got.model) == (expected.id, expected.model)
    calls = any(item.type == "function_call" for item in expected.output)
    incomplete = expected.status == "incomplete"
    assert got.stop_reason == ("max_tokens" if incomplete else "tool_use" if calls else "end_turn")
    usage = expected.usage
    cached = usage.input_tokens_details.cached_tokens
    assert got.usage == Usage(
        input_tokens=usage.input_tokens - cached,
        output_tokens=usage.output_tokens,
        cache_read_input_tokens=cached,
    )
    if "reasoning" in name:
        assert usage.output_tokens_details.reasoning_tokens > 0 and cached > 0


async def test_responses_reasoning_items_go_back_unchanged() -> None:
    """The next request carries the reasoning item (id, summary, encrypted content) and the
    calls exactly as the SDK parsed them, then the tool outputs."""
    from codeloop.models.responses import ResponsesClient

    recording = _recording("responses_reasoning_tools.sse")
    with FakeModelServer([_raw(recording), _raw(recording), turn("done")]) as server:
        sdk = openai.AsyncOpenAI(api_key=KEY, base_url=server.openai_base_url, max_retries=0)
        async with sdk.responses.stream(model="gpt-6.2-sol", input="hi") as stream:
            expected: Any = await stream.get_final_response()
        await sdk.close()
        client = ResponsesClient(base_url=server.openai_base_url, api_key=KEY)
        try:
            first = await collect(client.stream(ModelRequest("gpt-6.2-sol", HELLO, tools=(_TOOL,))))
            outputs = tuple(ToolResultBlock(b.id, "...") for b in first.message().tool_uses)
            history = (*HELLO, first.message(), Message("user", outputs))
            await collect(client.stream(ModelRequest("gpt-6.2-sol", history, tools=(_TOOL,))))
        finally:
            await client.aclose()
        body = server.requests[2].body

    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"]
    reasoning, text, call_1, call_2, output_1, output_2 = body["input"][1:]
    sdk_reasoning = expected.output[0].model_dump(exclude_none=True)
    assert reasoning == {
        k: sdk_reasoning[k] for k in ("type", "id", "summary", "encrypted_content")
    }
    assert text == {"role": "assistant", "content": "Reading the parser and its test."}
    for sent, item in zip((call_1, call_2), expected.output[2:], strict=True):
        assert sent == {
            **{k: getattr(item, k) for k in ("type", "call_id", "name")},
            "arguments": ANY,
        }
        assert json.loads(sent["arguments"]) == json.loads(item.arguments)
    assert [o["call_id"] for o in (output_1, output_2)] == [c["call_id"] for c in (call_1, call_2)]
    assert output_1 == {
        "type": "function_call_output",
        "call_id": call_1["call_id"],
        "output": "...",
    }


async def test_responses_request_shape() -> None:
    from codeloop.models.responses import ResponsesClient

    request = ModelRequest(
        "gpt-6.2-sol",
        _HISTORY,
        system="You are a coding agent.",
        tools=(_TOOL,),
        max_tokens=2048,
        effort="high",
    )
    with FakeModelServer([turn("ok")]) as server:
        await _ours(ResponsesClient(base_url=server.openai_base_url, api_key=KEY), request)
        (sent,) = server.requests
    body = sent.body
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert body["instructions"] == "You are a coding agent."
    assert body["max_output_tokens"] == 2048 and body["stream"] is True
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert body["tools"] == [
        {
            "type": "function",
            "name": "Read",
            "description": "Read a file.",
            "parameters": _TOOL.input_schema,
        }
    ]
    items = body["input"]
    assert items[0] == {
        "role": "user",
        "content": [{"type": "input_text", "text": "Read setup.py and look at this picture"}],
    }
    # Anthropic's thinking (a foreign signature) stays home; the calls and outputs go.
    assert [i.get("type") for i in items[1:5]] == ["function_call"] * 2 + [
        "function_call_output"
    ] * 2
    assert items[4]["output"] == "Error: no such file"
    assert items[5]["content"][1] == {
        "type": "input_image",
        "image_url": "data:image/png;base64,iVBORw0KGgo=",
    }


@pytest.mark.parametrize(
    ("kind", "fields", "expected"),
    [
        ("rate_limited", {"retry_after": 3}, RateLimited),
        ("prompt_too_long", {"actual": 940_000, "limit": 922_000}, PromptTooLong),
        ("sse_error", {"after": 4}, StreamErrorEvent),
        ("cut", {"after": 4}, Transient),
    ],
)
async def test_responses_failures_map_to_the_taxonomy(
    kind: Any, fields: dict[str, Any], expected: type[ModelError]
) -> None:
    from codeloop.models.responses import ResponsesClient

    scenario = [turn("never seen", faults=[fault(kind, **fields)], chunk_chars=2)]
    with FakeModelServer(scenario) as server, pytest.raises(ModelError) as caught:
        client = ResponsesClient(base_url=server.openai_base_url, api_key=KEY)
        await _ours(client, ModelRequest("gpt-6.2-sol", HELLO))
    assert type(caught.value) is expected, caught.value


async def test_responses_non_streaming_answer_is_replayed_as_the_same_events() -> None:
    from codeloop.models.responses import ResponsesClient

    with FakeModelServer([_RICH_TURN, _RICH_TURN]) as server:
        client = ResponsesClient(base_url=server.openai_base_url, api_key=KEY)
        streamed = await _ours(client, ModelRequest("m", HELLO))
        client = ResponsesClient(base_url=server.openai_base_url, api_key=KEY)
        whole = await _ours(client, ModelRequest("m", HELLO, stream=False))
    assert [type(b) for b in whole.blocks] == [ThinkingBlock, TextBlock, ToolUseBlock, ToolUseBlock]
    assert whole.blocks == streamed.blocks
    assert (whole.stop_reason, whole.usage) == (streamed.stop_reason, streamed.usage)


async def test_cache_prompt_goes_to_llama_cpp_once_it_has_shown_itself() -> None:
    """llama.cpp's answers carry `timings`: from the next request on, the client asks it to
    reuse its KV cache (`cache_prompt`); a server that does not show itself so never gets the
    field (OpenAI refuses it, as the fake server does)."""
    for llama_cpp in (True, False):
        with FakeModelServer([turn("one"), turn("two")], llama_cpp=llama_cpp) as server:
            client = OpenAIClient(base_url=server.openai_base_url, api_key=KEY)
            try:
                await collect(client.stream(ModelRequest("m", HELLO)))
                await collect(client.stream(ModelRequest("m", HELLO)))
            finally:
                await client.aclose()
            sent = [r.body.get("cache_prompt") for r in server.requests]
        assert [r.status for r in server.requests] == [200, 200]
        assert sent == ([None, True] if llama_cpp else [None, None])
