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


def codeloop_home(env: Mapping[str, str]) -> Path:
    raw = env.get("CODELOOP_HOME", "").strip()
    if raw:
        return Path(raw).expanduser()
    home = env.get("HOME", "").strip()
    return (Path(home) if home else Path.home()) / ".codeloop"


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


def git_branch(directory: Path) -> str | None:
    """The checked-out branch ("HEAD" when detached), read from .git without running git;
    None outside a repository."""
    for parent in (directory, *directory.parents):
        dot_git = parent / ".git"
        try:
            if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
                pointer = dot_git.read_text(encoding="utf-8").strip()
                git_dir = parent / pointer.removeprefix("gitdir:").strip()
            elif dot_git.is_dir():
                git_dir = dot_git
            else:
                continue
            head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None
        return head[5:].removeprefix("refs/heads/") if head.startswith("ref: ") else "HEAD"
    return None
