"""WebSearch through the real CLI: a SearXNG-compatible endpoint from settings (a local web
server), Anthropic's server-side search tool (its side request to the fake model server),
asked without a rule, and not offered at all without a backend."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, tool_use, turn
from codeloop.testing.web_server import WebServer
from tests.e2e.cli import CliRun, provider_env, run_cli
from tests.e2e.test_tool_belt import result_text, results

PROMPT = "find otter facts"


def search(**fields: Any) -> Any:
    return tool_use("WebSearch", {"query": "otter facts", **fields})


def cli(tmp: Path, server: FakeModelServer, *args: str, provider: str = "anthropic") -> CliRun:
    model = "claude-sonnet-4-5" if provider == "anthropic" else "openai:gpt-6.2-sol"
    return run_cli(
        ["-p", PROMPT, *args, "--model", model, "--output-format", "json"],
        cwd=tmp,
        env=provider_env(server, provider, tmp) | {"CODELOOP_HOME": str(tmp / "home")},
    )


def endpoint_settings(tmp: Path, url: str) -> None:
    folder = tmp / ".claude"
    folder.mkdir(exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({"webSearch": {"url": url}}))


def tool_names(body: dict[str, Any]) -> list[str]:
    """The tools a request offers, in the Messages API's shape or OpenAI's."""
    return [tool.get("name") or tool["function"]["name"] for tool in body["tools"]]


def test_a_configured_endpoint_answers_with_the_rule_and_is_asked_without(
    tmp_path: Path,
) -> None:
    scenario = Scenario(
        turns=(
            turn(search(blocked_domains=["blocked.example.net"])),
            turn(search(allowed_domains=["example.com"])),
            turn("Found them."),
        )
    )
    with WebServer() as web:
        endpoint_settings(tmp_path, web.url + "/search")
        with FakeModelServer(scenario) as server:
            run = cli(tmp_path, server, "--allowedTools", "WebSearch")
            requests = server.requests
        searched = [path for path, _ in web.requests]
        with FakeModelServer(Scenario(turns=(turn(search()), turn("No search.")))) as server:
            asked = cli(tmp_path, server)
            denied = results(server.requests[-1])
        assert len(web.requests) == len(searched)  # the refused search sent nothing
    assert run.returncode == 0, run.stderr
    # Three requests, all the main conversation's: the configured endpoint is used even on
    # Anthropic, where the server-side search would otherwise run.
    assert len(requests) == 3 and "WebSearch" in tool_names(requests[0].body)
    blocked, allowed = (results(r)[0] for r in requests[1:])
    assert not blocked.get("is_error")
    text = result_text(blocked)
    assert "Otter facts" in text and "http://docs.example.org/otters" in text
    assert "Kelp forests." in text and "blocked.example.net" not in text
    assert "docs.example.org" not in result_text(allowed)
    assert "http://www.example.com/sea" in result_text(allowed)
    assert all("q=otter+facts" in path and "format=json" in path for path in searched)
    assert len(searched) == 2
    assert asked.returncode == 0, asked.stderr
    assert denied[0]["is_error"] and "WebSearch" in result_text(denied[0])


def test_on_anthropic_the_server_side_search_tool_answers(tmp_path: Path) -> None:
    main = Scenario(turns=(turn(search(allowed_domains=["docs.example.org"])), turn("Done.")))
    side = Scenario(turns=(turn("- [Otter facts](http://docs.example.org/otters): hands."),))
    with FakeModelServer({PROMPT: main, "Search the web for: otter facts": side}) as server:
        run = cli(tmp_path, server, "--allowedTools", "WebSearch")
        requests = server.requests
    assert run.returncode == 0, run.stderr
    (asked,) = [r for r in requests if r.conversation != PROMPT]
    assert asked.body["tools"] == [
        {
            "type": "web_search_20250305",
            "name": "web_search",
            "max_uses": 8,
            "allowed_domains": ["docs.example.org"],
        }
    ]
    assert "haiku" in asked.body["model"]  # the small fast model runs the search
    (found,) = results([r for r in requests if r.conversation == PROMPT][-1])
    assert not found.get("is_error")
    assert "[Otter facts](http://docs.example.org/otters)" in result_text(found)
    # The search's cost is the session's.
    assert run.json()["modelUsage"].keys() >= {asked.body["model"]}


def test_without_a_backend_the_tool_is_not_offered(tmp_path: Path) -> None:
    with FakeModelServer(Scenario(turns=(turn("Hi."),))) as server:
        run = cli(tmp_path, server, provider="openai")
        (request,) = server.requests
    assert run.returncode == 0, run.stderr
    assert "WebSearch" not in tool_names(request.body)
    assert "WebFetch" in tool_names(request.body)


def test_a_bad_endpoint_setting_is_reported(tmp_path: Path) -> None:
    endpoint_settings(tmp_path, "ftp://search.invalid/")
    with FakeModelServer(Scenario(turns=(turn("Hi."),))) as server:
        run = cli(tmp_path, server, provider="openai")
        (request,) = server.requests
    assert run.returncode == 0, run.stderr
    assert "webSearch.url" in run.stderr and "http(s) URL" in run.stderr
    assert "WebSearch" not in tool_names(request.body)
