"""Where sessions live, finding one to resume, and the listing's numbers (costs by hand)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from codeloop.cli.sessions import format_table
from codeloop.errors import SessionNotFound
from codeloop.store.data_paths import (
    MAX_SLUG,
    branch_in,
    codeloop_home,
    find_repo_root,
    git_dir,
    home_dir,
    project_dir,
    project_slug,
)
from codeloop.store.session_store import SessionStore, summarize
from codeloop.store.transcript import TranscriptWriter
from codeloop.types import Message, TextBlock, Usage

FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"
IDS = (
    "11111111-aaaa-4aaa-8aaa-000000000001",
    "11111111-bbbb-4bbb-8bbb-000000000002",
    "22222222-cccc-4ccc-8ccc-000000000003",
)


def test_data_dir_and_project_folder() -> None:
    assert codeloop_home({"CODELOOP_HOME": "/data/cl", "HOME": "/home/u"}) == Path("/data/cl")
    assert codeloop_home({"HOME": "/home/u"}) == Path("/home/u/.codeloop")
    assert project_slug(Path("/home/u/my proj.v2")) == "-home-u-my-proj-v2"
    env = {"HOME": "/home/u"}
    assert project_dir(Path("/w/p"), env) == Path("/home/u/.codeloop/projects/-w-p")


def test_long_project_paths_stay_short_and_distinct() -> None:
    deep = "/" + "/".join(["d" * 50] * 6)
    first, second = project_slug(Path(deep + "/a")), project_slug(Path(deep + "/b"))
    assert first != second
    assert len(first) <= MAX_SLUG + 13


def test_home_is_home_when_set_else_the_accounts(tmp_path: Path) -> None:
    assert home_dir({"HOME": str(tmp_path)}) == tmp_path
    assert home_dir({"HOME": " "}) == home_dir({}) == Path.home()
    assert codeloop_home({"HOME": str(tmp_path)}) == tmp_path / ".codeloop"


def git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def git_branch(directory: Path) -> str | None:
    repo = git_dir(directory)
    return None if repo is None else branch_in(repo)


def test_git_branch_read_without_running_git(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    assert git_branch(repo / "sub") is None
    git("init", "-q", "-b", "main", cwd=repo)
    assert git_branch(repo / "sub") == "main"
    assert find_repo_root(repo / "sub") == repo
    git("commit", "-q", "--allow-empty", "-m", "x", cwd=repo)
    git("worktree", "add", "-q", "-b", "topic", str(tmp_path / "wt"), cwd=repo)
    assert git_branch(tmp_path / "wt") == "topic"  # .git is a file pointing elsewhere
    assert find_repo_root(tmp_path / "wt") == tmp_path / "wt"
    git("checkout", "-q", "--detach", cwd=repo)
    assert git_branch(repo) == "HEAD"


def make_store(tmp_path: Path) -> SessionStore:
    project = tmp_path / "project"
    project.mkdir()
    store = SessionStore(project, {"CODELOOP_HOME": str(tmp_path / "data")})
    for age, session_id in enumerate(IDS):
        writer = TranscriptWriter(store.path_for(session_id), session_id, project)
        writer.append(Message.user(f"prompt of {session_id[:8]}"))
        writer.close()
        stamp = 1_700_000_000 - age * 3600
        os.utime(store.path_for(session_id), (stamp, stamp))
    return store


def test_latest_is_the_one_written_last(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    assert store.latest().stem == IDS[0]
    os.utime(store.path_for(IDS[2]), (1_800_000_000, 1_800_000_000))
    assert store.latest().stem == IDS[2]
    assert [p.stem for p in store.paths()] == [IDS[2], IDS[0], IDS[1]]


def test_find_by_id_or_a_unique_start(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    assert store.find(IDS[1].upper()).stem == IDS[1]
    assert store.find("22").stem == IDS[2]
    with pytest.raises(SessionNotFound, match="2 sessions start with '1111'"):
        store.find("1111")
    with pytest.raises(SessionNotFound, match="not a session id"):
        store.find("*")
    with pytest.raises(SessionNotFound, match="no session 3333"):
        store.find("3333")


def test_a_session_of_another_project_is_named(tmp_path: Path) -> None:
    make_store(tmp_path)
    other = SessionStore(tmp_path, {"CODELOOP_HOME": str(tmp_path / "data")})
    with pytest.raises(SessionNotFound, match=f"belongs to {tmp_path / 'project'}: run"):
        other.find("2222")
    with pytest.raises(SessionNotFound, match="no session to continue"):
        other.latest()


def test_summary_costs_match_hand_computed_numbers(tmp_path: Path) -> None:
    # claude-sonnet-4-5 per million: $3 in, $15 out, $3.75 cache write, $0.30 cache read
    #   1 000 in + 200 out + 4 000 cache write = 0.003 + 0.003 + 0.015  = $0.021
    # claude-haiku-4-5 per million: $1 in, $5 out, $1.25 cache write, $0.10 cache read
    #   2 000 in + 400 out + 10 000 cache read = 0.002 + 0.002 + 0.001 = $0.005
    path = tmp_path / "s.jsonl"
    writer = TranscriptWriter(path, "s", tmp_path)
    writer.append(Message.user("first\n  prompt"))
    writer.append(
        Message("assistant", (TextBlock("a"),)),
        model="claude-sonnet-4-5",
        usage=Usage(1_000, 200, 4_000, 0),
    )
    writer.append(Message.user("second"))
    writer.append(
        Message("assistant", (TextBlock("b"),)),
        model="claude-haiku-4-5",
        usage=Usage(2_000, 400, 0, 10_000),
    )
    writer.close()
    summary = summarize(path)
    assert summary.cost_usd == 0.026
    assert summary.turns == 2
    assert summary.first_prompt == "first\n  prompt"
    (row,) = format_table([summary], width=80)[1:]
    assert row.split()[3:] == ["2", "$0.0260", "first", "prompt"]


def test_summary_of_a_version_0_transcript(tmp_path: Path) -> None:
    # claude-sonnet-4-5: 2 200 in × $3 + 50 out × $15 per million = $0.00735
    path = tmp_path / "old.jsonl"
    shutil.copy(FIXTURES / "v0_session.jsonl", path)
    summary = summarize(path)
    assert (summary.cost_usd, summary.turns, summary.first_prompt) == (0.00735, 2, "list the files")


def test_long_prompts_are_cut_to_the_terminal(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = TranscriptWriter(path, "s" * 36, tmp_path)
    writer.append(Message.user("word " * 100))
    writer.close()
    _, row = format_table([summarize(path)], width=100)
    assert len(row) == 100 and row.endswith("…")


def test_cleanup_removes_a_session_with_its_folder(tmp_path: Path) -> None:
    from codeloop.settings.settings_apply import sweep_transcripts

    store = SessionStore(tmp_path / "project", {"CODELOOP_HOME": str(tmp_path / "home")})
    old, new = "1b2c3d4e-0000-4000-8000-000000000001", "1b2c3d4e-0000-4000-8000-000000000002"
    for sid in (old, new):
        (store.directory / sid / "checkpoints").mkdir(parents=True)
        (store.directory / sid / "checkpoints" / "objects.pack").write_bytes(b"x")
        store.path_for(sid).write_text("")
    month_ago = store.path_for(new).stat().st_mtime - 31 * 86_400
    os.utime(store.path_for(old), (month_ago, month_ago))
    assert sweep_transcripts(store.directory.parent, 30) == 1
    assert not store.path_for(old).exists() and not (store.directory / old).exists()
    assert (store.directory / new / "checkpoints" / "objects.pack").exists()
