"""`codeloop --worktree [NAME]` through the real CLI and real git repositories: the session runs
in `<repo>/.claude/worktrees/NAME` on branch `worktree-NAME` from origin/HEAD, with the
gitignored files `.worktreeinclude` names; at the end it goes with its branch when nothing
changed and stays when something did. WorktreeCreate hooks (a bash script) replace git and
WorktreeRemove hooks (a Python one) clean up after them, with Claude Code's input fields."""

from __future__ import annotations

import subprocess
from pathlib import Path

from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.test_claude_compat import last_tool_result, run_all, script, settings, text_of
from tests.e2e.test_hook_events import COMMON, bash_script, payloads
from tests.unit.test_session_store import git

LOG = (
    'with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "hook-log.jsonl"), "a") as f:\n'
    "    f.write(json.dumps(payload) + '\\n')\n"
)


def cloned_repo(tmp_path: Path) -> Path:
    """A clone (origin/HEAD is upstream's main) with one local commit more on main."""
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git("init", "-q", "-b", "main", cwd=upstream)
    (upstream / "README.md").write_text("upstream\n")
    (upstream / ".gitignore").write_text(".env\n.claude/worktrees/\n")
    git("add", ".", cwd=upstream)
    git("commit", "-q", "-m", "upstream", cwd=upstream)
    git("clone", "-q", str(upstream), "project", cwd=tmp_path)
    repo = tmp_path / "project"
    (repo / "README.md").write_text("local\n")
    git("commit", "-q", "-am", "local only", cwd=repo)
    (repo / ".env").write_text("TOKEN=from-the-main-checkout\n")
    (repo / ".worktreeinclude").write_text(".env\n")
    return repo


def out(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True).stdout


def bash(command: str) -> Scenario:
    return Scenario(turns=(turn(tool_use("Bash", {"command": command})), turn("Done.")))


def test_a_worktree_without_changes_goes_with_its_branch(tmp_path: Path) -> None:
    repo = cloned_repo(tmp_path)
    look = "pwd; git branch --show-current; cat README.md .env"
    (result,), bodies = run_all(
        repo, tmp_path, bash(look), [["-p", "look", "-w", "feature-auth", "--allowedTools", "Bash"]]
    )
    assert result.returncode == 0, result.stderr
    seen = text_of(last_tool_result(bodies[1])["content"]).splitlines()
    tree = repo / ".claude" / "worktrees" / "feature-auth"
    assert seen == [str(tree), "worktree-feature-auth", "upstream", "TOKEN=from-the-main-checkout"]
    assert f"Working directory: {tree}" in str(bodies[0]["system"])
    # Nothing changed: the worktree and its branch are gone, the main checkout as it was.
    assert not tree.exists()
    assert out("branch", "--list", "worktree-*", cwd=repo) == ""
    assert out("worktree", "list", "--porcelain", cwd=repo).count("worktree ") == 1
    assert (repo / "README.md").read_text() == "local\n"


def test_a_worktree_with_changes_is_kept_and_named(tmp_path: Path) -> None:
    repo = cloned_repo(tmp_path)
    (result,), _ = run_all(
        repo,
        tmp_path,
        bash("echo draft > notes.txt"),
        [["-p", "draft", "--worktree", "--allowedTools", "Bash"]],
    )
    assert result.returncode == 0, result.stderr
    (tree,) = (repo / ".claude" / "worktrees").iterdir()  # a name made up: adjective-noun-hex
    assert len(tree.name.split("-")) == 3
    assert (tree / "notes.txt").read_text() == "draft\n"
    assert f"kept the worktree {tree} (branch worktree-{tree.name}): it has changes" in (
        result.stderr
    )
    assert out("branch", "--list", f"worktree-{tree.name}", cwd=repo).strip()


def test_worktree_hooks_replace_git(tmp_path: Path) -> None:
    repo = cloned_repo(tmp_path)
    made = tmp_path / "elsewhere"
    create = bash_script(
        repo,
        "create.sh",
        "name=$(python3 -c 'import json,sys; print(json.load(sys.stdin)[\"name\"])')\n"
        f'mkdir -p "{made}/$name" && echo "checked out" >&2\n'
        'printf "\\033[1mbanner from a shell profile\\033[0m\\n"\n'
        f'echo "{made}/$name"\n',
    )
    remove = script(
        repo, "remove.py", LOG + "import shutil\nshutil.rmtree(payload['worktree_path'])\n"
    )
    settings(
        repo,
        {
            "hooks": {
                "WorktreeCreate": [{"hooks": [{"type": "command", "command": create}]}],
                "WorktreeRemove": [{"hooks": [{"type": "command", "command": remove}]}],
            }
        },
    )
    (result,), bodies = run_all(
        repo, tmp_path, bash("pwd"), [["-p", "where", "-w", "svn-copy", "--allowedTools", "Bash"]]
    )
    assert result.returncode == 0, result.stderr
    assert text_of(last_tool_result(bodies[1])["content"]).strip() == str(made / "svn-copy")
    (removed,) = payloads(repo / "hook-log.jsonl")
    assert removed["hook_event_name"] == "WorktreeRemove"
    assert removed["worktree_path"] == str(made / "svn-copy")
    assert set(removed) >= COMMON
    assert not (made / "svn-copy").exists()  # the hook removed it; git made nothing
    assert not (repo / ".claude" / "worktrees").exists()
    assert out("branch", "--list", "worktree-*", cwd=repo) == ""


def test_worktree_create_input_and_failures(tmp_path: Path) -> None:
    repo = cloned_repo(tmp_path)
    create = script(
        repo, "create.py", LOG + "print('no such checkout', file=sys.stderr)\nsys.exit(3)\n"
    )
    settings(
        repo, {"hooks": {"WorktreeCreate": [{"hooks": [{"type": "command", "command": create}]}]}}
    )
    plain = tmp_path / "plain"
    plain.mkdir()
    runs, bodies = run_all(
        repo,
        tmp_path,
        Scenario(turns=()),
        [["-p", "hi", "-w", "feat"], ["-p", "hi", "-w", "no/slashes"]],
    )
    failed, badly_named = runs
    assert failed.returncode == 1
    assert "WorktreeCreate hook" in failed.stderr and "no such checkout" in failed.stderr
    (fired,) = payloads(repo / "hook-log.jsonl")
    assert fired["hook_event_name"] == "WorktreeCreate"
    assert fired["name"] == "feat"
    assert set(fired) >= COMMON
    assert badly_named.returncode == 1
    assert "--worktree no/slashes: a name is letters, digits" in badly_named.stderr
    (no_repo,), _ = run_all(plain, tmp_path, Scenario(turns=()), [["-p", "hi", "-w"]])
    assert no_repo.returncode == 1
    assert f"--worktree needs a git repository (or a WorktreeCreate hook): {plain}" in (
        no_repo.stderr
    )
    for run in (*runs, no_repo):
        assert "Traceback" not in run.stderr
    assert bodies == []  # no session started
