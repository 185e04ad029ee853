"""Where codeloop keeps its data, and what it needs to know about the project it works in.

Data lives under CODELOOP_HOME (default ~/.codeloop). Each project gets a folder named after
its absolute path with every character that is not a letter or a digit turned into "-", as
Claude Code names its own, so a person can find a project's sessions by eye.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path

# File names stay well under the 255-byte limit; longer paths keep a prefix and a hash.
MAX_SLUG = 200
# Version-control folders: searches skip them, the permission checks' walks too.
VCS_DIRS = (".git", ".svn", ".hg", ".bzr", ".jj")


def home_dir(env: Mapping[str, str]) -> Path:
    """The user's home: HOME when set (tests and sandboxes move it), else the account's."""
    home = env.get("HOME", "").strip()
    return Path(home) if home else Path.home()


def codeloop_home(env: Mapping[str, str]) -> Path:
    raw = env.get("CODELOOP_HOME", "").strip()
    if raw:
        return Path(raw).expanduser()
    return home_dir(env) / ".codeloop"


def project_slug(project: Path) -> str:
    slug = re.sub(r"[^A-Za-z0-9]", "-", str(project))
    if len(slug) <= MAX_SLUG:
        return slug
    digest = hashlib.sha256(str(project).encode()).hexdigest()[:12]
    return f"{slug[:MAX_SLUG]}-{digest}"


def projects_dir(env: Mapping[str, str]) -> Path:
    return codeloop_home(env) / "projects"


def project_dir(project: Path, env: Mapping[str, str]) -> Path:
    """The folder holding the transcripts of sessions started in `project`."""
    return projects_dir(env) / project_slug(project)


def find_repo_root(directory: Path) -> Path | None:
    """The nearest directory at or above `directory` holding `.git` (a directory, or a
    worktree's or submodule's file)."""
    return next((d for d in (directory, *directory.parents) if (d / ".git").exists()), None)


def git_dir(directory: Path) -> Path | None:
    """The repository folder of the checkout `directory` is in (a worktree's or submodule's
    own, through its `.git` file); None outside a repository."""
    root = find_repo_root(directory)
    if root is None:
        return None
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    try:  # a worktree or submodule: "gitdir: <path>"
        pointer = dot_git.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return root / pointer.removeprefix("gitdir:").strip()


def _head(directory: Path) -> tuple[Path, str] | None:
    found = git_dir(directory)
    if found is None:
        return None
    text = _read_head(found)
    return None if text is None else (found, text)


def _read_head(repo: Path) -> str | None:
    try:
        return (repo / "HEAD").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None


def branch_in(repo: Path) -> str | None:
    """The branch checked out in a repository folder (`git_dir`'s; "HEAD" when detached),
    read without running git: one small read, where finding the folder walks up the tree."""
    text = _read_head(repo)
    if text is None:
        return None
    return text[5:].removeprefix("refs/heads/") if text.startswith("ref: ") else "HEAD"


def git_head(directory: Path) -> str | None:
    """What HEAD points to, as "BRANCH COMMIT" (or the commit alone when detached), read from
    .git without running git; None outside a repository."""
    head = _head(directory)
    if head is None:
        return None
    found, text = head
    if not text.startswith("ref: "):
        return text
    ref = text[5:]
    common = found
    try:
        if (found / "commondir").is_file():  # a worktree keeps its refs in the main repository
            common = found / (found / "commondir").read_text(encoding="utf-8").strip()
        commit = (common / ref).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        commit = _packed_ref(common, ref) or "(no commit yet)"
    except (OSError, UnicodeDecodeError):
        commit = "(unreadable)"
    return f"{ref.removeprefix('refs/heads/')} {commit}"


def _packed_ref(common: Path, ref: str) -> str | None:
    try:
        lines = (common / "packed-refs").read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for line in lines:
        commit, _, name = line.partition(" ")
        if name == ref:
            return commit
    return None
