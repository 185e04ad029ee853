"""ripgrep's search is the oracle: a line that runs unasked never prints the credential.

A workspace holds a `.env` with a canary token (and a home with `~/.ssh`). Each rg line runs for
real, in several workspaces whose ignore files do or do not select `.env` again, and is decided
by the policy: whenever ripgrep's output shows the canary, the verdict must not be allow. The
everyday searches (`rg PATTERN`, `rg -g '*.py'`, `rg -t py`) must run unasked where ripgrep
skips the file, which they did not before (a `.env` beside the files made every search ask).
Where ripgrep cannot list its walk, every search of a tree holding a credential asks.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from codeloop.permissions.policy import Policy
from codeloop.tools.base import Workspace
from codeloop.tools.registry import default_tools
from tests import needs

BASH = default_tools()["Bash"]
CANARY = "canary-5e1f"
needs.program("rg", "the verdicts are checked against what ripgrep prints")

# Workspaces: name -> files beside `.env` (path -> text). Ignore files that hold a `!pattern`
# selecting `.env` make ripgrep read it without any flag.
WORLDS: dict[str, dict[str, str]] = {
    "plain": {},
    "ignore selects it": {".ignore": "!.env\n"},
    "rgignore selects it": {".rgignore": "!.e*\n"},
    "gitignore selects it": {".gitignore": "*.log\n!.env\n"},
    "git exclude selects it": {".git/info/exclude": "!/.env\n"},
    "parent ignore selects it": {"../.ignore": "!.env\n"},
    "negations elsewhere": {".gitignore": "build/\n!build/keep\n!.gitkeep\n!*.py\n"},
}
LINES = [
    "rg TOKEN",
    "rg -n TOKEN",
    "rg -l TOKEN",
    "rg -c TOKEN",
    "rg TOKEN .",
    "rg TOKEN src",
    "rg -e TOKEN",
    "rg -e TOKEN -- .",
    "rg -i token",
    "rg -r X TOKEN",
    "rg --max-depth 1 TOKEN",
    "rg -g '*.py' TOKEN",
    "rg -g '!*.py' TOKEN",
    "rg -t py TOKEN",
    "rg -t sh TOKEN",
    "rg -T py TOKEN",
    "rg --files",
    "rg --hidden TOKEN",
    "rg -. TOKEN",
    "rg -uu TOKEN",
    "rg -u -u TOKEN",
    "rg --hidden --no-hidden TOKEN",
    "rg --no-ignore TOKEN",
    "rg -L TOKEN",
    "rg -g .env TOKEN",
    "rg -g '*' TOKEN",
    "rg -g '**' TOKEN",
    "rg -g '*env' TOKEN",
    "rg -g '?env' TOKEN",
    "rg -g '[.]env' TOKEN",
    "rg -g '{.env,x}' TOKEN",
    "rg -g '**/.env' TOKEN",
    "rg -g '/.env' TOKEN",
    "rg --iglob .ENV TOKEN",
    "rg --glob-case-insensitive -g .ENV TOKEN",
    "rg --type-add 'e:*.env' -t e TOKEN",
    "rg --ignore-file src/app.py TOKEN",
    "rg TOKEN .env",
    "rg TOKEN ./.env",
    "rg -e TOKEN -- .env",
]


def world(root: Path, files: dict[str, str]) -> tuple[Path, Path]:
    repo = root / "ws" / "repo"
    (repo / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / ".env").write_text(f"TOKEN={CANARY}\n")
    (repo / "src" / "app.py").write_text("TOKEN = read_env()\n")
    (repo / "notes.md").write_text("set TOKEN in .env\n")
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    home = root / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(f"TOKEN={CANARY}\n")
    return repo, home


def decide(repo: Path, home: Path, command: str) -> str:
    policy = Policy("default", roots=[repo], home=home)
    return policy.decide(BASH, BASH.parse({"command": command}), Workspace(cwd=repo)).behavior


def run(cwd: Path, home: Path, command: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RIPGREP", "XDG", "GIT"))}
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env | {"HOME": str(home)},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    return done.stdout + done.stderr


@pytest.mark.parametrize("name", list(WORLDS))
def test_no_line_that_prints_the_credential_runs_unasked(tmp_path: Path, name: str) -> None:
    repo, home = world(tmp_path, WORLDS[name])
    leaks, unasked = [], []
    for command in LINES:
        verdict = decide(repo, home, command)
        leaked = CANARY in run(repo, home, command)
        if leaked and verdict == "allow":
            leaks.append(command)
        if verdict == "allow":
            unasked.append(command)
        else:
            assert verdict == "ask", command
    assert leaks == []
    if name in ("plain", "negations elsewhere"):  # ripgrep skips .env: searches run
        assert {"rg TOKEN", "rg -g '*.py' TOKEN", "rg -t py TOKEN", "rg --files"} <= set(unasked)
    else:  # an ignore file selects .env: every search that reads it asks
        assert "rg TOKEN" not in unasked


def test_the_lines_do_reach_the_credential_when_they_run(tmp_path: Path) -> None:
    """The control: the lines that must ask really read `.env` (so the test above can fail)."""
    repo, home = world(tmp_path, {})
    shown = [c for c in LINES if CANARY in run(repo, home, c)]
    assert {"rg --hidden TOKEN", "rg -g '*' TOKEN", "rg TOKEN .env", "rg -uu TOKEN"} <= set(shown)
    assert "rg TOKEN" not in shown
    selected = world(tmp_path / "selected", WORLDS["ignore selects it"])
    assert CANARY in run(*selected, "rg TOKEN")


def test_the_home_keys_are_skipped_as_hidden_unless_named(tmp_path: Path) -> None:
    _, home = world(tmp_path, {})
    (home / "notes.txt").write_text("TOKEN here\n")
    assert decide(home, home, "rg TOKEN") == "allow"
    assert CANARY not in run(home, home, "rg TOKEN")
    for command in ("rg --hidden TOKEN", "rg TOKEN .ssh", "rg -g '*' TOKEN"):
        assert decide(home, home, command) == "ask", command
        assert CANARY in run(home, home, command), command


def test_a_link_to_the_keys_is_followed_only_where_ripgrep_follows_it(tmp_path: Path) -> None:
    repo, home = world(tmp_path, {})
    (repo / "keys").symlink_to(home / ".ssh")
    for command in ("rg TOKEN", "rg TOKEN src", "rg -g '*.py' TOKEN"):  # links are skipped
        assert CANARY not in run(repo, home, command), command
    for command in ("rg TOKEN", "rg TOKEN src"):
        assert decide(repo, home, command) == "allow", command
    for command in (
        "rg -L TOKEN",
        "rg --follow -g '!.env' TOKEN",
        "rg TOKEN keys",
        "rg TOKEN ./keys/",
    ):
        assert CANARY in run(repo, home, command), command
        assert decide(repo, home, command) == "ask", command


def test_without_ripgrep_to_list_the_walk_a_credential_in_the_tree_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, home = world(tmp_path, {})
    assert decide(repo, home, "rg TOKEN") == "allow"
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs-here"))
    assert decide(repo, home, "rg TOKEN") == "ask"
    assert decide(repo, home, "rg TOKEN src") == "allow"  # no credential under src


def test_the_global_excludes_file_can_select_hidden_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git's global excludes (`$XDG_CONFIG_HOME/git/ignore`) are read by ripgrep too."""
    repo, home = world(tmp_path, {})
    config = tmp_path / "config"
    (config / "git").mkdir(parents=True)
    (config / "git" / "ignore").write_text("!.env\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    assert decide(repo, home, "rg TOKEN") == "ask"
    done = subprocess.run(
        ["rg", "TOKEN"],
        cwd=repo,
        env={"PATH": os.environ["PATH"], "HOME": str(home), "XDG_CONFIG_HOME": str(config)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert CANARY in done.stdout


def test_a_ripgrep_config_file_widens_the_walk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, home = world(tmp_path, {})
    config = tmp_path / "ripgreprc"
    config.write_text("--hidden\n")
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", str(config))
    assert decide(repo, home, "rg TOKEN") == "ask"
    assert decide(repo, home, "rg --no-config TOKEN") == "allow"


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("rg --pre cat TOKEN", "--pre runs a program"),
        ("rg --search-zip TOKEN", "-z runs decompression programs"),
        ("rg -nz TOKEN", "-z runs decompression programs"),
        ("rg --index TOKEN", "--index is not one the check knows"),
        ("rg --hidde TOKEN", "--hidde is not one the check knows"),  # no abbreviations
    ],
)
def test_options_that_run_programs_or_are_unknown_are_asked(
    tmp_path: Path, command: str, why: str
) -> None:
    repo, home = world(tmp_path, {})
    policy = Policy("default", roots=[repo], home=home)
    decision = policy.decide(BASH, BASH.parse({"command": command}), Workspace(cwd=repo))
    assert decision.behavior == "ask"
    assert why in decision.reason
