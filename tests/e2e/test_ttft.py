"""Time to first token, through the real CLI against the fake server: measured when the
response's message_start arrives (not its first text), on each message_start stream_event line,
in the result (the turn's first request), and in `codeloop usage`."""

from __future__ import annotations

from pathlib import Path

from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, thinking, tool_use, turn
from tests.e2e.cli import provider_env, run_cli

MODEL = "claude-sonnet-4-5"
# The server pauses this long between the thinking and the first text of each answer.
PAUSE = 1.0


def test_ttft_is_measured_at_message_start_and_reported_everywhere(tmp_path: Path) -> None:
    scenario = Scenario(
        turns=(
            turn(
                thinking("look", "sig", delay_after=PAUSE),
                "Looking.",
                tool_use("Bash", {"command": "true"}),
            ),
            turn(thinking("done", "sig", delay_after=PAUSE), "Done."),
        )
    )
    env = provider_env(None, "anthropic", tmp_path) | {"CODELOOP_HOME": str(tmp_path / "home")}
    with FakeModelServer(scenario) as server:
        env |= provider_env(server, "anthropic", tmp_path)
        args = ["-p", "check", "--model", MODEL, "--allowedTools", "Bash"]
        run = run_cli(
            [*args, "--output-format", "stream-json", "--include-partial-messages", "--verbose"],
            cwd=tmp_path,
            env=env,
        )
    assert run.returncode == 0, run.stderr
    lines = run.json_lines()
    events = [line for line in lines if line["type"] == "stream_event"]
    starts = [line for line in events if line["event"]["type"] == "message_start"]
    assert len(starts) == 2 and all(isinstance(s["ttft_ms"], int) for s in starts)
    assert all("ttft_ms" not in line for line in events if line not in starts)
    (result,) = [line for line in lines if line["type"] == "result"]
    assert result["ttft_ms"] == starts[0]["ttft_ms"]  # the turn's first request
    # At the first text it would be PAUSE later: the two requests took both pauses and more.
    assert result["duration_api_ms"] - sum(s["ttft_ms"] for s in starts) >= 2 * PAUSE * 1000 - 2

    usage = run_cli(["usage", "--json"], cwd=tmp_path, env=env)
    assert usage.returncode == 0, usage.stderr
    rows = usage.json()["by_turn"]
    assert [row["ttft_ms"] for row in rows] == [s["ttft_ms"] for s in starts]
    table = run_cli(["usage", "--by", "turn"], cwd=tmp_path, env=env | {"COLUMNS": "200"})
    assert "first token" in table.stdout and f"{starts[0]['ttft_ms']:,} ms" in table.stdout


def test_json_result_has_ttft_without_partial_messages(tmp_path: Path) -> None:
    with FakeModelServer(Scenario(turns=(turn("Hi."),))) as server:
        env = provider_env(server, "anthropic", tmp_path) | {"CODELOOP_HOME": str(tmp_path / "h")}
        run = run_cli(
            ["-p", "hi", "--model", MODEL, "--output-format", "json"], cwd=tmp_path, env=env
        )
    assert run.returncode == 0, run.stderr
    assert isinstance(run.json()["ttft_ms"], int) and run.json()["ttft_ms"] >= 0
