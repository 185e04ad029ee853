"""Issue 20's sub-agents through the real CLI: three Agent calls in one answer run side by
side, each from its own prompt alone, each with its own sidechain transcript; their results
pair with their calls, their messages reach stream-json under their call, their spending is
itemised, and the parent session continues."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codeloop.store.transcript import read_transcript
from codeloop.testing.fake_server import FakeModelServer, RecordedRequest
from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.cli import CliRun, provider_env, run_cli

MODEL = "claude-sonnet-4-5"
JOBS = ("job-alpha", "job-beta", "job-gamma")
MAIN = "start the three jobs"
EXTRA: dict[str, str] = {}


def agent(job: str) -> Any:
    return tool_use(
        "Agent", {"description": f"run {job}", "prompt": f"{job}: sleep a second, then report"}
    )


def scenarios() -> dict[str, Scenario]:
    # The fake server serves a request from the key earliest in its latest message naming
    # one: the answer's text names the main conversation's ahead of the agents' prompts.
    main = Scenario(
        turns=(
            turn(f"Starting them: {MAIN}.", *[agent(j) for j in JOBS]),
            turn("All three reported."),
        )
    )
    found = {MAIN: main}
    for job in JOBS:
        found[f"{job}:"] = Scenario(
            turns=(
                turn(tool_use("Bash", {"command": f"sleep 1; echo {job}-slept"})),
                turn(f"report from {job}"),
            )
        )
    return found


def cli(tmp: Path, server: FakeModelServer, *args: str) -> CliRun:
    return run_cli(
        ["-p", *args, "--model", MODEL, "--output-format", "stream-json", "--verbose"],
        cwd=tmp,
        env=provider_env(server, "anthropic", tmp) | {"CODELOOP_HOME": str(tmp / "home")} | EXTRA,
    )


def of(requests: list[RecordedRequest], key: str) -> list[RecordedRequest]:
    return [r for r in requests if r.conversation == key]


def test_three_sub_agents_run_side_by_side(tmp_path: Path) -> None:
    with FakeModelServer(scenarios()) as server:
        run = cli(tmp_path, server, MAIN)
        requests = server.requests
    assert run.returncode == 0, run.stderr
    lines = run.json_lines()
    result = lines[-1]
    assert result["type"] == "result" and result["result"] == "All three reported."
    first, second = of(requests, MAIN)
    agents = {job: of(requests, f"{job}:") for job in JOBS}
    # Side by side: every agent sent its first request before any sent its second (run one
    # after another, the first agent's Bash and second request would come before the next
    # agent's first request).
    assert max(a[0].arrived for a in agents.values()) < min(a[1].arrived for a in agents.values())
    # How long the parent waited (printed; bench/subagents.py measures it).
    assert first.finished is not None
    print(f"response end → next request: {second.arrived - first.finished:.2f} s")
    # Each agent's first request carries its own prompt and nothing of the others'.
    for job, (opening, _) in agents.items():
        sent = json.dumps(opening.body["messages"])
        assert f"{job}: sleep a second" in sent
        assert MAIN not in sent and all(j not in sent for j in JOBS if j != job)
    # Results pair with their calls.
    calls = {
        b["id"]: b["input"]["prompt"].split(":")[0]
        for m in second.body["messages"]
        if m["role"] == "assistant"
        for b in m["content"]
        if b.get("type") == "tool_use"
    }
    results = {
        b["tool_use_id"]: json.dumps(b["content"])
        for b in second.body["messages"][-1]["content"]
        if b.get("type") == "tool_result"
    }
    assert set(results) == set(calls)
    for call_id, job in calls.items():
        assert f"report from {job}" in results[call_id]
    # stream-json: each agent's messages under its call.
    nested = [line for line in lines if line.get("parent_tool_use_id")]
    assert {line["parent_tool_use_id"] for line in nested} == set(calls)
    assert all(line["type"] in ("assistant", "user") for line in nested)
    main_lines = [line for line in lines if line["type"] == "assistant" and line not in nested]
    assert all(line["parent_tool_use_id"] is None for line in main_lines)
    # Spending itemised per agent, and part of the total.
    itemised = result["subagents"]
    assert sorted(s["tool_use_id"] for s in itemised) == sorted(calls)
    assert all(s["num_turns"] == 2 and s["total_cost_usd"] > 0 for s in itemised)
    assert sum(s["total_cost_usd"] for s in itemised) < result["total_cost_usd"]
    # Three sidechain transcripts beside the session's, linked to it and to their calls.
    session_id = result["session_id"]
    (transcript,) = (tmp_path / "home").rglob(f"{session_id}.jsonl")
    sidechains = sorted((transcript.parent / session_id / "subagents").glob("agent-*.jsonl"))
    assert len(sidechains) == 3
    linked = set()
    for path in sidechains:
        entries = [json.loads(line) for line in path.read_text().splitlines()]
        assert all(e["isSidechain"] and e["sessionId"] == session_id for e in entries)
        linked.add(entries[0]["parentToolUseId"])
        assert entries[-1]["subtype"] == "subagent_end" and entries[-1]["turns"] == 2
        assert any("slept" in json.dumps(e.get("message")) for e in entries)
    assert linked == set(calls)
    # Each reads back as a transcript: its prompt, its Bash call and result, its report.
    for path in sidechains:
        read = read_transcript(path)
        assert read.warnings == () and len(read.messages) == 4
        assert read.messages[-1].text.startswith("report from job-")
    # `codeloop sessions show` lists them, and shows one's own timeline.
    env = {"CODELOOP_HOME": str(tmp_path / "home")}
    shown = run_cli(["sessions", "show", session_id], cwd=tmp_path, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "3 sub-agents" in shown.stdout
    agent_id = json.loads(sidechains[0].read_text().splitlines()[0])["agentId"]
    one = run_cli(["sessions", "show", session_id, "--agent", agent_id[:6]], cwd=tmp_path, env=env)
    assert one.returncode == 0, one.stderr
    assert f"sub-agent {agent_id} (general-purpose: run job-" in one.stdout
    assert "Bash" in one.stdout and "report from job-" in one.stdout
    missing = run_cli(["sessions", "show", session_id, "--agent", "zzz"], cwd=tmp_path, env=env)
    assert missing.returncode != 0 and "no sub-agent 'zzz'" in missing.stderr
    # The parent goes on.
    with FakeModelServer([turn("Still here.")]) as server:
        again = run_cli(
            ["-p", "--continue", "and now?", "--model", MODEL, "--output-format", "json"],
            cwd=tmp_path,
            env=provider_env(server, "anthropic", tmp_path)
            | {"CODELOOP_HOME": str(tmp_path / "home")},
        )
        (resumed,) = server.requests
    assert again.returncode == 0, again.stderr
    assert again.json()["session_id"] == session_id
    history = json.dumps(resumed.body["messages"])
    assert MAIN in history and "report from job-beta" in history and "and now?" in history
