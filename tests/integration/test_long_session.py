"""Issue 5 acceptance: a 200-turn session of 20-40 KB tool results inside a 64K window.

The real loop, real tools and real HTTP clients run against two fake servers that refuse, as a
provider would, any request over the window (JSON body / 4 tokens): one plays the main model,
the other answers the compactions' summary calls, which come whenever the context manager
decides. Nothing may come back "prompt is too long", and every compaction must be recorded.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from codeloop.context.compact import is_compact_summary, is_summary_request
from codeloop.context.pipeline import ContextSettings
from codeloop.events import CompactBoundary, Event, LoopEnd
from codeloop.models.anthropic import AnthropicClient
from codeloop.models.base import ModelClient, ModelRequest, StreamEvent
from codeloop.models.openai import OpenAIClient
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.long_session import long_session, play, summary_turns
from tests.unit.context_history import assert_paired

ALL_LEVELS = ContextSettings()
AUTOCOMPACT_ONLY = ContextSettings(persist_results=False, microcompact=False)


def _client(provider: str, server: FakeModelServer) -> ModelClient:
    if provider == "anthropic":
        return AnthropicClient(base_url=server.anthropic_base_url, api_key="test")
    return OpenAIClient(base_url=server.openai_base_url, api_key="test")


@pytest.mark.parametrize(
    ("provider", "model", "window", "settings"),
    [
        ("anthropic", "claude-sonnet-4-5", 64_000, ALL_LEVELS),
        ("openai", "claude-sonnet-4-5", 64_000, ALL_LEVELS),
        # Dozens of summary calls, each of which must fit the window too.
        ("anthropic", "claude-sonnet-4-5", 64_000, AUTOCOMPACT_ONLY),
        ("openai", "claude-sonnet-4-5", 64_000, AUTOCOMPACT_ONLY),
        # A local model on a 32K server: every result is bigger than its result budget.
        ("openai", "local-coder", 32_768, ALL_LEVELS),
    ],
    ids=["anthropic", "openai", "anthropic-L3-only", "openai-L3-only", "local-32k"],
)
async def test_200_turns_of_big_results_stay_inside_the_window(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    provider: str,
    model: str,
    window: int,
    settings: ContextSettings,
) -> None:
    monkeypatch.setenv("CODELOOP_CONTEXT_WINDOW", str(window))
    script = long_session(tmp_path / "work", prompts=4, turns_per_prompt=50)
    requests: list[ModelRequest] = []
    events: list[Event] = []
    with (
        FakeModelServer(script.turns, max_prompt_tokens=window) as main,
        FakeModelServer(summary_turns(150), max_prompt_tokens=window) as summaries,
    ):
        main_client, summary_client = _client(provider, main), _client(provider, summaries)

        def route(request: ModelRequest) -> AsyncIterator[StreamEvent]:
            requests.append(request)
            client = summary_client if is_summary_request(request) else main_client
            return client.stream(request)

        run = play(script, route, model=model, settings=settings, results_dir=tmp_path / "results")
        events = [event async for event in run]
        await main_client.aclose()
        await summary_client.aclose()
        recorded = main.requests + summaries.requests

    ends = [e for e in events if isinstance(e, LoopEnd)]
    assert [e.reason for e in ends] == ["completed"] * 4, [e.error for e in ends]
    for prompt, end in zip(script.prompts, ends, strict=True):
        # The request being worked on is never summarized away.
        assert any(m.role == "user" and m.text == prompt for m in end.messages)
    assert main.remaining == 0 and len(main.requests) == 200
    assert all(r.status == 200 for r in recorded), [r.status for r in recorded]
    sizes = [len(json.dumps(r.body, separators=(",", ":"))) / 4 for r in recorded]
    assert max(sizes) < window
    boundaries = [e for e in events if isinstance(e, CompactBoundary)]
    assert boundaries, "this session cannot fit the window without a summary"
    assert len(boundaries) == len(summaries.requests)
    assert all(b.summary and b.tokens_after < b.tokens_before for b in boundaries)
    for request in requests:
        assert_paired(request.messages)
    assert any(r.messages and is_compact_summary(r.messages[0]) for r in requests)
