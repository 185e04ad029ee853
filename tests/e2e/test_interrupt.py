"""Ctrl+C on a headless run while three tools are running: every call answered, exit 130."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.cli import provider_env


def test_sigint_while_three_tools_run(tmp_path: Path) -> None:
    calls = [tool_use("Bash", {"command": f"sleep 60 # {i}"}) for i in range(3)]
    scenario = Scenario(turns=(turn("Waiting.", *calls), turn("never reached")))
    with FakeModelServer(scenario) as server:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "codeloop",
                "-p",
                "go",
                "--model",
                "claude-sonnet-4-5",
                "--output-format",
                "stream-json",
            ],
            cwd=tmp_path,
            env=provider_env(server, "anthropic", tmp_path),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        lines = []
        for raw in proc.stdout:  # the tools start as their blocks stream, before this line
            lines.append(json.loads(raw))
            if lines[-1]["type"] == "assistant":
                break
        proc.send_signal(signal.SIGINT)
        rest, stderr = proc.communicate(timeout=30)
        requests = server.requests
    lines += [json.loads(line) for line in rest.splitlines() if line.strip()]
    assert proc.returncode == 130, stderr
    user_lines = [line for line in lines if line["type"] == "user"]
    (results_line,) = user_lines
    results = results_line["message"]["content"]
    assert len(results) == 3
    assert all(r["type"] == "tool_result" and r.get("is_error") for r in results)
    result = lines[-1]
    assert result["type"] == "result" and result["is_error"] is True
    assert result["terminal_reason"] == "aborted_tools"
    assert len(requests) == 1  # it stopped instead of going on
    assert "Traceback" not in stderr
