"""A finished request is freed as soon as its caller lets go of it: nothing of it (the
response, the request, its body of hundreds of KB late in a session) waits for the cyclic
collector, which a long session runs rarely: the RSS would grow turn by turn."""

from __future__ import annotations

import gc

import httpx
import pytest

from codeloop.models.anthropic import AnthropicClient
from codeloop.models.base import ModelRequest
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, turn
from codeloop.types import Message


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
async def test_finished_requests_leave_no_response_behind(stream: bool) -> None:
    with FakeModelServer(Scenario(turns=(turn("one"), turn("two"), turn("three")))) as server:
        client = AnthropicClient(base_url=server.anthropic_base_url, api_key="test")
        history = (Message.user("x" * 100_000),)
        gc.collect()
        gc.disable()
        try:
            for _ in range(3):
                request = ModelRequest("claude-sonnet-4-5", history, stream=stream)
                assert [e async for e in client.stream(request)]
            left = [o for o in gc.get_objects() if isinstance(o, httpx.Response)]
        finally:
            gc.enable()
            await client.aclose()
    assert left == []
    assert len(server.requests) == 3
