"""Lines that only set a variable, describe a program, or transform a value run unasked; their
neighbours that change what later commands do, run a viewer, or evaluate code still ask.

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


@pytest.mark.parametrize(
    "command",
    ["FOO=bar", "A=1 B=2", "a[1]=x", "A+=x", "top=$(git rev-parse --show-toplevel)", "x=1; ls"],
)
def test_a_variable_set_on_its_own_runs_unasked(world: tuple[Path, Path], command: str) -> None:
    for mode in ("default", "plan"):
        assert decide(world, command, mode) == "allow", mode


@pytest.mark.parametrize(
    "command",
    [
        "HOME=/tmp",  # where `cd` and `~` go, which config git reads
        "IFS=/",
        "PWD=/",
        "OLDPWD=/etc",
        "CDPATH=/etc",
        "POSIXLY_CORRECT=1",
        "LC_ALL=C",
        "TMPDIR=/tmp",
        "SSH_ASKPASS=./x",  # when exported already: what later programs run or trust
        "https_proxy=http://127.0.0.1:1",
        "CURL_CA_BUNDLE=./ca.pem",
        "GIT_DIR=.",
        "NODE_OPTIONS=--require=./x.js",
    ],
)
def test_a_variable_bash_or_programs_read_is_asked(world: tuple[Path, Path], command: str) -> None:
    assert decide(world, command) == "ask"
    assert decide(world, f"{command}; git status", allow="Bash(git status:*)") == "ask"


def test_a_variable_the_line_sets_and_then_expands_is_asked(world: tuple[Path, Path]) -> None:
    """`$X` is judged as any word, so a value set in the line would be a path never checked."""
    leaks = {
        "D=.ssh; cat ~/$D/id_rsa": "PRIVATE KEY",
        "A=.env; cat $A": "canary",
        'A=.env; head "${A}"': "canary",
    }
    for command, secret in leaks.items():
        assert secret in bash(world, command), command  # the control: it does read it
        assert decide(world, command) == "ask", command
    assert decide(world, "A=x; echo $A") == "ask"  # the same mechanism: no value is followed
    assert decide(world, "x=$(rm f)") == "ask"  # what a value runs is judged as a command


# Known commands describing themselves, and expansions that only reshape a value.
USAGE = [
    "git --help",
    "git -h",
    "git help",
    "git help -a",
    "git help --guides",
    "git commit -h",
    "git push -h",
    "git status -h",
    "sort --help",
    "sed --version",
    "awk --version",
    "find --help",
    "rg --version",
    "printenv --help",
    "env --help",
    "timeout --version",
    "xargs --help",
    "command --help",
]
TRANSFORMS = [
    'echo "${HOME@Q}"',
    "echo ${HOME@E} ${HOME@A} ${HOME@a} ${HOME@U} ${HOME@u} ${HOME@L}",
    "echo ${HOME,,} ${HOME^^} ${HOME^} ${#HOME}",
    'echo "${@@Q}" "${*@Q}" "${1@Q}"',
]


@pytest.mark.parametrize("command", [*USAGE, *TRANSFORMS])
def test_lines_that_only_print_run_unasked(world: tuple[Path, Path], command: str) -> None:
    assert decide(world, command) == "allow"


@pytest.mark.parametrize(
    "command",
    [
        "python3 --version",  # may be a shim that reads the project (pyenv, asdf, rustup)
        "cargo --version",
        "nohup --help",
        "sudo --version",
        "sort --help -o OUT",
        "git --help log",
        "git help log",
        "git help -m log",
        "git frobnicate -h",  # an alias in the repository's config could be anything
        "git commit -h -m x",
    ],
)
def test_usage_neighbours_that_run_or_write_are_asked(
    world: tuple[Path, Path], command: str
) -> None:
    assert decide(world, command) == "ask"


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


def test_prompt_expansion_runs_the_substitution_in_the_value(world: tuple[Path, Path]) -> None:
    repo, _ = world
    command = 'x="\\$(touch expanded)"; echo "${x@P}"'
    bash(world, command)
    assert (repo / "expanded").exists()  # the control: bash ran the `$(...)` inside x
    assert decide(world, 'echo "${X@P}"') == "ask"
    assert decide(world, 'echo "${GITHUB_TOKEN@Q}"') == "ask"  # a secret stays one
