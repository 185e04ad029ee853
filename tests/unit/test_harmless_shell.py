"""Expansions that only transform a value, and git's own usage, run unasked; their neighbours
that evaluate code or open a viewer the configuration names still ask.

Each asking neighbour has a control that runs it for real and shows the effect the check is
guarding against (a file read, a marker made), so the expectation is not taken on faith.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from codeloop.permissions.policy import Policy
from codeloop.tools.base import Workspace
from codeloop.tools.registry import default_tools

BASH = default_tools()["Bash"]


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path]:
    """A git repository holding a `.env`, and a home with a private key."""
    repo, home = tmp_path.resolve() / "repo", tmp_path.resolve() / "home"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / "f").write_text("a\n")
    (repo / ".env").write_text("TOKEN=canary\n")
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    return repo, home


def decide(world: tuple[Path, Path], command: str, mode: str = "default", allow: str = "") -> str:
    repo, home = world
    policy = Policy(mode, [allow] if allow else [], roots=[repo], home=home)  # type: ignore[arg-type]
    return policy.decide(BASH, BASH.parse({"command": command}), Workspace(cwd=repo)).behavior


def bash(world: tuple[Path, Path], command: str) -> str:
    repo, home = world
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=repo,
        env={"PATH": os.environ["PATH"], "HOME": str(home)},
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout + done.stderr


def test_git_help_with_a_topic_runs_the_viewer_the_config_names(
    world: tuple[Path, Path],
) -> None:
    repo, _ = world
    marker = repo.parent / "viewer-ran"
    for key, value in (("man.viewer", "x"), ("man.x.cmd", f"touch {marker}")):
        subprocess.run(["git", "config", key, value], cwd=repo, check=True)
    for command in ("git --help", "git -h", "git help -a", "git commit -h", "git status -h"):
        bash(world, command)
        assert not marker.exists(), command
        assert decide(world, command) == "allow", command
    for command in ("git log --help", "git help log", "git commit --help"):
        bash(world, command)
        assert marker.exists(), command  # the control: the repository's viewer ran
        marker.unlink()
        assert decide(world, command) == "ask", command


@pytest.mark.parametrize(
    "command",
    [
        'echo "${HOME@Q}"',
        "echo ${HOME@E} ${HOME@A} ${HOME@a} ${HOME@U} ${HOME@u} ${HOME@L}",
        "echo ${HOME,,} ${HOME^^} ${HOME^} ${#HOME}",
        'echo "${@@Q}" "${*@Q}" "${1@Q}"',
    ],
)
def test_expansion_operators_that_only_transform_run_unasked(
    world: tuple[Path, Path], command: str
) -> None:
    assert decide(world, command) == "allow"


def test_prompt_expansion_runs_the_substitution_in_the_value(world: tuple[Path, Path]) -> None:
    repo, _ = world
    command = 'x="\\$(touch expanded)"; echo "${x@P}"'
    bash(world, command)
    assert (repo / "expanded").exists()  # the control: bash ran the `$(...)` inside x
    assert decide(world, 'echo "${X@P}"') == "ask"
    assert decide(world, 'echo "${GITHUB_TOKEN@Q}"') == "ask"  # a secret stays one
