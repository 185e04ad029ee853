"""Rewind undoes everything a session changed, shell commands included, from a new process.

A real `codeloop -p` against FakeModelServer edits a git repository with Edit and Write and
with Bash `sed -i`, `rm`, `mv`, `chmod +x`, `ln -s`, a file in a git-ignored folder, a new
untracked file and a new folder; then `codeloop rewind --to 1` must leave the whole folder
byte-identical to before the session (every path, mode, symlink and byte, `.git` included:
HEAD, index, refs and stash), and rewinding the rewind must bring the session's state back.
The same after `kill -9` in the middle of a turn. A user's own edit between turns is kept, and
one on a file the agent also changed stops the rewind until --force.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codeloop.store.transcript import claim
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, Turn, tool_use, turn
from codeloop.testing.tree import tree_digest
from tests.e2e.cli import CliRun, provider_env, run_cli

MODEL = "anthropic:claude-sonnet-4-5"
WRITES = ("--permission-mode", "bypassPermissions")


def git(repo: Path, *args: str) -> str:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(repo.parent)}
    env |= {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def make_repo(root: Path) -> Path:
    """A repository with history, a stash, a staged change, an ignored folder, odd modes."""
    repo = root / "project"
    (repo / "src").mkdir(parents=True)
    (repo / "build").mkdir()
    (repo / ".gitignore").write_text("build/\n")
    (repo / "src" / "app.py").write_text("def greet():\n    return 'hello'\n")
    (repo / "notes.txt").write_text("alpha\nbeta\n")
    (repo / "old.txt").write_text("to be removed\n")
    (repo / "moved.txt").write_text("to be moved\n")
    (repo / "run.sh").write_text("#!/bin/sh\necho run\n")
    (repo / "secret.txt").write_text("mode 600\n")
    (repo / "secret.txt").chmod(0o600)
    (repo / "build" / "cache.bin").write_bytes(bytes(range(256)))
    (repo / "link").symlink_to("src/app.py")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    (repo / "notes.txt").write_text("alpha\nbeta\nstashed\n")
    git(repo, "stash", "-q")
    (repo / "notes.txt").write_text("alpha\nbeta\nstaged\n")
    git(repo, "add", "notes.txt")
    (repo / "untracked-before.txt").write_text("the user's, untracked\n")
    return repo


def editing_turns() -> list[Turn]:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("Edit", {"file_path": "src/app.py", "old_string": "hello", "new_string": "HELLO"}),
        ("Write", {"file_path": "src/new_module.py", "content": "X = 1\n"}),
        ("Bash", {"command": "sed -i 's/alpha/ALPHA/' notes.txt"}),
        ("Bash", {"command": "rm old.txt"}),
        ("Bash", {"command": "mv moved.txt src/moved.txt"}),
        ("Bash", {"command": "chmod +x run.sh && chmod 644 secret.txt"}),
        ("Bash", {"command": "ln -s notes.txt notes-link && ln -sfn run.sh link"}),
        ("Bash", {"command": "echo generated > build/out.txt && rm build/cache.bin"}),
        ("Bash", {"command": "mkdir -p fresh/deep && echo new > fresh/deep/file.txt"}),
    ]
    steps = [turn(f"Step {i}.", tool_use(name, args)) for i, (name, args) in enumerate(calls)]
    # Reading takes no checkpoint: the first one is taken before the Edit.
    return [turn("Read.", tool_use("Read", {"file_path": "src/app.py"})), *steps]


def git_state(repo: Path) -> tuple[str, ...]:
    """HEAD, the index's bytes, every ref and the stash, read without running git."""
    dot = repo / ".git"
    return (
        (dot / "HEAD").read_text(),
        (dot / "index").read_bytes().hex(),
        tree_digest(dot / "refs"),
        tree_digest(dot / "logs"),
        (dot / "packed-refs").read_text() if (dot / "packed-refs").exists() else "",
    )


def env_for(home: Path, server: FakeModelServer | None) -> dict[str, str]:
    env = provider_env(server, "anthropic", home) | {"CODELOOP_HOME": str(home / "data")}
    if server is None:
        env |= {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    return env


def rewind(repo: Path, home: Path, *args: str) -> CliRun:
    return run_cli(["rewind", *args], cwd=repo, env=env_for(home, None))


def run_session(repo: Path, home: Path, turns: list[Turn], *args: str) -> CliRun:
    with FakeModelServer(Scenario(turns=tuple(turns))) as server:
        return run_cli(
            ["--model", MODEL, *WRITES, "-p", *args], cwd=repo, env=env_for(home, server)
        )


def test_rewind_to_the_first_checkpoint_undoes_everything(tmp_path: Path) -> None:
    repo, home = make_repo(tmp_path), tmp_path / "home"
    before, before_git = tree_digest(repo), git_state(repo)

    run = run_session(repo, home, [*editing_turns(), turn("Done.")], "make the changes")
    assert run.returncode == 0, run.stderr
    assert (repo / "src" / "app.py").read_text().count("HELLO") == 1
    assert not (repo / "old.txt").exists() and (repo / "fresh" / "deep" / "file.txt").exists()
    assert os.access(repo / "run.sh", os.X_OK) and os.readlink(repo / "link") == "run.sh"
    after = tree_digest(repo)

    listed = rewind(repo, home)
    assert listed.returncode == 0, listed.stderr
    assert "before Edit: src/app.py" in listed.stdout and "before Bash: rm old.txt" in listed.stdout
    assert '"make the changes"' in listed.stdout
    assert "changed src/app.py\n" in listed.stdout  # what the Edit's turn changed
    assert "changed old.txt\n" in listed.stdout

    dry = rewind(repo, home, "--to", "1", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert tree_digest(repo) == after  # a dry run changes nothing
    for shown in ("revert   src/app.py", "remove   src/new_module.py", "restore  old.txt"):
        assert shown in dry.stdout
    assert "chmod    run.sh (755 → 644)" in dry.stdout

    done = rewind(repo, home, "--to", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert tree_digest(repo) == before
    assert git_state(repo) == before_git
    assert git(repo, "stash", "list").count("stash@{") == 1

    undo_number = done.stdout.rsplit("codeloop rewind --to ", 1)[1].strip()
    undone = rewind(repo, home, "--to", undo_number)
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert tree_digest(repo) == after
    assert git_state(repo) == before_git


def test_rewind_after_kill_9_from_a_new_process(tmp_path: Path) -> None:
    repo, home = make_repo(tmp_path), tmp_path / "home"
    before, before_git = tree_digest(repo), git_state(repo)
    ready, release = tmp_path / "ready", tmp_path / "release"
    os.mkfifo(ready)
    # The last call changes a file, says so through the FIFO, and waits: the kill lands while
    # it runs, before its turn could record how it ended.
    gated = f"rm notes.txt && echo go > {ready} && while [ ! -e {release} ]; do sleep 0.05; done"
    turns = [*editing_turns()[:7], turn("Last.", tool_use("Bash", {"command": gated}))]
    with FakeModelServer(Scenario(turns=tuple(turns))) as server:
        argv = [sys.executable, "-m", "codeloop", "--model", MODEL, *WRITES, "-p", "go"]
        proc = subprocess.Popen(argv, cwd=repo, env=env_for(home, server), stdin=subprocess.DEVNULL)
        try:
            with ready.open() as fifo:  # blocks until the gated command has run its rm
                assert fifo.read() == "go\n"
            proc.kill()
            proc.wait()
        finally:
            if proc.poll() is None:
                proc.kill()
            release.touch()  # the orphaned command ends, having nothing more to change
    assert proc.returncode == -9
    journal = next((home / "data" / "projects").glob("*/*/checkpoints/checkpoints.jsonl"))
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    assert [line["type"] for line in lines][-1] == "checkpoint"  # the killed turn never ended
    assert not (repo / "notes.txt").exists()

    listed = rewind(repo, home)
    assert listed.stdout.count("  changed ") == 6  # the seventh turn was killed
    assert "(the turn did not finish: what it changed is not known)" in listed.stdout
    done = rewind(repo, home, "--to", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert tree_digest(repo) == before
    assert git_state(repo) == before_git


def test_a_users_own_edit_between_turns_is_kept_or_protected(tmp_path: Path) -> None:
    repo, home = make_repo(tmp_path), tmp_path / "home"
    first = [turn("Write.", tool_use("Write", {"file_path": "a.txt", "content": "agent 1\n"}))]
    run = run_session(repo, home, [*first, turn("Done.")], "write a")
    assert run.returncode == 0, run.stderr
    # Between the turns the user edits the agent's file and a file of their own.
    (repo / "a.txt").write_text("agent 1\nuser\n")
    (repo / "mine.txt").write_text("the user's\n")
    # A second server numbers its calls from the start again; the API never reuses an id (the
    # fake server refuses a history that does), so this run's call is named apart.
    append = {"command": "echo 'agent 2' >> a.txt"}
    second = [turn("Again.", tool_use("Bash", append, id="toolu_01second")), turn("Done.")]
    run = run_session(repo, home, second, "--continue", "append")
    assert run.returncode == 0, run.stderr
    latest = tree_digest(repo)

    refused = rewind(repo, home, "--to", "1")
    assert refused.returncode == 1
    assert "would overwrite your own changes to: a.txt" in refused.stderr
    assert "--force" in refused.stderr
    assert tree_digest(repo) == latest  # nothing was changed

    forced = rewind(repo, home, "--to", "1", "--force")
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert not (repo / "a.txt").exists()
    assert (repo / "mine.txt").read_text() == "the user's\n"  # never the agent's: kept
    assert "mine.txt" in forced.stdout.split("kept as they are:")[1]

    undo_number = forced.stdout.rsplit("codeloop rewind --to ", 1)[1].strip()
    assert rewind(repo, home, "--to", undo_number).returncode == 0
    assert tree_digest(repo) == latest


def test_add_dir_folders_are_rewound_too(tmp_path: Path) -> None:
    repo, home = make_repo(tmp_path), tmp_path / "home"
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "shared.cfg").write_text("setting = 1\n")
    before = (tree_digest(repo), tree_digest(extra))
    turns = [
        turn("Both.", tool_use("Bash", {"command": f"echo changed > {extra}/shared.cfg"})),
        turn("New.", tool_use("Bash", {"command": f"touch {extra}/new && rm src/app.py"})),
        turn("Done."),
    ]
    run = run_session(repo, home, turns, "change both", "--add-dir", str(extra))
    assert run.returncode == 0, run.stderr
    assert (extra / "shared.cfg").read_text() == "changed\n"
    done = rewind(repo, home, "--to", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"revert   {extra}/shared.cfg" in done.stdout  # outside the project: shown whole
    assert (tree_digest(repo), tree_digest(extra)) == before


def test_rewind_mistakes_are_one_line(tmp_path: Path) -> None:
    repo, home = make_repo(tmp_path), tmp_path / "home"
    nothing = rewind(repo, home)
    assert nothing.returncode == 1 and nothing.stderr.startswith("codeloop: no session")
    run = run_session(repo, home, [*editing_turns()[:2], turn("Done.")], "edit")
    assert run.returncode == 0, run.stderr
    missing = rewind(repo, home, "--to", "9")
    assert missing.returncode == 1
    assert missing.stderr == "codeloop: no checkpoint 9 in this session (checkpoints: 1 to 1)\n"


@pytest.mark.parametrize("which", ["--conversation", "--both"])
def test_conversation_rewind_cuts_the_history_and_can_be_undone(tmp_path: Path, which: str) -> None:
    repo, home = make_repo(tmp_path), tmp_path / "home"
    run = run_session(repo, home, [*editing_turns()[:4], turn("Done.")], "three edits")
    assert run.returncode == 0, run.stderr
    # Checkpoint 2 was taken before the Write: prompt, Read and Edit calls with their results.
    done = rewind(repo, home, "--to", "2", which)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Conversation: 10 messages → 5." in done.stdout
    assert (repo / "src" / "new_module.py").exists() == (which == "--conversation")
    with FakeModelServer([turn("Resumed.")]) as server:
        resumed = run_cli(
            ["--model", MODEL, "-p", "--continue", "go on"], cwd=repo, env=env_for(home, server)
        )
        sent = server.requests[0].body["messages"]
    assert resumed.returncode == 0, resumed.stderr
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user", "user"]
    assert sent[3]["content"][-1]["input"]["file_path"] == "src/app.py"

    undo = done.stdout.rsplit("codeloop rewind --to ", 1)[1].strip()
    undone = rewind(repo, home, "--to", undo, which)
    assert undone.returncode == 0, undone.stdout + undone.stderr
    assert "Conversation: 7 messages → 10." in undone.stdout
    assert (repo / "src" / "new_module.py").exists()


def test_a_session_another_process_runs_is_not_rewound_under_it(tmp_path: Path) -> None:
    repo, home = make_repo(tmp_path), tmp_path / "home"
    run = run_session(repo, home, [*editing_turns()[:2], turn("Done.")], "edit")
    assert run.returncode == 0, run.stderr
    edited = tree_digest(repo)
    (path,) = (home / "data" / "projects").glob("*/*.jsonl")  # the session's transcript
    held = claim(path)  # as a live codeloop run holds it
    assert held is not None
    try:
        busy = rewind(repo, home, "--to", "1")
        assert busy.returncode == 1
        assert "being run by another codeloop process" in busy.stderr
        assert "nothing was changed" in busy.stderr and "Traceback" not in busy.stderr
        assert tree_digest(repo) == edited
        assert rewind(repo, home, "--to", "1", "--dry-run").returncode == 0  # looking is fine
    finally:
        os.close(held)
    done = rewind(repo, home, "--to", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert tree_digest(repo) != edited
