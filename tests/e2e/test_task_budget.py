"""--task-budget through the real CLI against the fake server, which (as the Messages API)
takes output_config.task_budget only under its beta: every main request tells the model the
budget, `remaining` once an automatic compaction hid what was spent; a bad value or a
provider without the field is refused."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from codeloop.models.anthropic import TASK_BUDGET_BETA
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, UsageSpec, earlier_calls, tool_use, turn
from tests.e2e.cli import PROVIDER_MODELS, provider_env, run_cli

MODEL = "claude-sonnet-4-5"
BUDGET = 50_000
STREAM = ("--output-format", "stream-json", "--verbose")


def test_every_main_request_carries_the_budget_and_what_remains_after_a_compaction(
    tmp_path: Path,
) -> None:
    scenario = Scenario(
        turns=(
            *earlier_calls(),  # something for the compaction to summarise
            turn(tool_use("Bash", {"command": "echo one"}), usage=UsageSpec(output_tokens=300)),
            # fills the 100 000-token window: the next request is compacted first
            turn(
                tool_use("Bash", {"command": "echo two"}),
                usage=UsageSpec(input_tokens=95_000, output_tokens=200),
            ),
            turn("1. User requests: echo twice.", usage=UsageSpec(output_tokens=700)),  # summary
            turn("Done."),
        )
    )
    env = provider_env(None, "anthropic", tmp_path) | {"CODELOOP_CONTEXT_WINDOW": "100000"}
    with FakeModelServer(scenario) as server:
        env |= provider_env(server, "anthropic", tmp_path)
        budget = ["--task-budget", str(BUDGET)]
        run = run_cli(
            ["-p", "echo twice", "--model", MODEL, "--allowedTools", "Bash", *budget, *STREAM],
            cwd=tmp_path,
            env=env,
        )
        requests = server.requests
    assert run.returncode == 0, run.stderr
    assert any(line.get("subtype") == "compact_boundary" for line in run.json_lines())
    assert all(r.status == 200 for r in requests)  # the server refuses the field without beta
    budgets = [(r.body.get("output_config") or {}).get("task_budget") for r in requests]
    spent = sum(r.usage.output_tokens for r in requests[:-1])
    assert budgets == [
        *[{"type": "tokens", "total": BUDGET}] * (len(earlier_calls()) + 2),
        None,  # the compaction's summary is not a turn of the task
        {"type": "tokens", "total": BUDGET, "remaining": BUDGET - spent},
    ]
    for request, budget in zip(requests, budgets, strict=True):
        betas = request.headers.get("anthropic-beta", "").split(",")
        assert (TASK_BUDGET_BETA in betas) == (budget is not None)


def test_without_the_flag_no_budget_is_sent(tmp_path: Path) -> None:
    with FakeModelServer(Scenario(turns=(turn("Hi."),))) as server:
        run = run_cli(
            ["-p", "hi", "--model", MODEL],
            cwd=tmp_path,
            env=provider_env(server, "anthropic", tmp_path),
        )
        (request,) = server.requests
    assert run.returncode == 0, run.stderr
    assert "output_config" not in request.body
    assert TASK_BUDGET_BETA not in request.headers.get("anthropic-beta", "")


@pytest.mark.parametrize("value", ["0", "-5", "many", "1.5", ""])
def test_a_budget_that_is_not_a_positive_integer_exits_1(tmp_path: Path, value: str) -> None:
    env = provider_env(None, "anthropic", tmp_path) | {"ANTHROPIC_API_KEY": "test-key"}
    run = run_cli(["-p", "hi", "--model", MODEL, "--task-budget", value], cwd=tmp_path, env=env)
    assert run.returncode == 1 and "must be a positive integer" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("provider", ["openai", "openai-responses"])
def test_a_provider_without_task_budgets_refuses_the_flag(tmp_path: Path, provider: str) -> None:
    with FakeModelServer(Scenario(turns=(turn("Hi."),))) as server:
        run = run_cli(
            ["-p", "hi", "--model", PROVIDER_MODELS[provider], "--task-budget", "1000"],
            cwd=tmp_path,
            env=provider_env(server, provider, tmp_path),
        )
        assert server.requests == []
    assert run.returncode == 1 and "has no task budget" in run.stderr, run.stderr


def test_the_fake_server_takes_the_field_only_under_its_beta(tmp_path: Path) -> None:
    body = {
        "model": MODEL,
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "hi"}],
        "output_config": {"task_budget": {"type": "tokens", "total": 1000}},
    }
    with FakeModelServer(Scenario(turns=(turn("Hi."),))) as server:
        url = server.anthropic_base_url + "/v1/messages"
        headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
        refused = httpx.post(url, json=body, headers=headers, timeout=30)
        malformed = httpx.post(
            url,
            content=json.dumps(body | {"output_config": {"task_budget": {"total": 0}}}),
            headers=headers | {"anthropic-beta": TASK_BUDGET_BETA},
            timeout=30,
        )
        taken = httpx.post(
            url, json=body, headers=headers | {"anthropic-beta": TASK_BUDGET_BETA}, timeout=30
        )
    assert refused.status_code == 400 and "Extra inputs are not permitted" in refused.text
    assert malformed.status_code == 400 and "task_budget" in malformed.text
    assert taken.status_code == 200, taken.text
