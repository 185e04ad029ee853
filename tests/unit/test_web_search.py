"""WebSearch's backends against a local server: a SearXNG-compatible endpoint (results shown,
domain lists applied, failures reported) and Anthropic's server-side search through the real
client and QuickModel (the server tool in the request, its result blocks on the wire)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codeloop.models.complete import QuickModel
from codeloop.models.factory import resolve_model
from codeloop.models.retry import RetryPolicy
from codeloop.testing.web_server import WebServer
from codeloop.tools.base import ToolContext, ToolInputError, ToolResult, Workspace
from codeloop.tools.services import ToolServices
from codeloop.tools.web_search import WebSearchTool, search_backend


async def call(tool: WebSearchTool, **raw: Any) -> ToolResult:
    args = tool.parse({"query": "otter facts", **raw})
    return await tool.call(args, ToolContext(Workspace(cwd=Path.cwd())))


def text(result: ToolResult) -> str:
    assert isinstance(result.content, str)
    return result.content


async def test_an_endpoint_s_results_are_listed_with_the_domain_lists_applied() -> None:
    with WebServer() as web:
        tool = WebSearchTool.from_services(ToolServices(search_endpoint=web.url + "/search"))
        every = await call(tool)
        blocked = await call(tool, blocked_domains=["example.net"])
        allowed = await call(tool, allowed_domains=["https://example.com/anything"])
        paths = [path for path, _ in web.requests]
    assert not every.is_error
    assert text(every).startswith('Web search results for "otter facts":')
    assert "1. Otter facts\n   http://docs.example.org/otters\n   Hand holding." in text(every)
    assert "blocked.example.net" in text(every)
    assert "blocked.example.net" not in text(blocked) and "Sea otters" in text(blocked)
    assert "www.example.com/sea" in text(allowed) and "docs.example.org" not in text(allowed)
    assert paths == ["/search?q=otter+facts&format=json"] * 3


async def test_endpoint_failures_are_errors_for_the_model() -> None:
    with WebServer() as web:
        missing = await call(WebSearchTool.from_services(ToolServices(search_endpoint=web.url)))
        html = await call(
            WebSearchTool.from_services(ToolServices(search_endpoint=web.url + "/page"))
        )
        both = await call(
            WebSearchTool.from_services(ToolServices(search_endpoint=web.url + "/search")),
            allowed_domains=["a.org"],
            blocked_domains=["b.org"],
        )
    assert missing.is_error and "404" in text(missing)
    assert html.is_error and "did not answer with JSON" in text(html)
    assert both.is_error and "not both" in text(both)


@pytest.mark.parametrize("query", ["", "x"])
def test_a_query_needs_two_characters(query: str) -> None:
    with pytest.raises(ToolInputError, match="at least 2 characters"):
        WebSearchTool().parse({"query": query})


def test_without_a_backend_there_is_no_search() -> None:
    assert not ToolServices().can_search
    assert search_backend(ToolServices()) is None
    assert ToolServices(server_search=True).can_search


async def test_anthropic_s_server_side_search_through_the_real_client() -> None:
    with WebServer() as web:
        env = {"ANTHROPIC_BASE_URL": web.url, "ANTHROPIC_API_KEY": "test-key"}
        client, model = resolve_model("anthropic:claude-haiku-4-5", env)
        spent: list[str] = []
        side = QuickModel(
            client.stream, model, RetryPolicy(max_attempts=1), lambda m, u: spent.append(m)
        )
        tool = WebSearchTool.from_services(ToolServices(server_search=True, side_model=side))
        found = await call(tool, blocked_domains=["*.example.net"])
        await client.aclose()
        (body,) = web.bodies
    assert body["tools"] == [
        {
            "type": "web_search_20250305",
            "name": "web_search",
            "max_uses": 8,
            "blocked_domains": ["example.net"],
        }
    ]
    assert "otter facts" in body["messages"][0]["content"][0]["text"]
    assert not found.is_error, text(found)
    # The text the model wrote after searching; the server tool's own blocks are not in it.
    assert "- [Otter facts](http://docs.example.org/otters): Hand holding." in text(found)
    assert "encrypted_content" not in text(found) and "srvtoolu" not in text(found)
    assert spent == ["claude-haiku-4-5"]
