"""A task's own workspace: a clone of its repository at its ref, and the diff it ends with.

Blocking (git and the file system): the async runner calls these in a thread.

A local repository is cloned with `git clone --local` (objects hard-linked, the original left
as it was: no worktree entry, no new ref); a URL is cloned once into a bare cache that every
task of that repository then clones locally. A folder that is not a git repository is copied
and committed as the base, so its diff is taken the same way.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import re
import shutil
from pathlib import Path

from codeloop.system.procs import GitError, git
from codeloop.system.valueclass import valueclass

# A copied folder's base commit: the same folder gives the same commit id in every run.
_BASE_COMMIT_ENV = {
    "GIT_AUTHOR_NAME": "codeloop batch",
    "GIT_AUTHOR_EMAIL": "batch@codeloop.invalid",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_NAME": "codeloop batch",
    "GIT_COMMITTER_EMAIL": "batch@codeloop.invalid",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}


class WorkspaceError(Exception):
    """The workspace could not be made or read; the message says why, for the results."""


@valueclass
class Workspace:
    path: Path
    base_commit: str


def prepare(source: str, ref: str | None, dest: Path, cache: Path) -> Workspace:
    """A fresh workspace at `dest` (whatever was there goes: a killed run's leftovers)."""
    remove(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    is_url = "://" in source or not Path(source).exists()
    if not is_url and not _is_git_repo(Path(source)):
        if ref is not None:
            raise WorkspaceError(f"{source} is not a git repository, so it has no ref {ref!r}")
        return _copy(Path(source), dest)
    origin = _cached(source, ref, cache) if is_url else source
    git("clone", "--quiet", "--no-checkout", "--local", origin, str(dest))
    commit = _resolve(dest, ref or "HEAD")
    if commit is None:
        raise WorkspaceError(f"{source} has no commit {ref!r}")
    git("checkout", "--quiet", "--detach", commit, cwd=dest)
    return Workspace(dest, commit)


def diff(workspace: Workspace) -> str:
    """Everything the task changed, committed or not, new files included (what .gitignore
    ignores excepted), as a patch `git apply` and `patch -p1` take."""
    git("add", "--all", cwd=workspace.path)
    return git(
        "diff",
        "--cached",
        "--binary",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-renames",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        workspace.base_commit,
        cwd=workspace.path,
    )


def remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def _is_git_repo(path: Path) -> bool:
    """Whether `path` is a repository: its top folder (.git, a folder or a worktree's file), or
    a bare one. A folder inside a repository is just a folder, copied like any other."""
    if (path / ".git").exists():
        return True
    return (path / "HEAD").is_file() and (path / "objects").is_dir()


def _resolve(repo: Path, ref: str) -> str | None:
    """The commit `ref` names: a commit, a tag, a branch of the clone or of its origin."""
    for candidate in (ref, f"origin/{ref}"):
        try:
            out = git("rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}", cwd=repo)
        except GitError:
            continue
        return out.strip()
    return None


def _cached(url: str, ref: str | None, cache: Path) -> str:
    """A bare clone of `url` under `cache`, made once (a file lock keeps concurrent tasks
    from cloning it twice) and fetched again when it lacks `ref`."""
    slug = re.sub(r"[^A-Za-z0-9._-]", "_", url.rstrip("/").rsplit("/", 1)[-1])[:60]
    digest = hashlib.sha256(url.encode()).hexdigest()[:10]
    mirror = cache / f"{slug}-{digest}.git"
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f"{mirror.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (mirror / "HEAD").exists():
                partial = mirror.with_suffix(".partial")
                remove(partial)
                git("clone", "--quiet", "--bare", url, str(partial))
                partial.rename(mirror)
            elif ref is not None and _resolve(mirror, ref) is None:
                git(
                    "fetch",
                    "--quiet",
                    "origin",
                    "+refs/heads/*:refs/heads/*",
                    "+refs/tags/*:refs/tags/*",
                    cwd=mirror,
                )
        finally:
            with contextlib.suppress(OSError):
                fcntl.flock(lock, fcntl.LOCK_UN)
    return str(mirror)


def _copy(source: Path, dest: Path) -> Workspace:
    shutil.copytree(source, dest, symlinks=True)
    git("init", "--quiet", cwd=dest)
    git("add", "--all", cwd=dest)
    git(
        "commit",
        "--quiet",
        "--allow-empty",
        "--no-verify",
        "--no-gpg-sign",
        "-m",
        "codeloop batch: the folder as it was",
        cwd=dest,
        env=_BASE_COMMIT_ENV,
    )
    commit = _resolve(dest, "HEAD")
    assert commit is not None
    return Workspace(dest, commit)
