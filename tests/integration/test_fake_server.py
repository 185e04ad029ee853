"""The fake server speaks both wire formats well enough for the official SDKs to accept them.

The SDKs are oracles here: if `anthropic` and `openai` parse our streams into the scenario's
content, our own httpx clients are tested against a faithful server.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import (
    RawResponse,
    Turn,
    UsageSpec,
    fault,
    thinking,
    tool_use,
    turn,
)

HELLO: list[Any] = [{"role": "user", "content": "hello"}]

RICH = turn(
    thinking("The user wants files listed.", "sig-123"),
    "Listing them now.",
    tool_use("Bash", {"command": "ls -la", "timeout": 1000}),
    tool_use("Read", {"file_path": "/etc/hosts"}),
    chunk_chars=5,
    usage=UsageSpec(
        input_tokens=1000,
        output_tokens=80,
        cache_creation_input_tokens=200,
        cache_read_input_tokens=3000,
    ),
)


def anthropic_client(server: FakeModelServer) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        base_url=server.anthropic_base_url, api_key="test", max_retries=0
    )


def openai_client(server: FakeModelServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="test", max_retries=0)


async def anthropic_stream(client: anthropic.AsyncAnthropic) -> anthropic.types.Message:
    async with client.messages.stream(
        model="claude-test", max_tokens=1024, messages=HELLO
    ) as stream:
        return await stream.get_final_message()


# --- Anthropic ---------------------------------------------------------------------------


async def test_anthropic_sdk_accepts_the_stream() -> None:
    with FakeModelServer([RICH, RICH]) as server:
        client = anthropic_client(server)
        message = await anthropic_stream(client)
        whole = await client.messages.create(model="claude-test", max_tokens=1024, messages=HELLO)
        await client.close()
    for answer in (message, whole):
        assert [b.type for b in answer.content] == ["thinking", "text", "tool_use", "tool_use"]
        think, text, bash, read = answer.content
        assert isinstance(think, anthropic.types.ThinkingBlock)
        assert (think.thinking, think.signature) == ("The user wants files listed.", "sig-123")
        assert isinstance(text, anthropic.types.TextBlock)
        assert text.text == "Listing them now."
        assert isinstance(bash, anthropic.types.ToolUseBlock)
        assert isinstance(read, anthropic.types.ToolUseBlock)
        assert (bash.name, bash.input) == ("Bash", {"command": "ls -la", "timeout": 1000})
        assert (read.name, read.input) == ("Read", {"file_path": "/etc/hosts"})
        assert bash.id.startswith("toolu_01") and bash.id != read.id
        assert answer.stop_reason == "tool_use"
        assert answer.model == "claude-test"
        usage = answer.usage
        assert (usage.input_tokens, usage.output_tokens) == (1000, 80)
        assert usage.cache_creation_input_tokens == 200
        assert usage.cache_read_input_tokens == 3000


async def test_anthropic_stream_wire_events() -> None:
    with FakeModelServer([turn("hi there", chunk_chars=3)]) as server:
        async with httpx.AsyncClient() as client:
            body = {"model": "m", "max_tokens": 10, "messages": HELLO, "stream": True}
            response = await client.post(server.url + "/v1/messages", json=body)
    assert response.headers["content-type"].startswith("text/event-stream")
    names = [line[7:] for line in response.text.splitlines() if line.startswith("event: ")]
    assert names == [
        "message_start",
        "ping",
        "content_block_start",
        *["content_block_delta"] * 3,
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]


@pytest.mark.parametrize(
    ("spec", "status", "error_class", "error_type", "headers"),
    [
        (fault("overloaded"), 529, anthropic.OverloadedError, "overloaded_error", {}),
        (
            fault("rate_limited", retry_after=2, retry_after_ms=1500),
            429,
            anthropic.RateLimitError,
            "rate_limit_error",
            {"retry-after": "2", "retry-after-ms": "1500"},
        ),
        (fault("server_error"), 500, anthropic.InternalServerError, "api_error", {}),
        (
            fault("prompt_too_long", actual=210_000, limit=200_000),
            400,
            anthropic.BadRequestError,
            "invalid_request_error",
            {},
        ),
        (fault("media"), 400, anthropic.BadRequestError, "invalid_request_error", {}),
        (fault("auth"), 401, anthropic.AuthenticationError, "authentication_error", {}),
    ],
)
async def test_anthropic_request_faults(
    spec: Any, status: int, error_class: type[Exception], error_type: str, headers: dict[str, str]
) -> None:
    with FakeModelServer([turn("recovered", faults=[spec])]) as server:
        client = anthropic_client(server)
        with pytest.raises(anthropic.APIStatusError) as raised:
            await anthropic_stream(client)
        retried = await anthropic_stream(client)
        await client.close()
    error = raised.value
    assert isinstance(error, error_class)
    assert error.status_code == status
    assert isinstance(error.body, dict)
    assert error.body["error"]["type"] == error_type
    for name, value in headers.items():
        assert error.response.headers[name] == value
    if spec.kind == "prompt_too_long":
        assert "prompt is too long: 210000 tokens > 200000 maximum" in error.message
    assert retried.content[0].type == "text"


async def test_anthropic_sse_error_event_mid_stream() -> None:
    with FakeModelServer([turn("abcdef", chunk_chars=2, faults=[fault("sse_error", after=3)])]) as (
        server
    ):
        client = anthropic_client(server)
        with pytest.raises(anthropic.APIStatusError) as raised:
            await anthropic_stream(client)
        retried = await anthropic_stream(client)
        await client.close()
    assert raised.value.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    assert retried.content[0].type == "text"


async def test_anthropic_connection_cut_mid_stream() -> None:
    with FakeModelServer([turn("abcdef", chunk_chars=2, faults=[fault("cut", after=3)])]) as server:
        client = anthropic_client(server)
        # The SDK's transport (httpx, or its httpx2 fork) reports the truncated chunked body.
        with pytest.raises(Exception, match="incomplete chunked read"):
            await anthropic_stream(client)
        retried = await anthropic_stream(client)
        await client.close()
        assert [r.status for r in server.requests] == [200, 200]
    assert isinstance(retried.content[0], anthropic.types.TextBlock)
    assert retried.content[0].text == "abcdef"


# --- OpenAI ------------------------------------------------------------------------------


async def test_openai_sdk_accepts_the_stream() -> None:
    with FakeModelServer([RICH, RICH]) as server:
        client = openai_client(server)
        async with client.chat.completions.stream(
            model="gpt-test", messages=HELLO, stream_options={"include_usage": True}
        ) as stream:
            streamed = await stream.get_final_completion()
        whole = await client.chat.completions.create(model="gpt-test", messages=HELLO)
        await client.close()
    for completion in (streamed, whole):
        choice = completion.choices[0]
        assert choice.finish_reason == "tool_calls"
        assert choice.message.content == "Listing them now."
        assert getattr(choice.message, "reasoning_content", None) == (
            "The user wants files listed."
        )
        calls = choice.message.tool_calls or []
        assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [  # type: ignore[union-attr]
            ("Bash", {"command": "ls -la", "timeout": 1000}),
            ("Read", {"file_path": "/etc/hosts"}),
        ]
        assert all(c.id.startswith("call_") for c in calls)
        usage = completion.usage
        assert usage is not None
        assert (usage.prompt_tokens, usage.completion_tokens) == (4200, 80)
        assert usage.prompt_tokens_details is not None
        assert usage.prompt_tokens_details.cached_tokens == 3000


async def test_openai_raw_chunks_and_finish_reasons() -> None:
    turns = [turn("cut short", stop_reason="max_tokens"), turn("plain", chunk_chars=2)]
    with FakeModelServer(turns) as server:
        client = openai_client(server)
        chunks = [
            chunk
            async for chunk in await client.chat.completions.create(
                model="m", messages=HELLO, stream=True
            )
        ]
        assert chunks[-1].choices[0].finish_reason == "length"
        assert all(c.usage is None for c in chunks)  # include_usage was not asked for
        stream = await client.chat.completions.create(
            model="m", messages=HELLO, stream=True, stream_options={"include_usage": True}
        )
        chunks = [chunk async for chunk in stream]
        await client.close()
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "plain"
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None


@pytest.mark.parametrize(
    ("spec", "status", "code"),
    [
        (fault("overloaded"), 503, None),
        (fault("rate_limited", retry_after=3), 429, "rate_limit_exceeded"),
        (fault("server_error"), 500, None),
        (fault("prompt_too_long", actual=130_000, limit=128_000), 400, "context_length_exceeded"),
        (fault("media"), 400, "invalid_image"),
        (fault("auth"), 401, "invalid_api_key"),
    ],
)
async def test_openai_request_faults(spec: Any, status: int, code: str | None) -> None:
    with FakeModelServer([turn("recovered", faults=[spec])]) as server:
        client = openai_client(server)
        with pytest.raises(openai.APIStatusError) as raised:
            await client.chat.completions.create(model="m", messages=HELLO)
        retried = await client.chat.completions.create(model="m", messages=HELLO)
        await client.close()
    error = raised.value
    assert error.status_code == status
    assert error.code == code
    if spec.retry_after is not None:
        assert error.response.headers["retry-after"] == "3"
    if spec.kind == "prompt_too_long":
        assert "maximum context length is 128000 tokens" in error.message
    assert retried.choices[0].message.content == "recovered"


async def test_openai_sse_error_mid_stream() -> None:
    with FakeModelServer([turn("abcdef", chunk_chars=2, faults=[fault("sse_error", after=2)])]) as (
        server
    ):
        client = openai_client(server)
        with pytest.raises(openai.APIError, match="Overloaded"):
            async for _ in await client.chat.completions.create(
                model="m", messages=HELLO, stream=True
            ):
                pass
        await client.close()


# --- what the APIs refuse ------------------------------------------------------------------

CALL = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}
ANSWER = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}


@pytest.mark.parametrize(
    ("messages", "refusal"),
    [
        (
            [{"role": "assistant", "content": "hi"}, {"role": "user", "content": "go"}],
            'messages: first message must use the "user" role',
        ),
        (
            [HELLO[0], {"role": "assistant", "content": [CALL]}, {"role": "user", "content": "x"}],
            "messages.1: `tool_use` ids were found without `tool_result` blocks immediately "
            "after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` "
            "block in the next message.",
        ),
        (
            [{"role": "user", "content": [ANSWER]}],
            "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: "
            "toolu_1. Each `tool_result` block must have a corresponding `tool_use` block in "
            "the previous message.",
        ),
        (
            [{"role": "user", "content": []}, {"role": "user", "content": "go"}],
            "messages.0: all messages must have non-empty content except for the optional final "
            "assistant message",
        ),
        (
            [{"role": "user", "content": [{"type": "text", "text": ""}]}],
            "messages: text content blocks must be non-empty",
        ),
    ],
    ids=["assistant-first", "unanswered-call", "stray-result", "empty-message", "empty-text"],
)
async def test_anthropic_refuses_what_the_api_refuses(messages: Any, refusal: str) -> None:
    """In the API's own words, through the official SDK, and no turn is spent on it."""
    with FakeModelServer([turn("fine")]) as server:
        client = anthropic_client(server)
        with pytest.raises(anthropic.BadRequestError) as raised:
            await client.messages.create(model="claude-test", max_tokens=5, messages=messages)
        answer = await client.messages.create(model="claude-test", max_tokens=5, messages=HELLO)
        await client.close()
    assert raised.value.body == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": refusal},
    }
    assert isinstance(answer.content[0], anthropic.types.TextBlock)
    assert answer.content[0].text == "fine"


def chat_call(*ids: str) -> dict[str, Any]:
    calls = [
        {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids
    ]
    return {"role": "assistant", "content": None, "tool_calls": calls}


def chat_result(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "ok"}


@pytest.mark.parametrize(
    ("messages", "refusal", "param"),
    [
        (
            [HELLO[0], chat_result("call_1")],
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
            "message with 'tool_calls'.",
            "messages.[1].role",
        ),
        (
            [HELLO[0], chat_call("call_1", "call_2"), chat_result("call_1"), HELLO[0]],
            "An assistant message with 'tool_calls' must be followed by tool messages "
            "responding to each 'tool_call_id'. The following tool_call_ids did not have "
            "response messages: call_2",
            "messages.[3].role",
        ),
        (
            [HELLO[0], chat_call("call_1"), chat_result("call_9")],
            "Invalid parameter: 'tool_call_id' of 'call_9' not found in 'tool_calls' of "
            "previous message.",
            "messages.[2].tool_call_id",
        ),
    ],
    ids=["result-without-call", "call-without-result", "result-of-another-call"],
)
async def test_openai_refuses_what_the_api_refuses(messages: Any, refusal: str, param: str) -> None:
    with FakeModelServer([turn("fine")]) as server:
        client = openai_client(server)
        with pytest.raises(openai.BadRequestError) as raised:
            await client.chat.completions.create(model="m", messages=messages)
        answered: Any = [HELLO[0], chat_call("c"), chat_result("c")]
        answer = await client.chat.completions.create(model="m", messages=answered)
        await client.close()
    assert raised.value.body == {
        "message": refusal,
        "type": "invalid_request_error",
        "param": param,
        "code": None,
    }
    assert answer.choices[0].message.content == "fine"


# --- the server itself --------------------------------------------------------------------


async def test_requests_are_recorded_and_connections_reused() -> None:
    with FakeModelServer([turn("one"), turn("two")]) as server:
        client = anthropic_client(server)
        await anthropic_stream(client)
        await client.messages.create(model="claude-test", max_tokens=5, messages=HELLO)
        await client.close()
        first, second = server.wait_for_requests(2, finished=True)
    assert first.path == "/v1/messages"
    assert "anthropic-version" in first.headers  # names are lower-cased
    assert first.headers.get("x-api-key", first.headers.get("authorization")) in (
        "test",
        "Bearer test",
    )
    assert first.body["messages"] == HELLO and first.body["stream"] is True
    assert "stream" not in second.body
    assert first.client_port == second.client_port  # keep-alive: one connection
    assert first.finished is not None and first.arrived <= first.finished <= second.arrived
    assert (first.turn, second.turn) == (0, 1)


async def test_waiting_for_requests_needs_no_polling() -> None:
    with FakeModelServer([turn("hi")]) as server:
        client = openai_client(server)
        waiting = asyncio.create_task(asyncio.to_thread(server.wait_for_requests, 1))
        await client.chat.completions.create(model="m", messages=HELLO)
        (recorded,) = await waiting
        await client.close()
    assert recorded.path == "/v1/chat/completions"
    assert recorded.headers["authorization"] == "Bearer test"
    with pytest.raises(TimeoutError):
        server.wait_for_requests(2, timeout=0.01)


async def test_exhausted_scenario_answers_400() -> None:
    with FakeModelServer([turn("only")]) as server:
        client = anthropic_client(server)
        await anthropic_stream(client)
        with pytest.raises(anthropic.BadRequestError, match="scenario exhausted after 1 turns"):
            await anthropic_stream(client)
        await client.close()


async def test_prompt_size_limit() -> None:
    big: list[Any] = [{"role": "user", "content": "x" * 4000}]
    with FakeModelServer([turn("small is fine")], max_prompt_tokens=500) as server:
        client = anthropic_client(server)
        with pytest.raises(
            anthropic.BadRequestError, match=r"prompt is too long: 10\d\d tokens > 500"
        ):
            await client.messages.create(model="m", max_tokens=5, messages=big)
        ok = await client.messages.create(model="m", max_tokens=5, messages=HELLO)
        await client.close()
        openai_side = openai_client(server)
        with pytest.raises(openai.BadRequestError) as raised:
            await openai_side.chat.completions.create(model="m", messages=big)
        await openai_side.close()
    assert ok.content[0].type == "text"
    assert raised.value.code == "context_length_exceeded"


async def test_raw_turn_replays_recorded_bytes() -> None:
    # Record a stream off the wire, then serve the recording verbatim.
    with FakeModelServer([RICH]) as server:
        async with httpx.AsyncClient() as http:
            body = {"model": "claude-test", "max_tokens": 5, "messages": HELLO, "stream": True}
            recording = (await http.post(server.url + "/v1/messages", json=body)).text
    replay = Turn(raw=RawResponse(body=recording, headers={"request-id": "req_1"}))
    with FakeModelServer([replay]) as server:
        client = anthropic_client(server)
        message = await anthropic_stream(client)
        await client.close()
    assert [b.type for b in message.content] == ["thinking", "text", "tool_use", "tool_use"]


async def test_stall_given_up_on_leaves_the_turn_and_the_server_notices() -> None:
    stalled = turn("late", faults=[fault("stall", after=2, seconds=3600)])
    with FakeModelServer([stalled]) as server:
        body = {"model": "m", "max_tokens": 5, "messages": HELLO, "stream": True}
        async with httpx.AsyncClient() as http:
            with pytest.raises(httpx.ReadTimeout):
                await http.post(server.url + "/v1/messages", json=body, timeout=0.2)
            # The stalled handler sees the hang-up and finishes without waiting an hour.
            await asyncio.to_thread(server.wait_for_requests, 1, finished=True)
            client = anthropic_client(server)
            message = await anthropic_stream(client)
            await client.close()
    assert isinstance(message.content[0], anthropic.types.TextBlock)
    assert message.content[0].text == "late"


async def test_stream_is_incremental_tool_use_before_paced_text() -> None:
    paced = turn(tool_use("Bash", {"command": "echo hi"}, delay_after=3600), "after the pause")
    with FakeModelServer([paced]) as server:
        body = {"model": "m", "max_tokens": 5, "messages": HELLO, "stream": True}
        async with (
            httpx.AsyncClient() as http,
            http.stream("POST", server.url + "/v1/messages", json=body) as response,
        ):
            events = sse_events(response.aiter_lines())
            async for event in events:
                if event["type"] == "content_block_stop":
                    break
            assert server.requests[0].finished is None  # the tool_use arrived mid-stream
        # Closing the response hung up on the paced stream: the server stops waiting at once.
        await asyncio.to_thread(server.wait_for_requests, 1, finished=True)
        assert server.remaining == 0


async def sse_events(lines: AsyncIterator[str]) -> AsyncIterator[dict[str, Any]]:
    async for line in lines:
        if line.startswith("data: "):
            yield json.loads(line[6:])


def test_standalone_server_prints_its_url(tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps([{"blocks": [{"text": "from a file"}]}]))
    process = subprocess.Popen(
        [sys.executable, "-m", "codeloop.testing.fake_server", str(scenario)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        body = {"model": "m", "max_tokens": 5, "messages": HELLO}
        answer = httpx.post(url + "/v1/messages", json=body).json()
        assert answer["content"] == [{"type": "text", "text": "from a file"}]
    finally:
        process.terminate()
        process.wait(timeout=10)


async def test_tool_choice_is_refused_as_the_apis_refuse_it() -> None:
    """Chat Completions takes a tool_choice only with tools; the Messages API only as an
    object. Through the official SDKs."""
    tools: Any = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    with FakeModelServer([turn("fine"), turn("fine")]) as server:
        chat = openai_client(server)
        with pytest.raises(openai.BadRequestError) as bare:
            await chat.chat.completions.create(model="m", messages=HELLO, tool_choice="none")
        fine = await chat.chat.completions.create(
            model="m", messages=HELLO, tools=tools, tool_choice="none"
        )
        await chat.close()
        messages = anthropic_client(server)
        with pytest.raises(anthropic.BadRequestError):
            wrong: Any = "none"  # OpenAI's form, which the Messages API refuses
            await messages.messages.create(
                model="claude-test", max_tokens=5, messages=HELLO, tool_choice=wrong
            )
        answer = await messages.messages.create(
            model="claude-test", max_tokens=5, messages=HELLO, tool_choice={"type": "none"}
        )
        await messages.close()
    assert bare.value.body["param"] == "tool_choice"  # type: ignore[index]
    assert fine.choices[0].message.content == "fine"
    assert isinstance(answer.content[0], anthropic.types.TextBlock)


async def test_llama_cpp_fields_are_refused_unless_it_plays_llama_cpp() -> None:
    """OpenAI refuses `cache_prompt`; llama.cpp's server takes it and says in `timings` what
    it took from its cache."""
    extra = {"cache_prompt": True}
    with FakeModelServer([turn("fine")]) as server:
        client = openai_client(server)
        with pytest.raises(openai.BadRequestError) as refused:
            await client.chat.completions.create(model="m", messages=HELLO, extra_body=extra)
        await client.close()
    assert "Unrecognized request argument supplied: cache_prompt" in str(refused.value)
    usage = UsageSpec(input_tokens=200, cache_read_input_tokens=1000, output_tokens=7)
    with FakeModelServer([turn("fine", usage=usage)], llama_cpp=True) as server:
        client = openai_client(server)
        stream = await client.chat.completions.create(
            model="m", messages=HELLO, extra_body=extra, stream=True
        )
        chunks = [chunk.model_dump() async for chunk in stream]
        await client.close()
    (timings,) = [c["timings"] for c in chunks if c.get("timings")]
    assert timings == {"cache_n": 1000, "prompt_n": 200, "predicted_n": 7}
