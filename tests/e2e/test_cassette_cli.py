"""Record a `codeloop -p` session against a model server, replay it in a fresh process with
no server and no key, in another directory; then tamper with the cassette."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.cli import CliRun, provider_env, run_cli

SCRIPT = Scenario(
    turns=(
        turn("Looking.", tool_use("Glob", {"pattern": "*.py"})),
        turn("Reading.", tool_use("Read", {"file_path": "app.py"})),
        turn("app.py prints a greeting."),
    )
)
PROMPT = ["-p", "What does app.py do?", "--output-format", "stream-json"]
VOLATILE = {"session_id", "uuid", "duration_ms", "duration_api_ms", "ttft_ms"}


def project(root: Path) -> Path:
    root.mkdir()
    (root / "app.py").write_text("print('hello')\n")
    return root


def comparable(run: CliRun, cwd: Path) -> list[Any]:
    """The stream-json lines without what differs between any two runs."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in VOLATILE}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value.replace(str(cwd), "<cwd>") if isinstance(value, str) else value

    return [strip(line) for line in run.json_lines()]


def record(tmp_path: Path) -> tuple[CliRun, Path, Path]:
    cwd, cassette = project(tmp_path / "recorded"), tmp_path / "session.jsonl"
    with FakeModelServer(SCRIPT) as server:
        env = provider_env(server, "openai", tmp_path) | {"CODELOOP_RECORD": str(cassette)}
        run = run_cli([*PROMPT, "--model", "openai:gpt-6.2-sol"], cwd=cwd, env=env)
    assert run.returncode == 0, run.stderr
    return run, cwd, cassette


def replay(tmp_path: Path, cassette: Path, name: str) -> tuple[CliRun, Path]:
    cwd = project(tmp_path / name)
    env = provider_env(None, "none", tmp_path) | {"CODELOOP_REPLAY": str(cassette)}
    return run_cli(PROMPT, cwd=cwd, env=env), cwd


def test_a_recorded_session_replays_identically_with_no_server(tmp_path: Path) -> None:
    recorded, recorded_cwd, cassette = record(tmp_path)
    replayed, replayed_cwd = replay(tmp_path, cassette, "elsewhere")
    assert replayed.returncode == 0, replayed.stderr
    assert comparable(replayed, replayed_cwd) == comparable(recorded, recorded_cwd)
    lines = replayed.json_lines()
    assert [line["type"] for line in lines].count("assistant") == 3
    assert lines[-1]["result"] == "app.py prints a greeting."
    glob_result = lines[2]["message"]["content"][0]["content"]
    assert str(replayed_cwd / "app.py") in glob_result  # the tools ran here, for real


def test_a_tampered_request_is_reported_with_its_first_differing_field(tmp_path: Path) -> None:
    _, _, cassette = record(tmp_path)
    header, first, second, third = cassette.read_text().splitlines()
    call = json.loads(second)
    call["request"]["messages"][0]["content"][0]["text"] = "What does util.py do?"
    cassette.write_text("\n".join([header, first, json.dumps(call), third]) + "\n")

    replayed, _ = replay(tmp_path, cassette, "tampered")
    assert replayed.returncode == 1
    (error,) = [line for line in replayed.stderr.splitlines() if line.startswith("codeloop:")]
    assert "request 2 differs from recorded call 2 at $.messages[0].content[0].text" in error
    assert '"What does util.py do?"' in error and '"What does app.py do?"' in error
    assert "Traceback" not in replayed.stderr
