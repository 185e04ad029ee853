"""Models as users name them, through the real CLI against the fake server: the catalog's
facts in the json result, Claude Code's aliases in settings, the default model, effort and
thinking budgets in the request, thinking sent back unchanged, and errors said up front."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codeloop.models.catalog import lookup
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import RawResponse, Turn, thinking, tool_use, turn
from tests.e2e.cli import provider_env, run_cli


def _json(args: list[str], server: FakeModelServer, tmp_path: Path, **env: str) -> dict[str, Any]:
    run = run_cli(
        ["-p", "hi", "--output-format", "json", *args],
        cwd=tmp_path,
        env={**provider_env(server, "anthropic", tmp_path), **env},
    )
    assert run.returncode == 0, run.stderr
    return run.json()  # type: ignore[no-any-return]


def test_a_current_model_reports_its_window_and_a_real_cost(tmp_path: Path) -> None:
    with FakeModelServer([turn("hello")]) as server:
        result = _json(["--model", "claude-sonnet-5-5"], server, tmp_path)
    usage = result["modelUsage"]["claude-sonnet-5-5"]
    assert usage["contextWindow"] == 1_000_000 and usage["maxOutputTokens"] == 128_000
    assert result["total_cost_usd"] > 0 and usage["costUSD"] == result["total_cost_usd"]


def test_an_alias_in_claude_settings_sends_the_full_name(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"model": "sonnet"}))
    with FakeModelServer([turn("hello")]) as server:
        _json([], server, tmp_path)
        (request,) = server.requests
    assert request.body["model"] == "claude-sonnet-5-5"


def test_with_only_an_api_key_the_request_names_a_current_model(tmp_path: Path) -> None:
    with FakeModelServer([turn("hello")]) as server:
        result = _json([], server, tmp_path)
        (request,) = server.requests
    info = lookup(request.body["model"])
    assert info.known and not info.deprecated and info.line == "sonnet"
    assert list(result["modelUsage"]) == [request.body["model"]]


def test_effort_and_thinking_budget_reach_the_request(tmp_path: Path) -> None:
    with FakeModelServer([turn("a"), turn("b"), turn("c")]) as server:
        _json(["--model", "sonnet", "--effort", "high"], server, tmp_path)
        _json(["--model", "haiku", "--effort", "high"], server, tmp_path)
        _json(["--model", "claude-haiku-4-5"], server, tmp_path, MAX_THINKING_TOKENS="8000")
        adaptive, haiku_55, budget = (r.body for r in server.requests)
        beta = server.requests[2].headers.get("anthropic-beta", "")
    assert adaptive["thinking"] == {"type": "adaptive"}
    assert adaptive["output_config"] == {"effort": "high"}
    assert haiku_55["model"] == "claude-haiku-5-5" and haiku_55["output_config"]["effort"] == "high"
    assert budget["thinking"] == {"type": "enabled", "budget_tokens": 8000}
    assert budget["max_tokens"] > 8000 and "interleaved-thinking" in beta


def test_effort_level_setting_and_ultrathink(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"effortLevel": "low"}))
    with FakeModelServer([turn("a"), turn("b")]) as server:
        _json(["--model", "sonnet"], server, tmp_path)
        run = run_cli(
            ["-p", "ultrathink: why?", "--model", "sonnet", "--output-format", "json"],
            cwd=tmp_path,
            env=provider_env(server, "anthropic", tmp_path),
        )
        assert run.returncode == 0, run.stderr
        low, ultra = (r.body for r in server.requests)
    assert low["output_config"] == {"effort": "low"}
    assert ultra["output_config"] == {"effort": "high"}


def test_a_thinking_block_and_its_signature_go_back_unchanged(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    first = turn(
        thinking("Read it first.", "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrk"),
        tool_use("Read", {"file_path": "a.py"}),
    )
    with FakeModelServer([first, turn("x is 1")]) as server:
        _json(["--model", "sonnet", "--effort", "medium"], server, tmp_path)
        second = server.requests[1].body
    assistant = second["messages"][-2]
    assert assistant["role"] == "assistant"
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": "Read it first.",
        "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrk",
    }


def test_a_deprecated_model_runs_with_a_one_line_notice(tmp_path: Path) -> None:
    with FakeModelServer([turn("hello")]) as server:
        run = run_cli(
            ["-p", "hi", "--model", "claude-sonnet-4-5"],
            cwd=tmp_path,
            env=provider_env(server, "anthropic", tmp_path),
        )
    assert run.returncode == 0 and run.stdout.strip() == "hello"
    notices = [line for line in run.stderr.splitlines() if "deprecated" in line]
    assert len(notices) == 1 and "claude-sonnet-5-5" in notices[0]


def test_a_misspelt_model_lists_the_closest_names(tmp_path: Path) -> None:
    body = {"type": "error", "error": {"type": "not_found_error", "message": "model: x"}}
    not_found = Turn(raw=RawResponse(status=404, body=json.dumps(body)))
    with FakeModelServer([not_found]) as server:
        run = run_cli(
            ["-p", "hi", "--model", "claude-sonet-5-5"],
            cwd=tmp_path,
            env=provider_env(server, "anthropic", tmp_path),
        )
    assert run.returncode == 1
    (line,) = run.stderr.strip().splitlines()
    assert "not found" in line and "Did you mean claude-sonnet-5-5" in line


def test_a_model_without_tools_is_refused_before_any_request(tmp_path: Path) -> None:
    with FakeModelServer([turn("hello")]) as server:
        run = run_cli(
            ["-p", "hi", "--model", "o3-deep-research"],
            cwd=tmp_path,
            env=provider_env(server, "openai-responses", tmp_path),
        )
        assert server.requests == []
    assert run.returncode == 1
    (line,) = run.stderr.strip().splitlines()
    assert "o3-deep-research cannot call tools" in line
