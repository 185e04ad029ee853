"""Checkpoints: snapshots that restore a folder exactly, and rewinds that keep the user's edits.

Real folders on disk throughout: every rewind is judged by `tree_digest`, which hashes every
path with its mode, every byte and every symlink target.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codeloop.checkpoints import snapshot
from codeloop.checkpoints.limits import Limits
from codeloop.checkpoints.manager import CheckpointError, Checkpoints, CheckpointsBusy
from codeloop.checkpoints.objects import INDEX, PACK, ObjectStore
from codeloop.permissions.policy import Policy
from codeloop.session import Session
from codeloop.session_config import SessionConfig
from codeloop.store.transcript import TranscriptWriter, read_transcript
from codeloop.testing.scenario import tool_use, turn
from codeloop.testing.scripted import ScriptedModel
from codeloop.testing.tree import tree_digest
from codeloop.tools.base import Workspace
from codeloop.tools.registry import default_tools
from codeloop.types import ToolUseBlock


def checkpoints(tmp: Path, *roots: Path, limits: Limits | None = None) -> Checkpoints:
    return Checkpoints(tmp / "store", list(roots) or [tmp / "ws"], limits=limits)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def odd_tree(ws: Path) -> None:
    """Everything a rewind must get exactly right."""
    (ws / "plain.txt").write_text("plain\n")
    (ws / "secret").write_text("s\n")
    (ws / "secret").chmod(0o600)
    (ws / "tool").write_text("#!/bin/sh\n")
    (ws / "tool").chmod(0o750)
    (ws / "empty" / "nested").mkdir(parents=True)
    (ws / "locked").mkdir()
    (ws / "locked" / "inside.txt").write_text("in a read-only folder\n")
    (ws / "locked").chmod(0o555)
    (ws / "dangling").symlink_to("does/not/exist")
    (ws / "to-dir").symlink_to("empty")
    (ws / os.fsdecode(b"caf\xe9-latin1.txt")).write_bytes(b"not utf-8 name\n")
    (ws / "vendored" / "lib").mkdir(parents=True)  # a nested repository: its files count
    (ws / "vendored" / ".git").mkdir()
    (ws / "vendored" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (ws / "vendored" / "lib" / "code.py").write_text("x = 1\n")
    (ws / "binary.bin").write_bytes(bytes(range(256)) * 64)


def vandalize(ws: Path) -> None:
    (ws / "locked").chmod(0o755)
    (ws / "locked" / "inside.txt").write_text("changed\n")
    (ws / "locked" / "new.txt").write_text("new\n")
    (ws / "plain.txt").unlink()
    (ws / "secret").chmod(0o644)
    (ws / "tool").write_text("#!/bin/sh\nrm -rf /\n")
    shutil.rmtree(ws / "empty")
    (ws / "empty").write_text("a file where a folder was\n")
    (ws / "dangling").unlink()
    (ws / "dangling").mkdir()
    (ws / "to-dir").unlink()
    (ws / "to-dir").symlink_to("plain.txt")
    (ws / os.fsdecode(b"caf\xe9-latin1.txt")).unlink()
    (ws / "vendored" / "lib" / "code.py").write_text("x = 2\n")
    (ws / "binary.bin").write_bytes(b"\0" * 10)
    (ws / "brand" / "new" / "tree").mkdir(parents=True)
    (ws / "brand" / "new" / "tree" / "f").write_text("f\n")


def git_digest(ws: Path) -> str:
    return tree_digest(ws / "vendored" / ".git")


def test_rewind_restores_every_kind_of_change_exactly(tmp_path: Path, ws: Path) -> None:
    odd_tree(ws)
    before = tree_digest(ws)
    cps = checkpoints(tmp_path)
    first = cps.take(["u1"])
    vandalize(ws)
    cps.finish(first.number)
    vandalized = tree_digest(ws)

    dry = cps.rewind(first.number, history=["u1", "u2"], dry_run=True)
    assert dry.applied is None and dry.undo is None
    assert tree_digest(ws) == vandalized
    actions = {c.path: c.action for c in dry.plan.changes}
    assert actions["plain.txt"] == "restore"
    assert actions["secret"] == "chmod"
    assert actions["tool"] == "revert"
    assert actions["empty"] == "replace"
    assert actions["brand/new/tree/f"] == "remove"

    done = cps.rewind(first.number, history=["u1", "u2"])
    assert done.applied is not None and done.applied.failed == []
    assert tree_digest(ws) == before
    assert done.undo is not None and done.undo.kind == "rewind"
    assert done.undo.history == ("u1", "u2")

    again = cps.rewind(done.undo.number, history=["u1"])
    assert again.applied is not None and again.applied.failed == []
    assert tree_digest(ws) == vandalized
    (ws / "locked").chmod(0o755)  # let pytest clean up


def test_git_folders_are_never_read_nor_touched(tmp_path: Path, ws: Path) -> None:
    odd_tree(ws)
    cps = checkpoints(tmp_path)
    cp = cps.take([])
    (ws / "vendored" / ".git" / "HEAD").write_text("ref: refs/heads/other\n")
    (ws / "vendored" / ".git" / "index").write_bytes(b"DIRC")
    moved = git_digest(ws)
    cps.finish(cp.number)
    plan = cps.rewind(cp.number, history=[], dry_run=True).plan
    assert [c for c in plan.changes if ".git" in c.path] == []
    cps.rewind(cp.number, history=[])
    assert git_digest(ws) == moved
    (ws / "locked").chmod(0o755)


def test_a_moved_git_head_is_named_and_left_alone(tmp_path: Path, ws: Path) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    env |= {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}

    def git(*args: str) -> str:
        argv = ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args]
        return subprocess.run(
            argv, cwd=ws, env=env, check=True, capture_output=True
        ).stdout.decode()

    (ws / "f.txt").write_text("one\n")
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", "one")
    first = git("rev-parse", "HEAD").strip()
    cps = checkpoints(tmp_path)
    cp = cps.take([])
    assert cp.git == {str(ws): f"main {first}"}
    (ws / "f.txt").write_text("two\n")
    git("commit", "-qam", "two")  # the agent commits
    second = git("rev-parse", "HEAD").strip()
    cps.finish(cp.number)
    done = cps.rewind(cp.number, history=[])
    assert done.plan.notes == [
        f"git's HEAD in {ws} moved since checkpoint 1 (main {first} → main {second}); "
        "a rewind restores files, never .git"
    ]
    assert (ws / "f.txt").read_text() == "one\n"
    assert git("rev-parse", "HEAD").strip() == second


def test_too_big_files_are_named_and_never_changed(tmp_path: Path, ws: Path) -> None:
    (ws / "big.bin").write_bytes(b"x" * 2000)
    (ws / "small.txt").write_text("small\n")
    cps = checkpoints(tmp_path, limits=Limits(max_file_bytes=1000))
    cp = cps.take([])
    assert cps.last_stats is not None and cps.last_stats.skipped == 1
    (ws / "big.bin").write_bytes(b"y" * 3000)
    (ws / "huge-new.bin").write_bytes(b"z" * 5000)
    (ws / "small.txt").write_text("changed\n")
    cps.finish(cp.number)
    done = cps.rewind(cp.number, history=[])
    names = {c.path: why for c, why in done.plan.unrestorable}
    assert set(names) == {"big.bin", "huge-new.bin"}
    assert "not stored at the checkpoint" in names["big.bin"]
    assert "a rewind could not be undone for it" in names["huge-new.bin"]
    assert (ws / "big.bin").read_bytes() == b"y" * 3000
    assert (ws / "huge-new.bin").exists()
    assert (ws / "small.txt").read_text() == "small\n"


def test_the_file_count_limit_skips_whole_folders_and_leaves_them(tmp_path: Path, ws: Path) -> None:
    for name in ("a", "b", "c"):
        (ws / name).mkdir()
        for i in range(3):
            (ws / name / f"{i}.txt").write_text(f"{name}{i}\n")
    cps = checkpoints(tmp_path, limits=Limits(max_files=4))
    cp = cps.take([])
    assert cps.last_stats is not None and cps.last_stats.limited
    shutil.rmtree(ws / "c")
    (ws / "a" / "0.txt").write_text("changed\n")
    cps.finish(cp.number)
    done = cps.rewind(cp.number, history=[])
    assert (ws / "a" / "0.txt").read_text() == "a0\n"
    assert [c.path for c, _ in done.plan.unrestorable] == ["c"]
    assert not (ws / "c").exists()


def test_users_edits_between_turns_are_kept_and_conflicts_need_force(
    tmp_path: Path, ws: Path
) -> None:
    (ws / "shared.txt").write_text("original\n")
    (ws / "theirs.txt").write_text("original\n")
    cps = checkpoints(tmp_path)
    first = cps.take([])
    (ws / "shared.txt").write_text("agent 1\n")
    cps.finish(first.number)
    (ws / "shared.txt").write_text("agent 1 + user\n")  # between turns: the user's
    (ws / "theirs.txt").write_text("user only\n")
    second = cps.take([])
    (ws / "shared.txt").write_text("agent 2\n")
    cps.finish(second.number)
    (ws / "late.txt").write_text("user, after the last turn\n")

    blocked = cps.rewind(first.number, history=[])
    assert blocked.blocked and blocked.applied is None and blocked.undo is None
    assert [c.path for c in blocked.plan.conflicts] == ["shared.txt"]
    assert sorted(c.path for c in blocked.plan.kept) == ["late.txt", "theirs.txt"]
    assert (ws / "shared.txt").read_text() == "agent 2\n"
    assert len(cps.list()) == 2  # a refused rewind records nothing

    # Back to before the second turn: only the agent's second change is undone.
    back = cps.rewind(second.number, history=[])
    assert not back.blocked
    assert (ws / "shared.txt").read_text() == "agent 1 + user\n"
    assert (ws / "theirs.txt").read_text() == "user only\n"

    forced = cps.rewind(first.number, history=[], force=True)
    assert forced.applied is not None
    assert (ws / "shared.txt").read_text() == "original\n"
    assert (ws / "theirs.txt").read_text() == "user only\n"
    assert (ws / "late.txt").exists()


def test_a_turn_that_never_finished_counts_as_the_agents(tmp_path: Path, ws: Path) -> None:
    (ws / "f.txt").write_text("original\n")
    cps = checkpoints(tmp_path)
    cp = cps.take([])
    (ws / "f.txt").write_text("half-done\n")
    cps.close()  # the process died: no end-of-turn snapshot
    reopened = checkpoints(tmp_path)
    done = reopened.rewind(cp.number, history=[])
    assert done.plan.conflicts == []
    assert (ws / "f.txt").read_text() == "original\n"


def test_a_same_size_rewrite_with_the_old_mtime_is_still_seen(tmp_path: Path, ws: Path) -> None:
    target = ws / "f.txt"
    target.write_text("aaaa\n")
    os.utime(target, ns=(1_000_000_000, 1_000_000_000))  # long ago: trusted by the cache
    cps = checkpoints(tmp_path)
    cp = cps.take([])
    target.write_text("bbbb\n")
    os.utime(target, ns=(1_000_000_000, 1_000_000_000))  # same size, same mtime: ctime moved
    cps.finish(cp.number)
    cps.rewind(cp.number, history=[])
    assert target.read_text() == "aaaa\n"


def test_unchanged_files_are_not_read_again(
    tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Files changed within 2 s of a snapshot are read again (their stat may not show a second
    # change); these were all written before it, which is what counts without that margin.
    monkeypatch.setattr(snapshot, "RACY_NS", 0)
    for i in range(50):
        (ws / f"{i}.txt").write_text(f"{i}\n")
    cps = checkpoints(tmp_path)
    cps.take([])
    assert cps.last_stats is not None and cps.last_stats.hashed == 50
    (ws / "7.txt").write_text("changed\n")
    cps.take([])
    assert cps.last_stats.hashed == 1
    cps.close()
    reopened = checkpoints(tmp_path)  # a new process: the cache comes from the journal
    reopened.take([])
    assert reopened.last_stats is not None and reopened.last_stats.hashed <= 1


def test_the_watcher_lists_only_what_changed_and_follows_moves(tmp_path: Path, ws: Path) -> None:
    for name in ("a/x/deep", "b", "c"):
        (ws / name).mkdir(parents=True)
        (ws / name / "f.txt").write_text(name)
    cps = checkpoints(tmp_path)
    first = cps.take([])
    assert cps.last_stats is not None and cps.last_stats.listed == 6  # ws a a/x a/x/deep b c
    (ws / "b" / "f.txt").write_text("changed")
    cps.take([])
    if cps.last_stats.listed == 6:
        pytest.skip("no inotify here: every snapshot lists every folder")
    assert cps.last_stats.listed == 1  # b only
    (ws / "a").rename(ws / "moved")  # a folder with folders inside, moved
    (ws / "moved" / "x" / "deep" / "f.txt").write_text("changed below the move")
    (ws / "c").chmod(0o700)
    cps.take([])
    (ws / "moved" / "x" / "deep" / "g.txt").write_text("new, in the moved tree")
    last = cps.take([])
    cps.finish(last.number)
    expected = tree_digest(ws)
    cps.rewind(first.number, history=[])
    assert (ws / "a" / "x" / "deep" / "f.txt").read_text() == "a/x/deep"
    assert not (ws / "moved").exists()
    cps.rewind(last.number, history=[])  # what the watched snapshots recorded is exact
    assert tree_digest(ws) == expected


def test_a_second_process_is_kept_out(tmp_path: Path, ws: Path) -> None:
    cps = checkpoints(tmp_path)
    cps.take([])
    with pytest.raises(CheckpointsBusy, match="another codeloop process"):
        checkpoints(tmp_path).list()
    cps.close()
    assert len(checkpoints(tmp_path).list()) == 1


def test_torn_tails_from_a_crash_are_ignored(tmp_path: Path, ws: Path) -> None:
    (ws / "f.txt").write_text("kept\n")
    cps = checkpoints(tmp_path)
    cp = cps.take(["u"])
    cps.close()
    store = tmp_path / "store"
    with (store / PACK).open("ab") as pack:
        pack.write(b"\x78\x01garbage")
    with (store / INDEX).open("ab") as idx:
        idx.write(b"abc 123")
    with (store / "checkpoints.jsonl").open("ab") as journal:
        journal.write(b'{"type": "checkpoint", "numb')
    reopened = checkpoints(tmp_path)
    assert [c.number for c in reopened.list()] == [cp.number]
    (ws / "f.txt").write_text("changed\n")
    second = reopened.take(["u", "v"])
    assert second.number == 2
    reopened.rewind(cp.number, history=[])
    assert (ws / "f.txt").read_text() == "kept\n"
    reopened.close()
    assert ObjectStore(store).get(second.roots[str(ws)])  # written past the torn bytes


def test_unknown_checkpoint_is_a_clear_error(tmp_path: Path, ws: Path) -> None:
    cps = checkpoints(tmp_path)
    with pytest.raises(
        CheckpointError, match=r"no checkpoint 3 in this session \(checkpoints: none"
    ):
        cps.rewind(3, history=[])


def test_add_dirs_are_covered_and_nested_roots_counted_once(tmp_path: Path, ws: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "e.txt").write_text("extra\n")
    (ws / "sub").mkdir()
    cps = checkpoints(tmp_path, ws, extra, ws / "sub")
    assert cps.roots == [ws.resolve(), extra.resolve()]
    cp = cps.take([])
    (extra / "e.txt").unlink()
    (ws / "sub" / "n.txt").write_text("new\n")
    cps.finish(cp.number)
    cps.rewind(cp.number, history=[])
    assert (extra / "e.txt").read_text() == "extra\n"
    assert not (ws / "sub" / "n.txt").exists()


# --- random histories: every checkpoint restores exactly what it saw -------------------------

NAMES = st.sampled_from(["a", "b", "d/c", "d/e/f", "g"])
OPS = st.one_of(
    st.tuples(st.just("write"), NAMES, st.binary(max_size=40)),
    st.tuples(st.just("remove"), NAMES, st.none()),
    st.tuples(st.just("chmod"), NAMES, st.sampled_from([0o600, 0o644, 0o755, 0o700])),
    st.tuples(st.just("link"), NAMES, st.sampled_from([b"a", b"d", b"../nowhere"])),
    st.tuples(st.just("mkdir"), NAMES, st.none()),
)


def apply_op(ws: Path, op: tuple[str, str, object]) -> None:
    kind, name, arg = op
    path = ws / name
    try:
        if kind == "write":
            assert isinstance(arg, bytes)
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.is_symlink():
                path.unlink()
            path.write_bytes(arg)
        elif kind == "remove":
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.exists() or path.is_symlink():
                path.unlink()
        elif kind == "chmod" and path.exists() and not path.is_symlink():
            assert isinstance(arg, int)
            path.chmod(arg | (0o700 if path.is_dir() else 0))
        elif kind == "link" and not path.exists() and not path.is_symlink():
            assert isinstance(arg, bytes)
            path.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(arg, path)
        elif kind == "mkdir" and not path.exists() and not path.is_symlink():
            path.mkdir(parents=True)
    except (FileExistsError, NotADirectoryError, FileNotFoundError):
        pass  # a parent is a file or a link here: the op does not apply


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    turns=st.lists(st.lists(OPS, min_size=1, max_size=4), min_size=1, max_size=4), data=st.data()
)
def test_random_histories_rewind_to_any_checkpoint(
    tmp_path_factory: pytest.TempPathFactory,
    turns: list[list[tuple[str, str, object]]],
    data: st.DataObject,
) -> None:
    tmp = tmp_path_factory.mktemp("random")
    ws = tmp / "ws"
    ws.mkdir()
    cps = checkpoints(tmp)
    seen: dict[int, str] = {}
    for ops in turns:
        cp = cps.take([])
        seen[cp.number] = tree_digest(ws)
        for op in ops:
            apply_op(ws, op)
        cps.finish(cp.number)
    final = tree_digest(ws)
    target = data.draw(st.sampled_from(sorted(seen)))
    done = cps.rewind(target, history=[])
    assert done.applied is not None and done.applied.failed == []
    assert tree_digest(ws) == seen[target]
    assert done.undo is not None
    cps.rewind(done.undo.number, history=[])
    assert tree_digest(ws) == final
    cps.close()


FLAT = st.sampled_from(["a", "b", "c", "d"])
EDITS = st.lists(st.tuples(FLAT, st.one_of(st.none(), st.binary(max_size=8))), max_size=3)


def state_of(ws: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in ws.iterdir()}


def edit(ws: Path, edits: list[tuple[str, bytes | None]]) -> None:
    for name, content in edits:
        if content is None:
            (ws / name).unlink(missing_ok=True)
        else:
            (ws / name).write_bytes(content)


def changed(a: dict[str, bytes], b: dict[str, bytes]) -> set[str]:
    return {name for name in a.keys() | b.keys() if a.get(name) != b.get(name)}


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    turns=st.lists(st.tuples(EDITS, EDITS), min_size=1, max_size=4),
    force=st.booleans(),
    data=st.data(),
)
def test_random_agent_and_user_edits_undo_exactly_the_agents(
    tmp_path_factory: pytest.TempPathFactory,
    turns: list[tuple[list[tuple[str, bytes | None]], list[tuple[str, bytes | None]]]],
    force: bool,
    data: st.DataObject,
) -> None:
    """Each turn the agent edits, then the user does: a rewind must undo exactly the agent's
    changes since the target, keep the user's, and stop (changing nothing) where both touched
    a file, unless forced."""
    tmp = tmp_path_factory.mktemp("authors")
    ws = tmp / "ws"
    ws.mkdir()
    cps = checkpoints(tmp)
    taken: list[tuple[int, dict[str, bytes], dict[str, bytes]]] = []  # number, before, after
    for agent, user in turns:
        cp = cps.take([])
        before = state_of(ws)
        edit(ws, agent)
        cps.finish(cp.number)
        taken.append((cp.number, before, state_of(ws)))
        edit(ws, user)
    now = state_of(ws)
    k = data.draw(st.integers(0, len(taken) - 1))
    agents: set[str] = set()
    users: set[str] = set()
    for i in range(k, len(taken)):
        _, before, after = taken[i]
        following = taken[i + 1][1] if i + 1 < len(taken) else now
        agents |= changed(before, after)
        users |= changed(after, following)
    target = taken[k][1]
    agents &= changed(target, now)  # changed back since: nothing to do
    conflicts = agents & users

    done = cps.rewind(taken[k][0], history=[], force=force)
    assert sorted(c.path for c in done.plan.conflicts) == sorted(conflicts)
    if conflicts and not force:
        assert done.blocked and state_of(ws) == now
        return
    expected = {n: c for n, c in now.items() if n not in agents}
    expected |= {n: target[n] for n in agents if n in target}
    assert state_of(ws) == expected
    cps.close()


# --- through the session: the Python API ------------------------------------------------------


async def test_session_rewind_undoes_tools_and_truncates_the_history(
    tmp_path: Path, ws: Path
) -> None:
    (ws / "keep.txt").write_text("original\n")
    model = ScriptedModel(
        [
            turn("Look.", tool_use("Bash", {"command": "ls"})),  # read-only: no checkpoint
            turn("Write.", tool_use("Write", {"file_path": "new.txt", "content": "new\n"})),
            turn("Shell.", tool_use("Bash", {"command": "echo changed > keep.txt"})),
            turn("Done."),
        ]
    )
    path = tmp_path / "session.jsonl"
    writer = TranscriptWriter(path, "9a8b7c6d-1234-4e5f-8a9b-0c1d2e3f4a5b", ws)
    config = SessionConfig(
        model="claude-sonnet-4-5", system="t", max_tokens=1024, policy=Policy("bypassPermissions")
    )
    session = Session(
        model,
        default_tools(),
        Workspace(cwd=ws),
        config,
        transcript=writer,
        checkpoints=Checkpoints(tmp_path / "store", [ws]),
    )
    async for _ in session.submit("do it"):
        pass
    assert session.checkpoints is not None
    listed = session.checkpoints.list()
    assert [cp.label for cp in listed] == ["Write: new.txt", "Bash: echo changed > keep.txt"]
    assert listed[0].prompt == "do it"
    assert (ws / "keep.txt").read_text() == "changed\n"

    dry = await session.rewind(1, dry_run=True)
    assert dry.messages is not None and len(dry.messages) == 3  # prompt, ls and its result
    assert len(session.messages) == 8

    done = await session.rewind(1)
    assert (ws / "keep.txt").read_text() == "original\n" and not (ws / "new.txt").exists()
    assert len(session.messages) == 3
    assert read_transcript(path).messages == session.messages
    assert done.files.undo is not None
    first = session.checkpoints.for_message(session.messages[0].uuid)
    assert first is not None and first.number == 1

    undone = await session.rewind(done.files.undo.number)
    assert undone.messages is not None and len(undone.messages) == 8
    assert (ws / "keep.txt").read_text() == "changed\n" and (ws / "new.txt").exists()
    await session.aclose()


async def test_a_sub_agents_writes_are_covered_by_the_task_call(tmp_path: Path, ws: Path) -> None:
    model = ScriptedModel(
        [
            turn("Delegate.", tool_use("Task", {"description": "d", "prompt": "write it"})),
            turn("Sub.", tool_use("Bash", {"command": "echo sub > sub.txt"})),
            turn("Sub done."),
            turn("Done."),
        ]
    )
    config = SessionConfig(
        model="claude-sonnet-4-5", system="t", max_tokens=1024, policy=Policy("bypassPermissions")
    )
    writer = TranscriptWriter(tmp_path / "s.jsonl", "9a8b7c6d-1234-4e5f-8a9b-0c1d2e3f4a5c", ws)
    cps = Checkpoints(tmp_path / "store", [ws])
    session = Session(
        model, default_tools(), Workspace(cwd=ws), config, transcript=writer, checkpoints=cps
    )
    async for _ in session.submit("delegate"):
        pass
    assert (ws / "sub.txt").exists()
    assert [cp.label for cp in cps.list()] == ["Task: d"]
    await session.rewind(1, conversation=False)
    assert not (ws / "sub.txt").exists()
    await session.aclose()


def test_git_runs_never(tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Snapshots read the folder themselves: no git process, so no user hook or config runs."""
    calls: list[object] = []
    real = subprocess.Popen.__init__

    def spy(self: Any, *args: Any, **kwargs: Any) -> None:
        calls.append(args[0] if args else kwargs.get("args"))
        real(self, *args, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "__init__", spy)
    odd_tree(ws)
    cps = checkpoints(tmp_path)
    cp = cps.take([])
    vandalize(ws)
    cps.finish(cp.number)
    cps.rewind(cp.number, history=[])
    assert calls == []
    (ws / "locked").chmod(0o755)


async def test_a_checkpoint_that_cannot_be_taken_costs_a_warning_not_the_write(
    tmp_path: Path, ws: Path
) -> None:
    cps = checkpoints(tmp_path)
    cps.close()  # closing stops any snapshot still running, and every later one
    call = ToolUseBlock("toolu_1", "Bash", {"command": "echo x > f"})
    warning = await cps.before_write((), call)
    assert warning is not None
    assert warning.startswith("no checkpoint for this turn, so it cannot be rewound: the session")
