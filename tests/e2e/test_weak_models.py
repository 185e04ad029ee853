"""A weak local model behind an OpenAI-compatible server, as a user of llama.cpp or Ollama
meets it, through the real CLI against the fake server's Chat Completions wire: its slips run,
its repetition ends the run with a reason, and its run has a turn limit by default."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codeloop.testing.fake_server import FakeModelServer, RecordedRequest
from codeloop.testing.scenario import Scenario, Turn, tool_use, turn
from tests.e2e.cli import CliRun, provider_env, run_cli

# A model the catalog does not know, as a local server names it.
MODEL = "openai:qwen2.5-coder-1.5b-instruct"


def cli(tmp: Path, server: FakeModelServer, *args: str) -> CliRun:
    tools = ["--allowedTools", "Bash", "Read", "Glob"]
    return run_cli(
        ["-p", "go", "--model", MODEL, *tools, "--output-format", "json", *args],
        cwd=tmp,
        env=provider_env(server, "openai", tmp) | {"CODELOOP_HOME": str(tmp / "home")},
    )


def serve(tmp: Path, turns: list[Turn], *args: str) -> tuple[CliRun, list[RecordedRequest]]:
    with FakeModelServer(Scenario(turns=tuple(turns))) as server:
        run = cli(tmp, server, *args)
        return run, server.requests


def sent_calls(request: RecordedRequest) -> list[str]:
    return [
        call["function"]["name"]
        for message in request.body["messages"]
        for call in message.get("tool_calls") or ()
    ]


def transcript_calls(home: Path) -> list[str]:
    names = []
    for path in home.rglob("*.jsonl"):
        for line in path.read_text().splitlines():
            entry: dict[str, Any] = json.loads(line)
            content = (entry.get("message") or {}).get("content")
            for block in content if isinstance(content, list) else ():
                if block.get("type") == "tool_use":
                    names.append(block["name"])
    return names


def test_a_weak_models_slips_run_and_its_written_call_is_executed(tmp_path: Path) -> None:
    turns = [
        # `bash` for Bash, and arguments with a trailing comma
        turn(tool_use("bash", raw_input='{"command": "echo one > a.txt",}')),
        # the next call written as a ```json block in the text
        turn('Now I read it.\n```json\n{"name": "Read", "arguments": {"file_path": "a.txt"}}\n```'),
        turn("a.txt says one."),
    ]
    run, requests = serve(tmp_path, turns)
    assert run.returncode == 0, run.stderr
    result = run.json()
    assert result["subtype"] == "success" and result["result"] == "a.txt says one."
    assert (tmp_path / "a.txt").read_text() == "one\n"
    assert len(requests) == 3
    # The server gets the calls back as tool calls, under the tools' real names.
    assert sent_calls(requests[2]) == ["Bash", "Read"]
    tool_messages = [m for m in requests[2].body["messages"] if m["role"] == "tool"]
    wrote, read = (m["content"] for m in tool_messages)
    assert not wrote.startswith("Error") and read.strip().endswith("one")
    assert transcript_calls(tmp_path / "home") == ["Bash", "Read"]


def test_a_repeated_failing_call_ends_the_run_naming_the_repetition(tmp_path: Path) -> None:
    turns = [turn(tool_use("Bash", {"command": "cat missing.txt"})) for _ in range(12)]
    run, requests = serve(tmp_path, turns)
    assert run.returncode == 1
    result = run.json()
    assert result["subtype"] == "error_during_execution" and result["is_error"]
    assert result["terminal_reason"] == "repeated_calls"
    (error,) = result["errors"]
    assert "repeated the same tool call 6 times" in error and "cat missing.txt" in error
    assert len(requests) == 6  # six identical calls executed, at most nine
    reminded = [
        i
        for i, request in enumerate(requests)
        if "same call" in json.dumps(request.body["messages"][-1])
    ]
    assert reminded[0] == 3  # read before the fourth call


def test_an_unknown_model_stops_at_the_default_turn_limit(tmp_path: Path) -> None:
    turns = [turn(tool_use("Glob", {"pattern": f"*.{i}"})) for i in range(60)]
    run, requests = serve(tmp_path, turns)
    result = run.json()
    assert result["subtype"] == "error_max_turns", run.stderr
    assert len(requests) == 50 and "Reached the limit of 50 turns" in result["errors"][0]


def test_the_turn_limit_is_the_users_to_set(tmp_path: Path) -> None:
    turns = [turn(tool_use("Glob", {"pattern": f"*.{i}"})) for i in range(10)]
    run, requests = serve(tmp_path, turns, "--max-turns", "3")
    assert run.json()["subtype"] == "error_max_turns" and len(requests) == 3
    settings = tmp_path / ".codeloop" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"maxTurns": 4}))
    run, requests = serve(tmp_path, turns)
    assert run.json()["subtype"] == "error_max_turns" and len(requests) == 4
