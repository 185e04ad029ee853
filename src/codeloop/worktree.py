"""A session's own git worktree (`--worktree [NAME]`), as Claude Code makes one:
`<repo>/.claude/worktrees/<name>` on a new branch `worktree-<name>` from where origin/HEAD
points (HEAD without a remote), the gitignored files `.worktreeinclude` names copied in. A
WorktreeCreate hook replaces git: the path it prints is the worktree. At the end a worktree
without changes goes (its branch too); a hook's goes through the WorktreeRemove hooks, or
`git worktree remove --force` when there are none.

Blocking (git and the file system), called before the session starts and after it ended.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from pathlib import Path

from codeloop.errors import CodeloopError
from codeloop.hooks.hook_runner import HookOutcome
from codeloop.shell.git_check import protective_env
from codeloop.system.procs import GitError, git
from codeloop.system.valueclass import valueclass

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_ADJECTIVES = ("bold", "bright", "calm", "eager", "gentle", "keen", "quiet", "swift", "warm")
_NOUNS = ("oak", "fox", "river", "meadow", "comet", "harbor", "pine", "lark", "stone")


class WorktreeError(CodeloopError):
    """The worktree cannot be made or used; the message says why."""


@valueclass
class Worktree:
    path: Path
    repo: Path | None  # the repository it belongs to (None: a hook's, outside any)
    name: str
    branch: str | None  # worktree-<name> when git made it; None when a hook did
    base: str | None  # the commit it started from: later commits are changes


def worktree_name(requested: str) -> str:
    """The name asked for, checked; or a new one like `bold-oak-a3f2`."""
    if not requested:
        words = (secrets.choice(_ADJECTIVES), secrets.choice(_NOUNS), secrets.token_hex(2))
        return "-".join(words)
    if not _NAME.fullmatch(requested):
        raise WorktreeError(
            f"--worktree {requested}: a name is letters, digits, '.', '_' and '-' "
            "(at most 64, starting with a letter or digit)"
        )
    return requested


def repo_root(cwd: Path) -> Path | None:
    try:
        return Path(_look("rev-parse", "--show-toplevel", cwd=cwd).strip())
    except GitError:
        return None


def create_with_git(cwd: Path, name: str) -> Worktree:
    """`git worktree add` under the repository's .claude/worktrees; an existing worktree of
    that name is used again."""
    repo = repo_root(cwd)
    if repo is None:
        raise WorktreeError(
            f"--worktree needs a git repository (or a WorktreeCreate hook): {cwd} is in none"
        )
    path, branch = repo / ".claude" / "worktrees" / name, f"worktree-{name}"
    base = _start_point(repo)
    if path.is_dir() and repo_root(path) == path:
        return Worktree(path, repo, name, branch, base)
    try:
        if _has_branch(repo, branch):
            git("worktree", "add", str(path), branch, cwd=repo)
        else:
            git("worktree", "add", "-b", branch, str(path), base, cwd=repo)
    except GitError as exc:
        raise WorktreeError(f"--worktree {name}: {exc}") from None
    _copy_included(repo, path)
    return Worktree(path, repo, name, branch, base)


def from_hook(outcome: HookOutcome, name: str, ran_in: Path) -> Worktree:
    """The worktree a WorktreeCreate hook made: the last non-empty line of a command's stdout
    (an http hook's `worktreePath`), relative to where it ran. Any failure fails it."""
    failed = [run for run in outcome.runs if run.exit_code != 0]
    if failed:
        run = failed[0]
        why = run.stderr.strip() or f"exit status {run.exit_code}"
        raise WorktreeError(f"the WorktreeCreate hook `{run.command}` failed: {why}")
    said = [str(s["worktreePath"]) for s in outcome.specific if s.get("worktreePath")]
    for run in outcome.runs:
        lines = [ln for ln in _ANSI.sub("", run.stdout).splitlines() if ln.strip()]
        said += lines[-1:]
    if not said:
        raise WorktreeError("the WorktreeCreate hook printed no worktree path")
    raw = said[-1].strip()
    if os.path.isabs(raw) and any(part in (".", "..") for part in raw.split("/")):
        raise WorktreeError(f"the WorktreeCreate hook's path {raw} has '.' or '..' in it")
    path = Path(os.path.normpath(ran_in / raw))
    repo = repo_root(ran_in)
    if repo is not None and path.is_relative_to(repo):
        for above in [path, *path.parents]:
            if above == repo:
                break
            if above.is_symlink():
                raise WorktreeError(
                    f"the WorktreeCreate hook's path {path} passes through the symlink {above}"
                )
    if not path.is_dir():
        raise WorktreeError(f"the WorktreeCreate hook's path {path} is not a directory")
    return Worktree(path, repo_root(path), name, None, None)


def has_changes(tree: Worktree) -> bool:
    """Changed or untracked files, or commits since it started (git's view: a folder that is
    no git checkout has none)."""
    try:
        if _look("status", "--porcelain", cwd=tree.path).strip():
            return True
        if tree.base is None:
            return False
        return _look("rev-list", "--count", f"{tree.base}..HEAD", cwd=tree.path).strip() != "0"
    except GitError:
        return False


def remove_with_git(tree: Worktree) -> str | None:
    """`git worktree remove --force` (and the branch git made); None when it went, else why
    it stayed."""
    owner = tree.repo or repo_root(tree.path)
    if owner is None:
        return f"{tree.path} is not a git worktree, so it stays (a WorktreeRemove hook removes it)"
    try:
        git("worktree", "remove", "--force", str(tree.path), cwd=owner)
        if tree.branch is not None:
            git("branch", "-D", tree.branch, cwd=owner)
    except GitError as exc:
        return str(exc)
    return None


def _look(*args: str, cwd: Path) -> str:
    """A git command that only reads, under the protective config: looking at a repository
    never runs a program it names (core.fsmonitor)."""
    return git("--no-optional-locks", *args, cwd=cwd, env=protective_env(os.environ))


def _start_point(repo: Path) -> str:
    """Where origin/HEAD points, else HEAD: the commit new worktrees branch from."""
    for ref in ("origin/HEAD", "HEAD"):
        try:
            return _look("rev-parse", "--verify", "-q", f"{ref}^{{commit}}", cwd=repo).strip()
        except GitError:
            continue
    raise WorktreeError(f"--worktree: the repository {repo} has no commit to branch from yet")


def _has_branch(repo: Path, branch: str) -> bool:
    try:
        _look("rev-parse", "--verify", "-q", f"refs/heads/{branch}", cwd=repo)
    except GitError:
        return False
    return True


def _copy_included(repo: Path, path: Path) -> None:
    """The gitignored files `.worktreeinclude` names (gitignore syntax): .env and the like."""
    include = repo / ".worktreeinclude"
    if not include.is_file():
        return
    listed = ("ls-files", "--others", "--ignored", "-z")
    ignored = set(_look(*listed, "--exclude-standard", cwd=repo).split("\0"))
    named = _look(*listed, f"--exclude-from={include}", cwd=repo).split("\0")
    for rel in (r for r in named if r and r in ignored):
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / rel, target)
