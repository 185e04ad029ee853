"""What a review compares, in real git repositories: the default branch (origin/HEAD, else
main, else master), and the head-side lines a diff adds or changes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from codeloop.review.changes import ReviewError, collect, default_branch, touched_lines


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def new_repo(path: Path, branch: str) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", branch)
    git(path, "config", "user.email", "d@e.f")
    git(path, "config", "user.name", "D")
    (path / "f.txt").write_text("one\n")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "one")
    return path


def test_the_default_branch_is_origin_head_then_main_then_master(tmp_path: Path) -> None:
    upstream = new_repo(tmp_path / "upstream", "trunk")
    git(tmp_path, "clone", "-q", str(upstream), "clone")
    clone = tmp_path / "clone"
    git(clone, "branch", "main")  # a local main does not beat origin/HEAD
    assert default_branch(clone) == "origin/trunk"
    assert default_branch(new_repo(tmp_path / "m", "main")) == "main"
    assert default_branch(new_repo(tmp_path / "old", "master")) == "master"
    with pytest.raises(ReviewError, match="origin/HEAD, main and master"):
        default_branch(new_repo(tmp_path / "other", "develop"))


def test_touched_lines_follow_git_through_new_renamed_and_deleted_files(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "r", "main")
    lines = "".join(f"line {n}\n" for n in range(1, 21))
    (repo / "old name.txt").write_text(lines)
    (repo / "gone.txt").write_text("bye\n")
    (repo / "edge.txt").write_text("a\nb")  # no newline at the end
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    git(repo, "mv", "old name.txt", "new name.txt")
    (repo / "new name.txt").write_text(lines.replace("line 10\n", "line ten\nline 10.5\n"))
    (repo / "gone.txt").unlink()
    (repo / "fresh.py").write_text("x = 1\ny = 2\n")
    (repo / "edge.txt").write_text("a\nB")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "two")
    changes = collect(repo, "HEAD~1", "HEAD")
    assert changes.touched == {"new name.txt": {10, 11}, "fresh.py": {1, 2}, "edge.txt": {2}}
    assert touched_lines(changes.diff) == changes.touched


def test_the_users_diff_config_changes_nothing(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "r", "main")
    (repo / "sub").mkdir()
    (repo / "sub" / "g.txt").write_text("x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "two")
    (repo / "sub" / "g.txt").write_text("x\ny\n")
    settings = {"diff.noprefix": "true", "diff.mnemonicPrefix": "true", "diff.relative": "true"}
    for key, value in (settings | {"color.diff": "always"}).items():
        git(repo, "config", key, value)
    assert collect(repo, "HEAD", None).touched == {"sub/g.txt": {2}}


def test_the_working_tree_counts_new_files_git_does_not_know_yet(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "r", "main")
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "new dir").mkdir()
    (repo / "new dir" / "n.py").write_text("a = 1\nb = 2\n")
    (repo / "debug.log").write_text("ignored\n")
    changes = collect(repo, "HEAD", None)
    assert changes.touched == {".gitignore": {1}, "new dir/n.py": {1, 2}}
    assert "+b = 2" in changes.diff and "new dir/n.py (new, untracked)" in changes.stat
    assert "debug.log" not in changes.diff
    assert collect(repo, "HEAD", "HEAD").empty  # between commits, only what they hold
    assert not subprocess.run(  # and looking added nothing to the index
        ["git", "diff", "--cached", "--quiet"], cwd=repo, check=False
    ).returncode
