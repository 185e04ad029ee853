"""`codeloop usage` against what the fake server reported, request by request.

A recorded session with tool calls, a sub-agent, a stream cut after its usage was reported,
and an automatic compaction runs through the real CLI; then `codeloop usage --json` must
account for every token the server billed: the same totals, each request's usage on its own
row, and each token charged to one turn, one model and at most one tool or sub-agent.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from codeloop.models.catalog import cost_usd
from codeloop.testing.fake_server import FakeModelServer, RecordedRequest
from codeloop.testing.scenario import Scenario, UsageSpec, fault, tool_use, turn
from codeloop.types import Usage
from codeloop.usage.attribute import UNRECORDED, parts
from codeloop.usage.ledger import read_ledger
from tests.e2e.cli import PROVIDER_MODELS, provider_env, run_cli

APP = "def greet(name):\n    return 'hello ' + name\n" * 8  # too small to fold
UTIL = "def add(a, b):\n    return a + b\n"
FIELDS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")
TYPES = {
    "input": "input_tokens",
    "cache_read": "cache_read_input_tokens",
    "cache_write": "cache_creation_input_tokens",
    "output": "output_tokens",
}


def usage(input: int, write: int = 0, read: int = 0) -> UsageSpec:
    return UsageSpec(
        input_tokens=input, cache_creation_input_tokens=write, cache_read_input_tokens=read
    )


def scenario() -> Scenario:
    return Scenario(
        turns=(
            turn(
                "Reading.", tool_use("Read", {"file_path": "src/app.py"}), usage=usage(1200, 3000)
            ),
            turn(
                tool_use("Read", {"file_path": "src/util.py"}),
                tool_use("Bash", {"command": "echo checked"}),
                usage=usage(300, 500, 3000),
            ),
            turn(
                tool_use("Task", {"description": "find callers", "prompt": "Who calls greet?"}),
                usage=usage(200, 400, 3500),
            ),
            # the sub-agent's two requests
            turn(tool_use("Grep", {"pattern": "greet"}), usage=usage(2000)),
            turn("Only main() calls greet.", usage=usage(2500)),
            # the main agent again; the usage it reports fills the (100 000-token) window
            turn("Checking.", tool_use("Bash", {"command": "echo more"}), usage=usage(90_000)),
            # the compaction's summary request
            turn("1. User requests and intent: fix greet.", usage=usage(9_000, 0, 4_000)),
            # cut after its usage was reported: the retry is billed as well
            turn("Done.", faults=[fault("cut", after=1)], usage=usage(700, 100, 300)),
        )
    )


def make_project(root: Path) -> Path:
    project = root / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text(APP)
    (project / "src" / "util.py").write_text(UTIL)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


def billed(request: RecordedRequest) -> dict[str, int]:
    return {k: getattr(request.usage, k) for k in FIELDS}


def summed(rows: Any) -> dict[str, int]:
    return {k: sum(row[k] for row in rows) for k in FIELDS}


@pytest.fixture(params=["anthropic", "openai"])
def recorded(
    request: pytest.FixtureRequest, tmp_path: Path
) -> tuple[Path, dict[str, str], list[RecordedRequest]]:
    provider = request.param
    project = make_project(tmp_path)
    with FakeModelServer(scenario()) as server:
        env = provider_env(server, provider, tmp_path) | {"CODELOOP_CONTEXT_WINDOW": "100000"}
        run = run_cli(
            [
                "-p",
                "fix greet",
                "--model",
                PROVIDER_MODELS[provider],
                "--allowedTools",
                "Bash",
                "--output-format",
                "json",
            ],
            cwd=project,
            env=env,
        )
        assert run.returncode == 0, run.stderr
        requests = server.requests
    # the live figure: the result object's usage counts every request the server billed
    result = run.json()
    billed_total = {k: sum(billed(r)[k] for r in requests) for k in FIELDS}
    assert {k: result["usage"][k] for k in FIELDS} == billed_total
    (model_usage,) = result["modelUsage"].values()
    assert model_usage["inputTokens"] == billed_total["input_tokens"]
    assert model_usage["costUSD"] == pytest.approx(result["total_cost_usd"], abs=1e-6)
    return project, env, requests


def test_totals_and_each_request_match_what_the_server_billed(
    recorded: tuple[Path, dict[str, str], list[RecordedRequest]],
) -> None:
    project, env, requests = recorded
    assert len(requests) == 9  # 8 turns, one of them asked twice
    run = run_cli(["usage", "--json"], cwd=project, env=env)
    assert run.returncode == 0, run.stderr
    report = run.json()
    expected = {k: sum(billed(r)[k] for r in requests) for k in FIELDS}
    assert {k: report["total"][k] for k in FIELDS} == expected
    # one row per request, in order, each with exactly what the server reported for it
    turns = report["by_turn"]
    assert [{k: row[k] for k in FIELDS} for row in turns] == [billed(r) for r in requests]
    assert [row["agent_description"] for row in turns] == [None] * 3 + ["find callers"] * 2 + [
        None
    ] * 4
    assert [row["purpose"] for row in turns].count("summary") == 1
    assert [row["outcome"] for row in turns][-2:] == ["failed", "answer"]
    # every token is in exactly one turn and one model, and in at most one tool or sub-agent
    assert summed(turns) == expected == summed(report["by_model"])
    tools = summed(report["by_tool"])
    assert all(tools[k] <= expected[k] for k in FIELDS) and tools["output_tokens"] == 0
    (agent,) = report["by_subagent"]
    assert {k: agent[k] for k in FIELDS} == summed(turns[3:5])
    assert agent["description"] == "find callers" and agent["requests"] == 2
    assert report["total"]["cost_usd"] == pytest.approx(sum(row["cost_usd"] for row in turns))


def test_a_tool_pays_for_its_result_until_the_compaction(
    recorded: tuple[Path, dict[str, str], list[RecordedRequest]],
) -> None:
    project, env, _requests = recorded
    run = run_cli(
        ["usage", "--json", "--by", "tool", "--by", "file", "--by", "subagent"],
        cwd=project,
        env=env,
    )
    assert run.returncode == 0, run.stderr
    report = run.json()
    assert set(report) >= {"by_tool", "by_file", "by_subagent"} and "by_turn" not in report
    files = {row["file"]: row for row in report["by_file"]}
    # src/app.py rode along in the next three main requests and the summary request, not after
    assert files["src/app.py"]["reads"] == 1 and files["src/app.py"]["requests"] == 4
    assert files["src/app.py"]["cost_usd"] > files["src/util.py"]["cost_usd"] > 0
    tools = {row["tool"]: row for row in report["by_tool"]}
    assert tools["Read"]["calls"] == 2 and tools["Bash"]["calls"] == 2
    assert tools["Grep"]["calls"] == 1 and tools["Grep"]["requests"] == 1  # inside the sub-agent
    (agent,) = report["by_subagent"]
    assert agent["result_in_parent"]["cost_usd"] > 0  # its answer, in the parent's next requests
    assert report["savings"]["compaction_tokens"] > 0
    assert report["largest"] and report["cache_hit_rate"] > 0


def test_each_requests_parts_add_up_to_what_it_was_billed(
    recorded: tuple[Path, dict[str, str], list[RecordedRequest]], tmp_path: Path
) -> None:
    _, _, requests = recorded
    (path,) = (tmp_path / ".codeloop").glob("projects/*/*.jsonl")
    ledger = read_ledger(path)
    assert len(ledger.requests) == len(requests)
    for request, sent in zip(ledger.requests, requests, strict=True):
        charged = list(parts([request]))
        assert all(p.request is request for p in charged)
        tokens = {t: sum(p.tokens for p in charged if p.type == t) for t in TYPES}
        assert Usage(**{field: tokens[t] for t, field in TYPES.items()}) == sent.usage
        assert sum(p.cost_usd for p in charged) == pytest.approx(
            cost_usd(request.model, sent.usage)
        )
        # what the request sent was recorded: its prompt is charged to what it was made of
        assert request.segments and not any(p.kind == UNRECORDED for p in charged)


def test_usage_explains_itself_as_a_table(
    recorded: tuple[Path, dict[str, str], list[RecordedRequest]],
) -> None:
    project, env, _ = recorded
    run = run_cli(
        ["usage", "--by", "turn", "--by", "subagent"], cwd=project, env=env | {"COLUMNS": "160"}
    )
    assert run.returncode == 0, run.stderr
    assert "cache hit rate" in run.stdout and "largest contributors" in run.stdout
    assert "By turn" in run.stdout and "find callers" in run.stdout
    assert "compaction summary" in run.stdout


def test_since_keeps_only_later_requests(
    recorded: tuple[Path, dict[str, str], list[RecordedRequest]],
) -> None:
    project, env, requests = recorded
    later = run_cli(["usage", "--json", "--since", "2999-01-01"], cwd=project, env=env)
    assert later.returncode == 0, later.stderr
    assert later.json()["requests"] == 0 and later.json()["total"]["cost_usd"] == 0
    everything = run_cli(["usage", "--json", "--since", "2000-01-01T00:00"], cwd=project, env=env)
    assert everything.json()["requests"] == len(requests)


def test_usage_says_what_is_wrong(tmp_path: Path) -> None:
    env = provider_env(None, "anthropic", tmp_path)
    empty = run_cli(["usage"], cwd=tmp_path, env=env)
    assert empty.returncode == 0 and "No sessions in" in empty.stdout
    missing = run_cli(["usage", "0123abcd"], cwd=tmp_path, env=env)
    assert missing.returncode == 1 and "no session 0123abcd" in missing.stderr
    for args, said in (
        (["--since", "yesterday"], "not a date"),
        (["0123", "--all"], "SESSION or --all"),
        (["--by", "color"], "invalid choice"),
    ):
        run = run_cli(["usage", *args], cwd=tmp_path, env=env)
        assert run.returncode == 2 and said in run.stderr, run.stderr
        assert "Traceback" not in run.stderr


def test_a_prompt_hooks_model_calls_are_in_the_usage(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    hook = {"type": "prompt", "prompt": "Did the assistant finish? $ARGUMENTS"}
    claude = project / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(json.dumps({"hooks": {"Stop": [{"hooks": [hook]}]}}))
    scenario = Scenario(
        turns=(
            turn("All done.", usage=usage(1_000)),
            turn('{"ok": false, "reason": "say how"}', usage=usage(400, 0, 0)),  # the judge
            turn("Done: by reading.", usage=usage(1_200)),
            turn('{"ok": true}', usage=usage(450, 0, 0)),  # the judge again
        )
    )
    with FakeModelServer(scenario) as server:
        env = provider_env(server, "anthropic", tmp_path)
        args = ["-p", "finish", "--model", PROVIDER_MODELS["anthropic"], "--output-format", "json"]
        run = run_cli(args, cwd=project, env=env)
        assert run.returncode == 0, run.stderr
        requests = server.requests
    assert len(requests) == 4
    expected = {k: sum(billed(r)[k] for r in requests) for k in FIELDS}
    assert {k: run.json()["usage"][k] for k in FIELDS} == expected  # the live figure
    report = run_cli(["usage", "--json"], cwd=project, env=env).json()
    assert {k: report["total"][k] for k in FIELDS} == expected
    turns = report["by_turn"]
    assert [row["purpose"] for row in turns] == ["turn", "hook", "turn", "hook"]
    assert [{k: row[k] for k in FIELDS} for row in turns] == [billed(r) for r in requests]
