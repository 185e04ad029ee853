"""Malformed safety settings fail closed, through every face of the real CLI (and the Python
API): a deny rule written as a string still denies, and a restriction that cannot be read stops
the session before any model is asked, naming the file and the key, without a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from codeloop.api import Client
from codeloop.errors import UnsafeSettingsError
from codeloop.options import Options
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.cli import PROVIDER_MODELS, provider_env, run_cli
from tests.e2e.tmux import Terminal

MODEL = PROVIDER_MODELS["anthropic"]
BROKEN_DENY = {"permissions": {"allow": ["Bash"], "deny": {"Bash(rm:*)": True}}}


def rm_victim() -> Scenario:
    return Scenario(turns=(turn(tool_use("Bash", {"command": "rm -f victim.txt"})), turn("Ok.")))


def project_with_victim(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    (project / "victim.txt").write_text("precious\n")
    return project


def test_a_deny_rule_written_as_a_string_denies(tmp_path: Path) -> None:
    project = project_with_victim(tmp_path)
    settings = project / ".claude" / "settings.json"
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash"], "deny": "Bash(rm:*)"}}))
    scenario = rm_victim()
    with FakeModelServer(scenario) as server:
        run = run_cli(
            ["-p", "clean up", "--model", MODEL, "--output-format", "json"],
            cwd=project,
            env=provider_env(server, "anthropic", tmp_path / "home"),
        )
        requests = list(server.requests)
    assert run.returncode == 0, run.stderr
    assert (project / "victim.txt").read_text() == "precious\n"
    result = requests[1].body["messages"][-1]["content"][0]
    assert result["is_error"] is True and "Bash(rm:*)" in json.dumps(result["content"])
    assert f"{settings}: permissions.deny" in run.stderr
    assert 'read as the list ["Bash(rm:*)"]' in run.stderr
    (denial,) = run.json()["permission_denials"]
    assert denial["tool_input"]["command"] == "rm -f victim.txt"


def place(tmp_path: Path, project: Path, where: str) -> tuple[Path, list[str], dict[str, str]]:
    """The broken file in one of the places settings come from: its path, the flags and the
    environment that make codeloop read it."""
    env = {"CODELOOP_MANAGED_DIR": str(tmp_path / "managed")}
    paths = {
        "project": (project / ".claude" / "settings.json", []),
        "user": (tmp_path / "home" / ".claude" / "settings.json", []),
        "local": (project / ".codeloop" / "settings.local.json", []),
        "managed": (tmp_path / "managed" / "managed-settings.d" / "10-org.json", []),
        "flag": (tmp_path / "ci.json", ["--settings", str(tmp_path / "ci.json")]),
    }
    path, flags = paths[where]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(BROKEN_DENY))
    return path, flags, env


def assert_refused(run_stderr: str, returncode: int, path: Path | str, key: str) -> None:
    assert returncode == 2, run_stderr
    assert f"{path}: {key}" in run_stderr
    assert "Traceback" not in run_stderr and "a bug in codeloop" not in run_stderr


@pytest.mark.parametrize("where", ["project", "user", "local", "managed", "flag"])
@pytest.mark.parametrize("output", ["text", "json", "stream-json"])
def test_a_deny_of_another_wrong_type_stops_a_headless_run(
    tmp_path: Path, where: str, output: str
) -> None:
    project = project_with_victim(tmp_path)
    path, flags, extra = place(tmp_path, project, where)
    scenario = rm_victim()
    with FakeModelServer(scenario) as server:
        run = run_cli(
            ["-p", "clean up", "--model", MODEL, "--output-format", output, "--verbose", *flags],
            cwd=project,
            env=provider_env(server, "anthropic", tmp_path / "home") | extra,
        )
        assert server.requests == []
    assert_refused(run.stderr, run.returncode, path, "permissions.deny")
    assert "expected a list of rule strings, got an object" in run.stderr
    assert (project / "victim.txt").exists()


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('{"permissions": {"allow": ["Bash"], "deny": 5}}', "permissions.deny"),
        ('{"permissions": {"allow": ["Bash"], "deny": null}}', "permissions.deny"),
        ('{"permissions": {"allow": ["Bash"], "deny": ["bash(rm:*)"]}}', "permissions.deny"),
        ('{"permissions": {"allow": ["Bash"], "deny": ["Bash(rm:*"]}}', "permissions.deny[0]"),
        ('{"permissions": {"allow": ["Bash"], "Deny": ["Bash(rm:*)"]}}', "permissions.Deny"),
        ('{"permissions": {"allow": ["Bash"], "deny": ["Bash(rm:*)"]', "invalid JSON"),
        ('{"permissions": {"allow": ["Bash"]}, "hooks": {"PreToolUse": 1}}', "hooks.PreToolUse"),
    ],
)
def test_other_damage_to_a_restriction_stops_the_run_too(
    tmp_path: Path, text: str, named: str
) -> None:
    project = project_with_victim(tmp_path)
    settings = project / ".claude" / "settings.json"
    settings.write_text(text)
    with FakeModelServer(rm_victim()) as server:
        run = run_cli(
            ["-p", "clean up", "--model", MODEL],
            cwd=project,
            env=provider_env(server, "anthropic", tmp_path / "home"),
        )
        assert server.requests == []
    assert run.returncode == 2, run.stderr
    assert str(settings) in run.stderr and named in run.stderr
    assert "Traceback" not in run.stderr
    assert (project / "victim.txt").exists()


def test_an_inline_settings_flag_is_named_as_such(tmp_path: Path) -> None:
    project = project_with_victim(tmp_path)
    run = run_cli(
        ["-p", "hi", "--model", MODEL, "--settings", '{"sandbox": {"enabled": "yes"}}'],
        cwd=project,
        env=provider_env(None, "anthropic", tmp_path / "home"),
    )
    assert_refused(run.stderr, run.returncode, "--settings", "sandbox.enabled")


def test_the_interactive_face_refuses_to_start(tmp_path: Path) -> None:
    project = project_with_victim(tmp_path)
    path, _, _ = place(tmp_path, project, "project")
    run = run_cli(
        ["--model", MODEL],  # no -p, stdin not a terminal: the line-by-line interactive UI
        cwd=project,
        env=provider_env(None, "anthropic", tmp_path / "home"),
        stdin="rm -f victim.txt\n",
    )
    assert_refused(run.stderr, run.returncode, path, "permissions.deny")


def test_the_terminal_ui_shows_the_error_and_exits(tmp_path: Path) -> None:
    project = project_with_victim(tmp_path)
    path, _, _ = place(tmp_path, project, "project")
    env = provider_env(None, "anthropic", tmp_path / "home")
    with Terminal(["--model", MODEL], cwd=project, env=env, width=200, height=40) as term:
        assert term.exit_status() == 2
        screen = "".join(term.history().splitlines())  # the message, however it wrapped
    assert f"{path}: permissions.deny" in screen
    assert "Traceback" not in screen


def test_the_sdk_protocol_answers_initialize_with_the_error(tmp_path: Path) -> None:
    project = project_with_victim(tmp_path)
    path, _, _ = place(tmp_path, project, "project")
    streams = ("--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
    proc = subprocess.Popen(
        [sys.executable, "-m", "codeloop", "--model", MODEL, *streams],
        cwd=project,
        env=provider_env(None, "anthropic", tmp_path / "home"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    initialize = {"subtype": "initialize"}
    proc.stdin.write(
        json.dumps({"type": "control_request", "request_id": "init", "request": initialize})
    )
    proc.stdin.write("\n")
    proc.stdin.flush()
    response = json.loads(proc.stdout.readline())  # the SDK waits for it with stdin open
    _, stderr = proc.communicate(timeout=120)
    assert response["type"] == "control_response"
    assert response["response"]["subtype"] == "error"
    assert response["response"]["request_id"] == "init"
    assert f"{path}: permissions.deny" in response["response"]["error"]
    assert_refused(stderr, proc.returncode, path, "permissions.deny")


async def test_the_python_api_raises_the_error(tmp_path: Path) -> None:
    project = project_with_victim(tmp_path)
    path, _, _ = place(tmp_path, project, "project")
    env = provider_env(None, "anthropic", tmp_path / "home")
    client = Client(Options(cwd=project, env=env, model=MODEL))
    with pytest.raises(UnsafeSettingsError) as caught:
        await client.connect()
    assert f"{path}: permissions.deny" in str(caught.value)
