"""OpenTelemetry as Claude Code exports it, end to end: the real CLI, configured the way Claude
Code's users configure it, exporting to an OTLP/HTTP receiver on 127.0.0.1; and with
telemetry off, no connection and no OpenTelemetry import at all."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codeloop.models.catalog import cost_usd
from codeloop.testing.fake_server import FakeModelServer, RecordedRequest
from codeloop.testing.otlp_receiver import OtlpGrpcReceiver, OtlpReceiver, Received
from codeloop.testing.scenario import Scenario, UsageSpec, fault, tool_use, turn
from codeloop.types import Usage
from tests.e2e.cli import CliRun, provider_env, run_cli

MODEL = "claude-sonnet-4-5"
PROMPT = "tidy greet and commit it"
APP = "def greet(name):\n    return 'hello ' + name\n"
COMMIT = "git -c user.name=t -c user.email=t@example.invalid commit -qam 'Tidy greet'"


def scenario() -> Scenario:
    return Scenario(
        turns=(
            turn(
                "Reading.",
                tool_use("Read", {"file_path": "app.py"}),
                usage=UsageSpec(input_tokens=1_000, cache_creation_input_tokens=2_000),
                faults=[fault("overloaded")],  # one api_error first, then the answer
            ),
            turn(
                tool_use(
                    "Edit",
                    {
                        "file_path": "app.py",
                        "old_string": "    return 'hello ' + name\n",
                        "new_string": "    greeting = 'Hello, '\n    return greeting + name\n",
                    },
                ),
                usage=UsageSpec(input_tokens=300, cache_read_input_tokens=2_000),
            ),
            turn(tool_use("Write", {"file_path": "notes.txt", "content": "x\n"})),  # refused
            turn(tool_use("Bash", {"command": COMMIT})),
            turn(tool_use("Task", {"description": "check callers", "prompt": "Who calls greet?"})),
            turn("Nobody else calls it.", usage=UsageSpec(input_tokens=700)),  # the sub-agent
            turn("Done: greet is tidy and committed."),
        )
    )


def make_project(root: Path) -> Path:
    project = root / "project"
    project.mkdir()
    (project / "app.py").write_text(APP)
    git = ["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run([*git, "add", "app.py"], check=True)
    subprocess.run([*git, "commit", "-qm", "start"], check=True)
    return project


def telemetry_env(otlp: OtlpReceiver, protocol: str = "http/protobuf") -> dict[str, str]:
    return {
        "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
        "OTEL_METRICS_EXPORTER": "otlp",
        "OTEL_LOGS_EXPORTER": "otlp",
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
        "OTEL_EXPORTER_OTLP_ENDPOINT": otlp.url,
        "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer t0ken",
        "OTEL_RESOURCE_ATTRIBUTES": "department=engineering,team.id=platform",
    }


def run(
    tmp: Path, env: dict[str, str], *python_flags: str
) -> tuple[CliRun, list[RecordedRequest], Path]:
    project = make_project(tmp)
    with FakeModelServer(scenario()) as server:
        args = ["-p", PROMPT, "--model", MODEL, "--permission-mode", "acceptEdits"]
        args += ["--allowedTools", "Bash", "--disallowedTools", "Write(notes.txt)"]
        cli_env = provider_env(server, "anthropic", tmp) | env
        if python_flags:
            proc = subprocess.run(
                [sys.executable, *python_flags, "-m", "codeloop", *args],
                cwd=project,
                env=cli_env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            result = CliRun(proc.returncode, proc.stdout, proc.stderr)
        else:
            result = run_cli(args, cwd=project, env=cli_env)
        return result, server.requests, project


RECEIVERS = {
    "http/protobuf": OtlpReceiver,
    "http/json": lambda: OtlpReceiver("json"),  # a collector that takes only OTLP/JSON
    "grpc": OtlpGrpcReceiver,
}


@pytest.fixture(params=list(RECEIVERS))
def exported(
    request: pytest.FixtureRequest, tmp_path: Path
) -> tuple[Received, list[RecordedRequest]]:
    protocol = request.param
    with RECEIVERS[protocol]() as otlp:
        result, requests, _ = run(tmp_path, telemetry_env(otlp, protocol))
        assert result.returncode == 0, result.stderr
    assert otlp.received.refused == []
    return otlp.received, requests


def test_metrics_have_claude_codes_names_attributes_and_values(
    exported: tuple[Received, list[RecordedRequest]],
) -> None:
    received, requests = exported
    (session,) = received.metric("claude_code.session.count")
    assert session.value == 1 and session.attributes["start_type"] == "fresh"
    session_id = session.attributes["session.id"]
    assert (
        session.resource["service.name"] == "codeloop"
        and session.scope == "com.anthropic.claude_code"
    )
    # tokens by type add up to what the server billed, main agent and sub-agent apart
    tokens = received.metric("claude_code.token.usage")
    assert {p.unit for p in tokens} == {"tokens"} and {p.temporality for p in tokens} == {1}
    billed = sum((r.usage for r in requests), Usage())
    by_type = {t: sum(p.value for p in tokens if p.attributes["type"] == t) for t in TYPES}
    assert by_type == {
        "input": billed.input_tokens,
        "output": billed.output_tokens,
        "cacheRead": billed.cache_read_input_tokens,
        "cacheCreation": billed.cache_creation_input_tokens,
    }
    sub = [p for p in tokens if p.attributes["query_source"] == "subagent"]
    assert sum(p.value for p in sub if p.attributes["type"] == "input") == 700
    assert {p.attributes["model"] for p in tokens} == {MODEL}
    cost = received.metric("claude_code.cost.usage")
    assert sum(p.value for p in cost) == pytest.approx(
        sum(cost_usd(MODEL, r.usage) for r in requests)
    )
    assert {p.unit for p in cost} == {"USD"}
    # the Edit: one line removed, two added; the commit; the decisions on the edit tools
    lines = {
        p.attributes["type"]: p.value for p in received.metric("claude_code.lines_of_code.count")
    }
    assert lines == {"added": 2, "removed": 1}
    assert [p.value for p in received.metric("claude_code.commit.count")] == [1]
    assert received.metric("claude_code.pull_request.count") == []
    decisions = {
        (
            p.attributes["tool_name"],
            p.attributes["decision"],
            p.attributes["source"],
            p.attributes["language"],
        )
        for p in received.metric("claude_code.code_edit_tool.decision")
    }
    assert decisions == {
        ("Edit", "accept", "config", "Python"),
        ("Write", "reject", "config", "unknown"),
    }
    (active,) = received.metric("claude_code.active_time.total")
    assert active.unit == "s" and active.value > 0 and active.attributes["type"] == "cli"
    # every data point carries the standard attributes and the custom resource attributes
    for point in received.points:
        assert (
            point.attributes["session.id"] == session_id and len(point.attributes["user.id"]) == 64
        )
        assert (
            point.attributes["team.id"] == "platform"
            and point.resource["department"] == "engineering"
        )


TYPES = ("input", "output", "cacheRead", "cacheCreation")


def test_events_have_claude_codes_names_and_keep_the_prompt_private(
    exported: tuple[Received, list[RecordedRequest]],
) -> None:
    received, requests = exported
    (prompt,) = received.events("claude_code.user_prompt")
    assert prompt.attributes["prompt_length"] == len(PROMPT) and "prompt" not in prompt.attributes
    assert PROMPT not in str([r.attributes for r in received.logs])  # nowhere, in no event
    assert (
        prompt.body == "claude_code.user_prompt"
        and prompt.attributes["event.name"] == "user_prompt"
    )
    assert prompt.scope == "com.anthropic.claude_code.events"
    (error,) = received.events("claude_code.api_error")
    assert error.attributes["status_code"] == 529 and error.attributes["attempt"] == 1
    answered = received.events("claude_code.api_request")
    assert len(answered) == len(requests) - 1
    # time to first token: each answered request's message_start; the refused one had none
    assert "ttft_ms" not in error.attributes
    assert all(
        0 <= int(e.attributes["ttft_ms"]) <= int(e.attributes["duration_ms"]) for e in answered
    )
    assert sum(e.attributes["input_tokens"] for e in answered) == sum(
        r.usage.input_tokens for r in requests
    )
    assert {e.attributes["query_source"] for e in answered} == {
        "repl_main_thread",
        "general-purpose",
    }
    results = {
        e.attributes["tool_name"]: e.attributes for e in received.events("claude_code.tool_result")
    }
    assert set(results) == {"Read", "Edit", "Bash", "Task"}  # the refused Write never ran
    assert results["Bash"]["success"] == "true" and results["Bash"]["decision_source"] == "config"
    assert "tool_parameters" not in results["Bash"]  # only with OTEL_LOG_TOOL_DETAILS=1
    decisions = {
        e.attributes["tool_name"]: e.attributes["decision"]
        for e in received.events("claude_code.tool_decision")
    }
    assert decisions == {
        "Read": "accept",
        "Edit": "accept",
        "Write": "reject",
        "Bash": "accept",
        "Task": "accept",
    }
    # one prompt: every event after it carries its id; the sequence orders them
    assert {r.attributes.get("prompt.id") for r in received.logs} == {
        prompt.attributes["prompt.id"]
    }
    sequence = sorted(r.attributes["event.sequence"] for r in received.logs)
    assert sequence == list(range(1, len(received.logs) + 1))
    assert all(r.attributes["team.id"] == "platform" for r in received.logs)
    assert all(h.get("authorization") == "Bearer t0ken" for h in received.headers)


def test_spans_trace_the_turn_its_requests_and_tools(
    exported: tuple[Received, list[RecordedRequest]],
) -> None:
    received, requests = exported
    spans = received.spans
    (interaction,) = [s for s in spans if s.name == "claude_code.interaction"]
    assert (
        interaction.parent_span_id == b"" and interaction.attributes["user_prompt"] == "<REDACTED>"
    )
    by_id = {s.span_id: s for s in spans}
    calls = [s for s in spans if s.name == "claude_code.llm_request"]
    assert len(calls) == len(requests)
    (task,) = [
        s for s in spans if s.name == "claude_code.tool" and s.attributes["tool_name"] == "Task"
    ]
    for call in calls:
        parent = by_id[call.parent_span_id]
        assert parent is (
            task if call.attributes["query_source"] == "general-purpose" else interaction
        )
    tools = [s for s in spans if s.name == "claude_code.tool"]
    assert {s.attributes["tool_name"] for s in tools} == {"Read", "Edit", "Write", "Bash", "Task"}
    assert all(s.trace_id == interaction.trace_id for s in spans)
    (failed,) = [s for s in calls if s.attributes["success"] is False]
    assert "ttft_ms" not in failed.attributes
    assert all(s.attributes["ttft_ms"] >= 0 for s in calls if s is not failed)
    assert failed.status_code == 2 and failed.attributes["status_code"] == 529


def test_each_signal_takes_its_own_protocol_variable(tmp_path: Path) -> None:
    """OTEL_EXPORTER_OTLP_{METRICS,LOGS}_PROTOCOL win over the generic protocol, as Claude Code
    documents them: metrics and logs go as JSON to one collector, traces as protobuf to another."""
    with OtlpReceiver("json") as json_only, OtlpReceiver() as protobuf_only:
        env = telemetry_env(protobuf_only) | {
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/json",
            "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "HTTP/JSON",  # case does not matter
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": f"{json_only.url}/v1/metrics",
            "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": f"{json_only.url}/v1/logs",
        }
        result, requests, _ = run(tmp_path, env)
    assert result.returncode == 0, result.stderr
    as_json, as_protobuf = json_only.received, protobuf_only.received
    assert as_json.refused == [] and as_protobuf.refused == []
    assert not (as_json.spans or as_protobuf.points or as_protobuf.logs)
    assert len([s for s in as_protobuf.spans if s.name == "claude_code.llm_request"]) == len(
        requests
    )
    tokens = as_json.metric("claude_code.token.usage")
    assert sum(p.value for p in tokens if p.attributes["type"] == "output") == sum(
        r.usage.output_tokens for r in requests
    )
    assert {p.attributes["query_source"] for p in tokens} == {"main", "subagent"}
    (prompt,) = as_json.events("claude_code.user_prompt")
    assert prompt.attributes["prompt_length"] == len(PROMPT)
    assert all(h["content-type"] == "application/json" for h in as_json.headers)


def test_settings_env_configures_otlp_json_with_gzip_as_the_process_env_does(
    tmp_path: Path,
) -> None:
    """Claude Code documents telemetry set in a settings file's `env`: every OTLP variable
    there counts, compression too (the exporters read only os.environ, which it is not in)."""
    with OtlpReceiver("json") as otlp:
        settings_env = telemetry_env(otlp, "http/json") | {
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"{otlp.url}/",  # a base URL ending in a slash
            "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
        }
        project = make_project(tmp_path)
        (project / ".claude").mkdir()
        (project / ".claude" / "settings.json").write_text(json.dumps({"env": settings_env}))
        with FakeModelServer(scenario()) as server:
            args = ["-p", PROMPT, "--model", MODEL, "--permission-mode", "acceptEdits"]
            result = run_cli(args, cwd=project, env=provider_env(server, "anthropic", tmp_path))
    assert result.returncode == 0, result.stderr
    received = otlp.received
    assert received.refused == []
    assert received.metric("claude_code.cost.usage") and received.metric("claude_code.token.usage")
    assert received.headers and all(h["content-encoding"] == "gzip" for h in received.headers)


def test_an_unknown_protocol_is_named_and_the_default_used(tmp_path: Path) -> None:
    with OtlpReceiver() as otlp:
        env = telemetry_env(otlp, "http/jsn") | {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpcc"}
        result, _, _ = run(tmp_path, env)
    assert result.returncode == 0, result.stderr
    warned = [line for line in result.stderr.splitlines() if "is not an OTLP protocol" in line]
    assert len(warned) == 2, result.stderr  # one per variable, not one per signal
    assert "OTEL_EXPORTER_OTLP_PROTOCOL='http/jsn'" in warned[0] + warned[1]
    assert "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL='grpcc'" in warned[0] + warned[1]
    assert otlp.received.refused == [] and otlp.received.metric("claude_code.cost.usage")
    assert otlp.received.spans  # the traces variable passed over, the generic one too


def test_with_telemetry_off_nothing_connects_and_opentelemetry_is_not_imported(
    tmp_path: Path,
) -> None:
    with OtlpReceiver() as otlp:
        env = telemetry_env(otlp)
        del env["CLAUDE_CODE_ENABLE_TELEMETRY"]  # everything else configured
        result, _, _ = run(tmp_path, env, "-X", "importtime")
        assert result.returncode == 0, result.stderr
    assert otlp.received.connections == 0
    imported = [
        line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if "|" in line
    ]
    assert "codeloop.loop" in imported  # the import log is real
    assert not [
        name
        for name in imported
        if name.startswith(("opentelemetry", "codeloop.telemetry.exporter"))
    ]


def test_a_missing_exporter_or_package_is_said_not_silently_skipped(tmp_path: Path) -> None:
    result, _, _ = run(
        tmp_path, {"CODELOOP_ENABLE_TELEMETRY": "1", "OTEL_METRICS_EXPORTER": "prometheus"}
    )
    assert result.returncode == 0, result.stderr
    assert "'prometheus' exporter is not supported" in result.stderr
    assert "no exporter is set" in result.stderr


def test_a_custom_agents_name_is_exported_as_custom(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    agents = project / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: acme-merger-reviewer\ndescription: Reviews the merger code.\n---\nReview.\n"
    )
    task = {"description": "review", "prompt": "Review it.", "subagent_type": ""}
    scenario = Scenario(
        turns=(
            turn(tool_use("Task", {**task, "subagent_type": "acme-merger-reviewer"})),
            turn("Reviewed."),  # the custom sub-agent
            turn(tool_use("Task", {**task, "subagent_type": "general-purpose"})),
            turn("Looked."),  # the built-in one
            turn("Done."),
        )
    )
    with OtlpReceiver() as otlp, FakeModelServer(scenario) as server:
        env = provider_env(server, "anthropic", tmp_path) | telemetry_env(otlp)
        result = run_cli(["-p", PROMPT, "--model", MODEL], cwd=project, env=env)
    assert result.returncode == 0, result.stderr
    received = otlp.received
    names = {p.attributes.get("agent.name") for p in received.metric("claude_code.cost.usage")}
    assert names == {None, "custom", "general-purpose"}
    sources = {r.attributes["query_source"] for r in received.events("claude_code.api_request")}
    assert sources == {"repl_main_thread", "custom", "general-purpose"}
    exported = repr((received.points, received.logs, received.spans))
    assert "acme-merger-reviewer" not in exported  # what the user named it stays theirs


def test_otel_variables_do_not_reach_bash_hooks_or_mcp_servers(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    mcp = {"command": sys.executable, "args": ["-m", "codeloop.testing.mcp_server"]}
    mcp["env"] = {"OTEL_SERVICE_NAME": "its-own"}  # type: ignore[assignment]
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"py": mcp}}))
    hook = "env | grep -o '^OTEL_[A-Z_]*' | sort > \"$CLAUDE_PROJECT_DIR/hook-env.txt\""
    claude = project / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(
        json.dumps(
            {
                "enableAllProjectMcpServers": True,
                "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": hook}]}]},
            }
        )
    )
    scenario = Scenario(
        turns=(
            turn(tool_use("Bash", {"command": "env | grep ^OTEL_ || echo no-otel"})),
            turn(tool_use("mcp__py__environment", {"prefix": "OTEL_"})),
            turn("Done."),
        )
    )
    with OtlpReceiver() as otlp, FakeModelServer(scenario) as server:
        env = provider_env(server, "anthropic", tmp_path) | telemetry_env(otlp)
        args = ["-p", PROMPT, "--model", MODEL, "--allowedTools", "Bash,mcp__py"]
        result = run_cli(args, cwd=project, env=env)
        bodies = [r.body for r in server.requests]
    assert result.returncode == 0, result.stderr
    # codeloop itself exported (its own configuration was read)...
    assert otlp.received.metric("claude_code.session.count")

    # ...but none of it reached the programs it started; a server's own setting is its own.
    def result_text(body: dict[str, Any]) -> str:
        (block,) = [b for b in body["messages"][-1]["content"] if b["type"] == "tool_result"]
        content = block["content"]
        return content if isinstance(content, str) else content[0]["text"]

    assert result_text(bodies[1]).strip() == "no-otel"
    assert result_text(bodies[2]) == "OTEL_SERVICE_NAME"
    assert (project / "hook-env.txt").read_text() == ""
