"""`codeloop -p --sandbox` (and the settings key) confine Bash for real."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codeloop.shell.sandbox import probe
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.cli import PROVIDER_MODELS, provider_env, run_cli


@pytest.fixture(autouse=True)
def bwrap() -> None:
    found, why = probe()
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI installs bubblewrap, but: {why}")
        pytest.skip(why)


def run_escape(tmp_path: Path, *flags: str) -> tuple[list[str], Path]:
    work = tmp_path / "work"
    work.mkdir()
    outside = tmp_path / "outside.txt"
    # `bash -c` hides the redirection from the permission check, so only the sandbox stops it.
    escape = tool_use("Bash", {"command": f"bash -c 'echo escaped > {outside}'; touch inside"})
    with FakeModelServer(Scenario(turns=(turn(escape), turn("done")))) as server:
        run = run_cli(
            [
                "-p",
                "go",
                "--model",
                PROVIDER_MODELS["anthropic"],
                "--output-format",
                "json",
                "--permission-mode",
                "bypassPermissions",
                *flags,
            ],
            cwd=work,
            env=provider_env(server, "anthropic", tmp_path),
        )
        requests = server.requests
    assert run.returncode == 0, run.stderr
    result = requests[1].body["messages"][-1]["content"][0]
    return [str(result["content"]), str(result.get("is_error"))], outside


def test_sandbox_flag_keeps_writes_inside_the_workspace(tmp_path: Path) -> None:
    result, outside = run_escape(tmp_path, "--sandbox")
    assert not outside.exists()
    assert (tmp_path / "work" / "inside").exists()
    assert "Read-only file system" in result[0]


def test_sandbox_setting_does_the_same(tmp_path: Path) -> None:
    _, outside = run_escape(tmp_path, "--settings", '{"sandbox": {"enabled": true}}')
    assert not outside.exists()


def test_without_the_sandbox_bypass_mode_lets_it_through(tmp_path: Path) -> None:
    _, outside = run_escape(tmp_path)
    assert outside.read_text() == "escaped\n"
