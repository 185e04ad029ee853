"""Workspaces made with real git: what a task changes shows in its diff, nothing else moves."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeloop.batch import workspace
from codeloop.testing import batch as fixture
from codeloop.testing.tree import tree_digest


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    (path / "a.txt").write_text("one\n")
    (path / ".gitignore").write_text("build/\n")
    fixture.git("init", "--quiet", "--initial-branch=main", cwd=path)
    fixture.git("add", "--all", cwd=path)
    fixture.git("commit", "--quiet", "-m", "first", cwd=path)
    fixture.git("branch", "old", cwd=path)
    (path / "a.txt").write_text("two\n")
    fixture.git("commit", "--quiet", "--all", "-m", "second", cwd=path)
    return path


def test_diff_holds_edits_new_files_and_commits_but_not_ignored_files(
    repo: Path, tmp_path: Path
) -> None:
    before = tree_digest(repo)
    ws = workspace.prepare(str(repo), "old", tmp_path / "ws", tmp_path / "cache")
    assert (ws.path / "a.txt").read_text() == "one\n"
    (ws.path / "a.txt").write_text("changed\n")
    (ws.path / "new.txt").write_text("new\n")
    (ws.path / "build").mkdir()
    (ws.path / "build" / "out.o").write_text("ignored\n")
    fixture.git("add", "new.txt", cwd=ws.path)
    fixture.git("commit", "--quiet", "-m", "the agent committed", cwd=ws.path)
    (ws.path / "later.txt").write_text("after the commit\n")
    patch = workspace.diff(ws)
    assert "+changed" in patch and "+++ b/new.txt" in patch and "+++ b/later.txt" in patch
    assert "out.o" not in patch
    assert tree_digest(repo) == before
    # The patch takes the original, at the base, to the workspace's state.
    check = tmp_path / "check"
    fixture.git("clone", "--quiet", str(repo), str(check), cwd=tmp_path)
    fixture.git("checkout", "--quiet", ws.base_commit, cwd=check)
    (tmp_path / "p.diff").write_text(patch)
    fixture.git("apply", str(tmp_path / "p.diff"), cwd=check)
    assert (check / "later.txt").read_text() == "after the commit\n"


def test_a_url_is_cloned_once_and_fetched_again_for_a_ref_it_lacks(
    repo: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    url = repo.as_uri()
    first = workspace.prepare(url, None, tmp_path / "w1", cache)
    (mirror,) = cache.glob("*.git")
    fixture.git("tag", "late", "old", cwd=repo)
    second = workspace.prepare(url, "late", tmp_path / "w2", cache)
    assert list(cache.glob("*.git")) == [mirror]
    assert first.base_commit != second.base_commit
    assert (second.path / "a.txt").read_text() == "one\n"
    with pytest.raises(workspace.WorkspaceError, match="has no commit 'nope'"):
        workspace.prepare(url, "nope", tmp_path / "w3", cache)


def test_a_plain_folder_is_copied_and_a_leftover_workspace_replaced(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "f.txt").write_text("x\n")
    dest = tmp_path / "ws"
    dest.mkdir()
    (dest / "stale.txt").write_text("from a killed run\n")
    ws = workspace.prepare(str(plain), None, dest, tmp_path / "cache")
    assert sorted(p.name for p in ws.path.iterdir() if p.name != ".git") == ["f.txt"]
    (ws.path / "f.txt").write_text("y\n")
    assert "+y" in workspace.diff(ws)
    assert not (plain / ".git").exists()
    with pytest.raises(workspace.WorkspaceError, match="not a git repository"):
        workspace.prepare(str(plain), "main", dest, tmp_path / "cache")


def test_a_folder_inside_a_repository_is_copied_not_cloned(repo: Path, tmp_path: Path) -> None:
    (repo / "sub").mkdir()
    (repo / "sub" / "s.txt").write_text("in a subfolder\n")
    ws = workspace.prepare(str(repo / "sub"), None, tmp_path / "ws", tmp_path / "cache")
    assert sorted(p.name for p in ws.path.iterdir()) == [".git", "s.txt"]
    assert workspace.diff(ws) == ""
