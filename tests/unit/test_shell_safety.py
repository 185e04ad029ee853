"""The shell-safety table (codeloop/testing/shell_cases.py), decided in default, acceptEdits, plan.

Read-only lines must run unasked in every mode; writes inside the workspace are accepted by
acceptEdits only; everything else is asked (denied in plan mode). Deny rules hold however a
command is spelled, allow rules do not cover redirections, and every refusal is one line that
names a way to allow it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from codeloop.permissions.policy import Policy
from codeloop.testing.shell_cases import (
    ALLOWED_BY_RULES,
    DENY_RESPELLED,
    IDIOMS,
    MUST_ASK,
    NOT_COVERED_BY_RULES,
    READ_ONLY,
    WORKSPACE_WRITES,
    shell_world,
)
from codeloop.tools.base import ToolContext, Workspace
from codeloop.tools.registry import default_tools
from tests import needs

BASH = default_tools()["Bash"]
MODES = ("default", "acceptEdits", "plan")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("shell").resolve()
    repo = shell_world(root)
    home = root / "home"
    for secret in (".ssh/id_rsa", ".ssh/id_ed25519", ".aws/credentials", ".kube/config"):
        (home / secret).parent.mkdir(parents=True, exist_ok=True)
        (home / secret).write_text("secret\n")
    return repo, home


def decide(world: tuple[Path, Path], mode: str, command: str, **rules: list[str]) -> str:
    repo, home = world
    policy = Policy(
        mode,  # type: ignore[arg-type]
        rules.get("allow", []),
        rules.get("deny", []),
        roots=[repo],
        home=home,
    )
    decision = policy.decide(BASH, BASH.parse({"command": command}), Workspace(cwd=repo))
    return decision.behavior


def test_the_table_has_several_hundred_cases() -> None:
    total = len(READ_ONLY) + len(WORKSPACE_WRITES) + len(MUST_ASK) + len(DENY_RESPELLED)
    assert total >= 500
    assert len(set(READ_ONLY)) == len(READ_ONLY) and len(set(MUST_ASK)) == len(MUST_ASK)
    assert not set(READ_ONLY) & set(MUST_ASK)
    assert set(IDIOMS) <= set(READ_ONLY)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only_lines_run_unasked(world: tuple[Path, Path], mode: str, command: str) -> None:
    if command.startswith("rg "):
        needs.program("rg", "only ripgrep can list the files an rg line opens")
    assert decide(world, mode, command) == "allow"


@pytest.mark.parametrize("command", WORKSPACE_WRITES)
def test_workspace_writes_need_accept_edits(world: tuple[Path, Path], command: str) -> None:
    assert decide(world, "default", command) == "ask"
    assert decide(world, "acceptEdits", command) == "allow"
    assert decide(world, "plan", command) == "deny"


@pytest.mark.parametrize("command", MUST_ASK)
def test_everything_else_is_asked(world: tuple[Path, Path], command: str) -> None:
    assert decide(world, "default", command) == "ask"
    assert decide(world, "acceptEdits", command) == "ask"
    assert decide(world, "plan", command) != "allow"


@pytest.mark.parametrize(("rule", "command"), DENY_RESPELLED)
def test_deny_rules_hold_however_the_command_is_spelled(
    world: tuple[Path, Path], rule: str, command: str
) -> None:
    for mode in (*MODES, "bypassPermissions"):
        assert decide(world, mode, command, allow=["Bash"], deny=[rule]) == "deny", mode


@pytest.mark.parametrize("command", NOT_COVERED_BY_RULES)
def test_allow_rules_cover_the_command_not_its_writes(
    world: tuple[Path, Path], command: str
) -> None:
    assert decide(world, "default", command, allow=ALLOWED_BY_RULES) == "ask"


def test_allow_rules_still_allow_what_they_name(world: tuple[Path, Path]) -> None:
    assert decide(world, "default", "git status --short", allow=ALLOWED_BY_RULES) == "allow"
    assert decide(world, "default", "ls > /dev/null", allow=ALLOWED_BY_RULES) == "allow"
    assert decide(world, "default", "sort -o out f", allow=["Bash(sort:*)"]) == "allow"
    assert decide(world, "default", "ls > out", allow=["Edit(out)"]) == "allow"
    assert decide(world, "default", "cat ~/.ssh/id_rsa", allow=["Read(~/.ssh/**)"]) == "allow"


@pytest.mark.parametrize("command", [*MUST_ASK[::5], *WORKSPACE_WRITES[::3]])
async def test_every_refusal_is_one_line_saying_what_why_and_how_to_allow(
    world: tuple[Path, Path], command: str
) -> None:
    repo, home = world
    policy = Policy("default", roots=[repo], home=home)
    ctx = ToolContext(Workspace(cwd=repo), tool_use_id="toolu_1")
    result = await policy.can_use_tool(BASH, BASH.parse({"command": command}), ctx)
    assert not result.allowed
    assert "\n" not in result.message
    assert result.message.startswith("Permission to use Bash was denied: ")
    hint = result.message.rsplit("they can allow it with ", 1)[1]
    assert hint.startswith("--"), result.message
    if ">" in command and "cannot be fully analysed" not in result.message:
        assert "acceptEdits" in hint or "Edit(" in hint, result.message
    if "--permission-mode bypassPermissions" in hint:  # only where no rule could help
        assert (
            "analysed" in result.message
            or "run time" in result.message
            or ("cannot tell" in result.message or "can change what runs" in result.message)
            or "privileges" in result.message
            or "needs approval" in result.message
        ), result.message


def test_the_read_tool_follows_the_same_credential_list(world: tuple[Path, Path]) -> None:
    repo, home = world
    read = default_tools()["Read"]
    (repo / ".env").write_text("TOKEN=x\n")
    (home / ".ssh" / "id_rsa.pub").write_text("ssh-rsa AAAA\n")

    def behavior(path: str, *allow: str, mode: str = "default") -> str:
        policy = Policy(mode, list(allow), roots=[repo], home=home)  # type: ignore[arg-type]
        args = read.parse({"file_path": path})
        return policy.decide(read, args, Workspace(cwd=repo)).behavior

    for secret in (f"{home}/.ssh/id_rsa", f"{home}/.aws/credentials", ".env", "/proc/self/environ"):
        assert behavior(secret) == "ask", secret
        assert behavior(secret, mode="plan") == "ask", secret
    assert behavior(f"{home}/.ssh/id_rsa.pub") == "allow"
    assert behavior("f") == "allow"
    assert behavior(f"{home}/.ssh/id_rsa", "Read(~/.ssh/**)") == "allow"
    assert behavior(".env", mode="bypassPermissions") == "allow"


def test_a_tracked_env_file_is_a_credential_that_git_ls_files_can_feed(tmp_path: Path) -> None:
    repo = shell_world(tmp_path)
    home = tmp_path / "home"
    reads = ["git ls-files | xargs cat", "cat $(git ls-files | head -9)", "git ls-files | xargs wc"]
    assert [decide((repo, home), "default", c) for c in reads] == ["allow"] * 3
    subprocess.run(["git", "add", "-f", ".env"], cwd=repo, check=True, capture_output=True)
    assert [decide((repo, home), "default", c) for c in reads] == ["ask"] * 3


def test_a_credential_deep_in_the_tree_makes_a_recursive_read_ask(tmp_path: Path) -> None:
    repo = shell_world(tmp_path)
    home = tmp_path / "home"
    (repo / ".env").unlink()
    shutil.rmtree(repo / "config")
    assert decide((repo, home), "default", "grep -r TOKEN .") == "allow"
    (repo / "a" / "b" / "c").mkdir(parents=True)
    (repo / "a" / "b" / "c" / ".env.production").write_text("TOKEN=x\n")
    for command in ("grep -r TOKEN .", "grep -rl TOKEN a", "find . -type f | xargs cat"):
        assert decide((repo, home), "default", command) == "ask", command
    assert decide((repo, home), "default", "find . -name '*.md' | xargs cat") == "allow"


def test_rules_see_through_wrappers_that_only_schedule_the_command(
    world: tuple[Path, Path],
) -> None:
    for command in ("nohup ls", "timeout 5 ls -la", "nice -n 5 ls", "echo src | xargs ls"):
        assert decide(world, "default", command, allow=["Bash(ls:*)"]) == "allow", command
    assert decide(world, "default", "watch ls", allow=["Bash(watch:*)"]) == "allow"


def test_a_rule_for_any_arguments_does_not_cover_reading_a_credential(
    world: tuple[Path, Path],
) -> None:
    for rule, command in [("Bash(cat:*)", "cat ~/.ssh/id_rsa"), ("Bash(ls:*)", "ls ~/.aws/*")]:
        assert decide(world, "default", command, allow=[rule]) == "ask", command
        covered = decide(world, "default", command, allow=[rule, "Read(~/**)"])
        assert covered == "allow", command
    assert decide(world, "default", "ls ~/.ssh/*.pub", allow=["Bash(ls:*)"]) == "allow"


def test_names_find_prints_from_a_key_folder_are_credentials(world: tuple[Path, Path]) -> None:
    _, home = world
    assert decide(world, "default", f"find {home}/.ssh -type f | xargs cat") == "ask"
    assert decide(world, "default", f"cat $(find {home}/.aws -type f)") == "ask"
    assert decide(world, "default", f"find {home}/.ssh -name '*.pub' | xargs cat") == "allow"


def test_a_link_to_a_credential_counts_as_one(tmp_path: Path) -> None:
    repo = shell_world(tmp_path)
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("secret\n")
    (repo / "src" / "notes.txt").symlink_to(home / ".ssh" / "id_rsa")
    reads = ("find src -name '*.txt' | xargs cat", "cd src && ls | xargs cat", "grep -r x src")
    for command in reads:
        assert decide((repo, home), "default", command) == "ask", command
