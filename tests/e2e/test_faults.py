"""Issue 4's fault matrix through the real CLI and the fake server's real wire format.

Each run uses Bash tools that append to a log, so "no tool ran twice" is read from disk, and
the last request's messages are checked for tool_use/tool_result pairing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codeloop.testing.fake_server import FakeModelServer, RecordedRequest
from codeloop.testing.history_check import history_problems
from codeloop.testing.scenario import Fault, Scenario, Turn, fault, tool_use, turn
from tests.e2e.cli import CliRun, provider_env, run_cli

MODEL = "claude-sonnet-4-5"


def logged_tool(i: int) -> Any:
    return tool_use("Bash", {"command": f"echo {i} >> tool.log"})


def run_with(
    tmp: Path, turns: list[Turn], *extra: str, env: dict[str, str] | None = None
) -> tuple[CliRun, list[RecordedRequest]]:
    with FakeModelServer(Scenario(turns=tuple(turns))) as server:
        run = run_cli(
            [
                "-p",
                "go",
                "--model",
                MODEL,
                "--allowedTools",
                "Bash",
                "--output-format",
                "json",
                *extra,
            ],
            cwd=tmp,
            env=provider_env(server, "anthropic", tmp) | (env or {}),
        )
        return run, list(server.requests)


def assert_paired(request: RecordedRequest) -> None:
    assert history_problems(request.body["messages"]) == []


def assert_each_tool_ran_once(tmp: Path, expected: int) -> None:
    lines = (tmp / "tool.log").read_text().split() if expected else []
    assert lines == [str(i) for i in range(expected)]


def two_turns(faults: list[Fault], **turn_kw: Any) -> list[Turn]:
    return [turn("Working.", logged_tool(0)), turn("All done.", faults=faults, **turn_kw)]


@pytest.mark.parametrize(
    "faults",
    [
        [fault("overloaded")],
        [fault("server_error")],
        [fault("cut", after=3)],
        [fault("sse_error", after=2)],
    ],
    ids=["529-once", "500", "cut-mid-text", "sse-error-event"],
)
def test_transient_fault_is_survived(faults: list[Fault], tmp_path: Path) -> None:
    run, requests = run_with(tmp_path, two_turns(faults, chunk_chars=3))
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "All done."
    assert len(requests) == 3
    assert_paired(requests[-1])
    assert_each_tool_ran_once(tmp_path, 1)
    if faults[0].kind == "sse_error":
        assert requests[2].body.get("stream") is not True  # the retry did not stream


def test_rate_limit_waits_as_long_as_the_server_says(tmp_path: Path) -> None:
    run, requests = run_with(tmp_path, two_turns([fault("rate_limited", retry_after=2)]))
    assert run.returncode == 0, run.stderr
    limited, retried = requests[1], requests[2]
    assert limited.finished is not None
    assert retried.arrived - limited.finished >= 2.0  # not less than retry-after
    assert_paired(requests[-1])
    assert_each_tool_ran_once(tmp_path, 1)


def test_stalled_stream_recovers_through_the_watchdog(tmp_path: Path) -> None:
    stall = fault("stall", after=2, seconds=40)
    run, requests = run_with(
        tmp_path, two_turns([stall]), env={"CODELOOP_STREAM_IDLE_TIMEOUT": "2"}
    )
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "All done."
    assert len(requests) == 3
    assert_paired(requests[-1])
    assert_each_tool_ran_once(tmp_path, 1)


def test_max_tokens_is_recovered(tmp_path: Path) -> None:
    turns = [
        turn("Working.", logged_tool(0)),
        turn("Part one", stop_reason="max_tokens"),
        turn("The whole answer."),
    ]
    run, requests = run_with(tmp_path, turns, "--output-format", "stream-json")
    assert run.returncode == 0, run.stderr
    assert requests[2].body["max_tokens"] > requests[1].body["max_tokens"]  # escalated
    lines = run.json_lines()
    said = run.assistant_texts()
    assert "Part one" not in said  # the cut answer was withheld, then replaced
    assert lines[-1]["result"] == "The whole answer."
    assert_paired(requests[-1])
    assert_each_tool_ran_once(tmp_path, 1)


def test_prompt_too_long_once_compacts_and_succeeds(tmp_path: Path) -> None:
    # big tool outputs, so that a summary really is smaller than the history it replaces
    big = [tool_use("Bash", {"command": f"echo {i} >> tool.log; seq 1 4000"}) for i in range(3)]
    turns = [turn(call) for call in big]
    # the rejected request's turn answers the compaction's summary request instead
    turns.append(turn("Summary: three echoes ran.", faults=[fault("prompt_too_long")]))
    turns.append(turn("Fits now."))
    run, requests = run_with(tmp_path, turns)
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "Fits now."
    assert len(requests[-1].body["messages"]) < len(requests[-2].body["messages"])
    assert_paired(requests[-1])
    assert_each_tool_ran_once(tmp_path, 3)


def test_malformed_tool_json_becomes_an_error_result(tmp_path: Path) -> None:
    bad = tool_use("Bash", raw_input='{"command": "echo 0 >> tool.log"')
    run, requests = run_with(tmp_path, [turn(bad), turn("Recovered.")])
    assert run.returncode == 0, run.stderr
    (result,) = requests[1].body["messages"][-1]["content"]
    assert result["is_error"] and "not valid JSON" in str(result["content"])
    assert not (tmp_path / "tool.log").exists()


def test_inputs_that_do_not_fit_the_schema_reach_the_model_as_errors_naming_the_field(
    tmp_path: Path,
) -> None:
    """Each wrong field named, with what was expected; nothing ran; the model goes on."""
    calls = [
        tool_use("Bash", {"command": "echo 0 >> tool.log", "timeout": "soon"}),
        tool_use("Bash", {"cmd": "echo 1 >> tool.log"}),
        tool_use("Read", {"file_path": "tool.log", "limit": 0}),
    ]
    run, requests = run_with(tmp_path, [turn(*calls), turn("Recovered.")])
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "Recovered."
    results = requests[1].body["messages"][-1]["content"]
    assert [r["is_error"] for r in results] == [True, True, True]
    texts = [str(r["content"]) for r in results]
    assert "Bash timeout: Input should be a valid integer" in texts[0]
    assert (
        "command: Field required" in texts[1] and "cmd: Extra inputs are not permitted" in texts[1]
    )
    assert "Read limit: Input should be greater than or equal to 1" in texts[2]
    assert not (tmp_path / "tool.log").exists()


def test_overload_storm_switches_to_the_fallback_model(tmp_path: Path) -> None:
    storm = fault("overloaded", times=50, model=MODEL)
    run, requests = run_with(tmp_path, two_turns([storm]), "--fallback-model", "claude-haiku-4-5")
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "All done."
    assert [r.body["model"] for r in requests[1:]] == [MODEL] * 3 + ["claude-haiku-4-5"]
    assert_paired(requests[-1])
    assert_each_tool_ran_once(tmp_path, 1)


def test_overload_storm_without_fallback_gives_up_clearly(tmp_path: Path) -> None:
    storm = fault("overloaded", times=50)
    run, requests = run_with(tmp_path, two_turns([storm]), env={"CODELOOP_MAX_RETRIES": "3"})
    assert run.returncode == 1
    assert len(requests) == 1 + 3
    message = run.stderr.strip().splitlines()[-1]
    assert message.startswith("codeloop:") and "529" in message
    assert "Traceback" not in run.stderr
    assert run.json()["is_error"] is True


def test_with_autocompact_off_a_full_window_ends_at_the_blocking_limit(tmp_path: Path) -> None:
    from codeloop.testing.scenario import UsageSpec

    turns = [
        turn(logged_tool(0), usage=UsageSpec(input_tokens=90_000)),
        turn("never asked for"),
    ]
    env = {"CODELOOP_CONTEXT_WINDOW": "100000", "CODELOOP_AUTOCOMPACT": "0"}
    run, requests = run_with(tmp_path, turns, env=env)
    assert run.returncode == 1
    assert run.json()["terminal_reason"] == "blocking_limit"
    assert len(requests) == 1  # it stopped instead of sending a request that cannot fit
    assert "autocompact off" in run.stderr
