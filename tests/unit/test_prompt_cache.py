"""Anthropic prompt-cache breakpoints: where they go, how many, and stable request prefixes."""

from __future__ import annotations

import itertools
import json
from typing import Any

from codeloop.models.anthropic import AnthropicClient, encode_body, request_body
from codeloop.models.base import MessageDelta, MessageStart, ModelRequest, ToolSpec
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.prefix_reuse import strip_markers
from codeloop.testing.scenario import UsageSpec, turn
from codeloop.types import (
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    spliced,
)

SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
TOOLS = (ToolSpec("Read", "Read a file.", SCHEMA), ToolSpec("Bash", "Run.", SCHEMA))
CONTEXT = Message.user("<system-reminder>\nmemory\n</system-reminder>", is_meta=True)


def breakpoints(body: dict[str, Any]) -> list[str]:
    """Where cache_control appears, as readable places."""
    found = [f"system[{i}]" for i, b in enumerate(body.get("system", [])) if "cache_control" in b]
    found += [f"tools[{i}]" for i, t in enumerate(body.get("tools", [])) if "cache_control" in t]
    for i, message in enumerate(body["messages"]):
        for j, block in enumerate(message["content"]):
            if "cache_control" in block:
                found.append(f"messages[{i}].content[{j}]")
    return found


def conversation(rounds: int) -> list[tuple[Message, ...]]:
    """The histories a session sends, request by request: memory, prompt, tool rounds."""
    history: tuple[Message, ...] = (CONTEXT, Message.user("fix the bug"))
    requests = [history]
    for i in range(rounds):
        call = ToolUseBlock(f"t{i}", "Bash", {"command": f"step {i}"})
        history = (
            *history,
            Message("assistant", (ThinkingBlock("hm", "sig"), TextBlock(f"Step {i}."), call)),
            Message("user", (ToolResultBlock(f"t{i}", f"output {i}"),)),
        )
        requests.append(history)
    return requests


def body_for(history: tuple[Message, ...]) -> dict[str, Any]:
    return request_body(ModelRequest("claude-sonnet-4-5", history, system="sys", tools=TOOLS))


def test_breakpoints_system_last_tool_and_latest_messages() -> None:
    first, second, third = (body_for(h) for h in conversation(2))
    assert breakpoints(first) == ["system[0]", "tools[1]", "messages[1].content[0]"]
    assert breakpoints(second) == [
        "system[0]",
        "tools[1]",
        "messages[1].content[0]",  # the previous request's last message: read from the cache
        "messages[3].content[0]",  # this request's last message: written to the cache
    ]
    assert breakpoints(third) == [
        "system[0]",
        "tools[1]",
        "messages[3].content[0]",
        "messages[5].content[0]",
    ]


def test_never_more_than_four() -> None:
    for history in conversation(30):
        assert len(breakpoints(body_for(history))) <= 4


def test_second_request_starts_with_the_first_ones_bytes() -> None:
    first, second = (body_for(h) for h in conversation(1))
    assert json.dumps(second["system"]) == json.dumps(first["system"])
    assert json.dumps(second["tools"]) == json.dumps(first["tools"])
    earlier = json.dumps(first["messages"])[:-1]  # without the closing bracket
    assert json.dumps(second["messages"]).startswith(earlier)


def test_later_requests_differ_from_the_previous_only_in_dropped_markers() -> None:
    bodies = [strip_markers(body_for(h)) for h in conversation(4)]
    for before, after in itertools.pairwise(bodies):
        assert after["system"] == before["system"] and after["tools"] == before["tools"]
        assert after["messages"][: len(before["messages"])] == before["messages"]


def test_thinking_and_empty_text_never_carry_a_breakpoint() -> None:
    history = (
        Message.user("go"),
        Message("assistant", (TextBlock("ok"), ThinkingBlock("t", "s"), TextBlock(""))),
    )
    body = body_for(history)
    assert breakpoints(body) == [
        "system[0]",
        "tools[1]",
        "messages[0].content[0]",
        "messages[1].content[0]",  # the text before the thinking block
    ]
    only_thinking = (Message.user("go"), Message("assistant", (ThinkingBlock("t", "s"),)))
    assert "messages[1]" not in " ".join(breakpoints(body_for(only_thinking)))


def test_no_system_no_tools_only_message_breakpoints() -> None:
    body = request_body(ModelRequest("m", (Message.user("x"),)))
    assert breakpoints(body) == ["messages[0].content[0]"]
    assert "system" not in body and "tools" not in body


async def test_usage_reports_cache_reads_and_writes() -> None:
    usage = UsageSpec(
        input_tokens=12,
        output_tokens=3,
        cache_creation_input_tokens=900,
        cache_read_input_tokens=4000,
    )
    with FakeModelServer([turn("ok", usage=usage)]) as server:
        client = AnthropicClient(base_url=server.anthropic_base_url, api_key="k")
        request = ModelRequest(
            "claude-sonnet-4-5", (Message.user("hi"),), system="sys", tools=TOOLS
        )
        events = [event async for event in client.stream(request)]
        await client.aclose()
        sent = server.requests[0].body
    assert breakpoints(sent) == ["system[0]", "tools[1]", "messages[0].content[0]"]
    total = Usage()
    for event in events:
        if isinstance(event, MessageStart | MessageDelta):
            total = total.merged(event.usage)
    assert total.cache_creation_input_tokens == 900
    assert total.cache_read_input_tokens == 4000


def test_the_encoded_body_is_the_request_body_with_each_message_encoded_once() -> None:
    """The wire bytes splice in each message's JSON, made once: every request of a session
    still carries exactly request_body's breakpoints, and a marker put on a message for one
    request never sticks to it in the next."""
    for history in conversation(4) * 2:  # the second pass reuses every message's cached JSON
        for stream in (False, True):
            request = ModelRequest(
                "claude-sonnet-4-5", history, system="sys", tools=TOOLS, stream=stream
            )
            expected = request_body(request) | ({"stream": True} if stream else {})
            assert json.loads(encode_body(request)) == expected


def test_an_override_of_the_messages_is_encoded_as_given() -> None:
    history = conversation(1)[-1]
    request = ModelRequest("m", history, extra={"messages": [{"role": "user", "content": "x"}]})
    assert json.loads(encode_body(request))["messages"] == [{"role": "user", "content": "x"}]


def test_an_empty_body_splices_its_messages_as_the_only_field() -> None:
    assert json.loads(spliced({}, {"messages": [b"1", b"2"]})) == {"messages": [1, 2]}
    assert json.loads(spliced({"a": "}"}, {"messages": []})) == {"a": "}", "messages": []}
    fields: dict[str, bytes | list[bytes]] = {"system": b'"s"', "messages": [b"1"]}
    assert json.loads(spliced({"a": 1}, fields)) == {"a": 1, "system": "s", "messages": [1]}
