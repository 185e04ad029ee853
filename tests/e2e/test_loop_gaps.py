"""Issue 13's gaps, closed, through the real CLI against the fake server's wire format: a
refused image that no longer sticks, a summary that is retried, one budget for sub-agents too,
a sub-agent turn limit, a watchdog that keeps slow streams and drops silent ones, and a
terminal that never shows a discarded answer as final.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from codeloop.models.catalog import cost_usd
from codeloop.testing.fake_server import FakeModelServer, RecordedRequest
from codeloop.testing.history_check import history_problems
from codeloop.testing.scenario import (
    Scenario,
    Turn,
    UsageSpec,
    earlier_calls,
    fault,
    tool_use,
    turn,
    turn_usage,
)
from tests import needs
from tests.e2e.cli import CliRun, provider_env, run_cli

MODEL = "claude-sonnet-4-5"
# The smallest valid PNG: a 1×1 transparent pixel.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c63000100000500010d0a2db40000000049454e44ae426082"
)


def cli(
    tmp: Path,
    server: FakeModelServer,
    *args: str,
    env: dict[str, str] | None = None,
) -> CliRun:
    return run_cli(
        ["-p", *args, "--model", MODEL, "--allowedTools", "Bash", "--output-format", "json"],
        cwd=tmp,
        env=provider_env(server, "anthropic", tmp)
        | {"CODELOOP_HOME": str(tmp / "home")}
        | (env or {}),
    )


def blocks(request: RecordedRequest) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for message in request.body["messages"]:
        content = message["content"]
        for block in content if isinstance(content, list) else []:
            found.append(block)
            if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                found.extend(block["content"])
    return found


def images(request: RecordedRequest) -> int:
    return sum(b.get("type") == "image" for b in blocks(request))


def test_a_refused_image_does_not_stick_to_the_session(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(PNG)
    turns = [
        turn(tool_use("Read", {"file_path": "shot.png"})),
        turn("I could not look at it.", faults=[fault("media")]),
        turn("Hi!"),
    ]
    with FakeModelServer(Scenario(turns=tuple(turns))) as server:
        first = cli(tmp_path, server, "what is in shot.png?")
        assert first.returncode == 0, first.stderr
        assert first.json()["result"] == "I could not look at it."
        assert "removed 1 image(s) the API refused" in first.stderr
        # a later prompt of the same session, loaded from its transcript, is not refused again
        second = cli(tmp_path, server, "--continue", "forget the image; say hi")
        assert second.returncode == 0, second.stderr
        assert second.json()["result"] == "Hi!"
        requests = server.requests
    refused, retried, continued = requests[1], requests[2], requests[3]
    assert images(refused) == 1 and images(retried) == 0 and images(continued) == 0
    stub = "[image removed: the API refused it"
    assert any(stub in json.dumps(b) for b in blocks(continued))
    assert history_problems(continued.body["messages"]) == []


def test_a_529_on_the_summary_is_retried_and_nothing_is_lost(tmp_path: Path) -> None:
    turns = [
        *earlier_calls(),  # something for the summary to replace
        turn(
            tool_use("Bash", {"command": "echo ran >> tool.log; echo RESULT-42"}),
            usage=UsageSpec(input_tokens=90_000),
        ),
        turn("1. User requests and intent: run it.", faults=[fault("overloaded")]),  # summary
        turn("Done."),
    ]
    env = {"CODELOOP_CONTEXT_WINDOW": "100000"}
    with FakeModelServer(Scenario(turns=tuple(turns))) as server:
        run = cli(tmp_path, server, "go", env=env)
        requests = server.requests
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "Done."
    assert [r.status for r in requests] == [200] * len(earlier_calls()) + [200, 529, 200, 200]
    assert "compacted the conversation (auto)" in run.stderr
    last = json.dumps(requests[-1].body["messages"])
    assert "1. User requests and intent: run it." in last  # the summary
    assert "RESULT-42" in last  # the latest turn, word for word
    assert '"go"' in last or "go" in [m["content"] for m in requests[-1].body["messages"]]
    assert (tmp_path / "tool.log").read_text() == "ran\n"
    assert history_problems(requests[-1].body["messages"]) == []


def task(i: int) -> Any:
    return tool_use("Task", {"description": f"job {i}", "prompt": f"do job {i}"})


def test_sub_agents_spend_from_one_budget(tmp_path: Path) -> None:
    spend = UsageSpec(input_tokens=7_000, output_tokens=10)  # $0.021 each
    turns: list[Turn] = [
        turn(task(1), task(2), task(3), usage=UsageSpec(input_tokens=2_000, output_tokens=10)),
        *[turn(f"report {i}", usage=spend) for i in (1, 2, 3)],
        turn("never: the budget is spent"),
    ]
    with FakeModelServer(Scenario(turns=tuple(turns))) as server:
        run = cli(tmp_path, server, "go", "--max-budget-usd", "0.05")
        requests = server.requests
    result = run.json()
    assert result["subtype"] == "error_max_budget_usd", run.stderr
    assert len(requests) == 4
    spent = sum(cost_usd(MODEL, turn_usage(t)) for t in turns[:4])
    assert result["total_cost_usd"] == round(spent, 6) and spent > 0.05


def test_a_runaway_sub_agent_ends_at_its_limit_and_the_parent_goes_on(tmp_path: Path) -> None:
    forever = [turn(tool_use("Bash", {"command": f"echo {i}"})) for i in range(3)]
    turns = [turn(task(1)), *forever, turn("The sub-agent gave up; I carry on.")]
    with FakeModelServer(Scenario(turns=tuple(turns))) as server:
        run = cli(tmp_path, server, "go", env={"CODELOOP_SUBAGENT_MAX_TURNS": "3"})
        requests = server.requests
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "The sub-agent gave up; I carry on."
    assert len(requests) == 5
    (result,) = requests[-1].body["messages"][-1]["content"]
    assert result["is_error"] and "Reached the limit of 3 turns" in json.dumps(result)


WATCHDOG = {"CODELOOP_STREAM_IDLE_TIMEOUT": "1", "CODELOOP_FIRST_EVENT_TIMEOUT": "4"}


def test_a_stream_of_pings_is_not_abandoned(tmp_path: Path) -> None:
    pings = fault("stall", after=2, seconds=3, ping_every=0.25)  # 3 s of pings, idle limit 1 s
    with FakeModelServer([turn("Thought hard.", faults=[pings])]) as server:
        run = cli(tmp_path, server, "go", env=WATCHDOG)
        requests = server.requests
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "Thought hard."
    assert len(requests) == 1


def test_a_silent_stream_is_abandoned_in_the_configured_time(tmp_path: Path) -> None:
    silent = fault("stall", after=2, seconds=30)
    with FakeModelServer([turn("Answer.", faults=[silent])]) as server:
        run = cli(tmp_path, server, "go", env=WATCHDOG)
        first, second = server.requests
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "Answer."
    waited = second.arrived - first.arrived
    assert 1.0 <= waited < 30  # the idle limit, not the stall, decided
    assert "no data for 1 s" in run.stderr


def test_a_slow_first_event_gets_the_longer_wait(tmp_path: Path) -> None:
    late = fault("stall", after=0, seconds=1.5)  # past the idle limit, within the first wait
    with FakeModelServer([turn("Late.", faults=[late])]) as server:
        run = cli(tmp_path, server, "go", env=WATCHDOG)
        assert run.returncode == 0, run.stderr
        assert len(server.requests) == 1
    silent = fault("stall", after=0, seconds=30)
    with FakeModelServer([turn("Answer.", faults=[silent])]) as server:
        run = cli(tmp_path, server, "go", env=WATCHDOG)
        first, second = server.requests
    assert run.returncode == 0, run.stderr
    assert "no answer began within 4 s" in run.stderr
    # the first wait, not the 1 s idle limit (nor the stall) decided; the clock starts before
    # the request is sent, so the gap between arrivals may be short of 4 s by that time
    assert 3.0 <= second.arrived - first.arrived < 30


def _tmux() -> str:
    found = shutil.which("tmux")
    if found is None:
        needs.missing("tmux is not installed")
    assert found is not None
    return found


def test_text_mode_never_shows_a_discarded_answer_as_final(tmp_path: Path) -> None:
    """On a real terminal (tmux): an answer streamed, then withheld (a larger output limit) and
    one cut mid-stream are both taken back; only the final answer stays on screen."""
    tmux = _tmux()
    turns = [
        turn("DISCARDED-ONE " * 20, chunk_chars=7, stop_reason="max_tokens"),
        # cut after its first four pieces: the resent request streams the whole answer
        turn("The final answer.", chunk_chars=3, faults=[fault("cut", after=6)]),
    ]
    socket = f"codeloop-test-{os.getpid()}-{time.monotonic_ns()}"
    with FakeModelServer(Scenario(turns=tuple(turns))) as server:
        env = provider_env(server, "anthropic", tmp_path) | {"CODELOOP_HOME": str(tmp_path / "h")}
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        command = (
            f"env -i {exports} {shlex.quote(sys.executable)} -m codeloop -p go --model {MODEL}; "
            f"echo EXIT=$?; sleep 30"
        )
        subprocess.run(
            [tmux, "-L", socket, "new-session", "-d", "-x", "80", "-y", "24", command],
            cwd=tmp_path,
            check=True,
        )
        try:
            screen = _wait_for_screen(tmux, socket, "EXIT=")
        finally:
            subprocess.run([tmux, "-L", socket, "kill-server"], check=False)
    assert "EXIT=0" in screen, screen
    assert screen.count("The final") == 1 and "The final answer." in screen, screen
    assert "DISCARDED" not in screen, screen


def _wait_for_screen(tmux: str, socket: str, marker: str, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = subprocess.run(
            [tmux, "-L", socket, "capture-pane", "-p"], capture_output=True, text=True
        ).stdout
        if marker in screen:
            return screen
        time.sleep(0.1)
    raise AssertionError(f"the run did not finish; the screen:\n{screen}")
