"""The environment the system prompt describes: where we are, on what, when, and the git state.

Gathered once per session (a snapshot, so the system prompt stays byte-identical and cached),
with the git commands run concurrently, each bounded: a huge or locked repository slows the
start by at most `GIT_TIME_LIMIT`, and a missing `git` only drops the git section.
"""

from __future__ import annotations

import asyncio
import datetime
import os
import platform
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from codeloop.shell.git_env import protective_env
from codeloop.store.data_paths import find_repo_root
from codeloop.system.procs import run_bounded
from codeloop.system.valueclass import valueclass

GIT_TIME_LIMIT = 5.0
STATUS_MAX_CHARS = 2000
RECENT_COMMITS = 5
# The compact profile's status (tools/profile.py): its first lines, then how many more.
BRIEF_STATUS_LINES = 8


@valueclass
class GitState:
    branch: str
    status: str
    recent_commits: str


@valueclass
class Environment:
    cwd: Path
    model: str
    platform: str
    os_version: str
    date: str
    extra_dirs: tuple[Path, ...] = ()
    repo_root: Path | None = None
    git: GitState | None = None

    def render(self, *, brief: bool = False) -> str:
        """`brief`: a short git status (the compact profile's)."""
        lines = [
            "<env>",
            f"Working directory: {self.cwd}",
            f"Is directory a git repo: {'yes' if self.repo_root else 'no'}",
        ]
        if self.extra_dirs:
            lines.append("Additional working directories: " + ", ".join(map(str, self.extra_dirs)))
        lines += [
            f"Platform: {self.platform}",
            f"OS Version: {self.os_version}",
            f"Today's date: {self.date}",
            f"Model: {self.model}",
            "</env>",
        ]
        if self.git is not None:
            lines += ["", _render_brief_git(self.git) if brief else _render_git(self.git)]
        return "\n".join(lines)


def basic_environment(
    cwd: Path, model: str, extra_dirs: Sequence[Path] = (), *, today: datetime.date | None = None
) -> Environment:
    """Everything but the git state: no process is started."""
    return Environment(
        cwd=cwd,
        model=model,
        platform=platform.system().lower(),
        os_version=f"{platform.system()} {platform.release()}",
        date=(today or datetime.date.today()).isoformat(),
        extra_dirs=tuple(extra_dirs),
        repo_root=find_repo_root(cwd),
    )


class GitProbe:
    """Branch, short status and recent commits of `cwd`, asked of git concurrently and at once:
    each question is a task whose first step spawns its git, so the processes run from the
    caller's next `await` on while it goes on (the builder asks first and assembles the session
    meanwhile). Outside a repository no process starts; `cancel` kills those under way."""

    def __init__(self, cwd: Path, *, time_limit: float = GIT_TIME_LIMIT) -> None:
        asks = (
            ("branch", "--show-current"),
            ("status", "--short"),
            ("log", "--oneline", f"-n{RECENT_COMMITS}"),
        )
        self._asks = (
            [asyncio.create_task(_git(cwd, time_limit, *a), name=f"git {a[0]}") for a in asks]
            if find_repo_root(cwd) is not None
            else []
        )

    async def state(self) -> GitState | None:
        """None without git (or outside a repository)."""
        if not self._asks:
            return None
        branch, status, log = await asyncio.gather(*self._asks)
        if branch is None and status is None:
            return None
        return GitState(
            branch=(branch or "").strip() or "(detached HEAD)",
            status=_clip((status or "").rstrip()),
            recent_commits=(log or "").strip(),
        )

    def cancel(self) -> None:
        for ask in self._asks:
            ask.cancel()


async def gather_environment(
    cwd: Path,
    model: str,
    extra_dirs: Sequence[Path] = (),
    *,
    time_limit: float = GIT_TIME_LIMIT,
    git: GitProbe | None = None,
) -> Environment:
    """`git`: the probe of `cwd` already under way; else one starts now."""
    env = basic_environment(cwd, model, extra_dirs)
    if env.repo_root is None:
        return env
    state = await (git or GitProbe(cwd, time_limit=time_limit)).state()
    return replace(env, git=state)


async def _git(cwd: Path, time_limit: float, *args: str) -> str | None:
    """Its stdout, or None when git is missing, fails or takes too long."""
    # --no-optional-locks: a status run by us must never block the user's own git commands;
    # the protective config: it must never run a program the repository names (fsmonitor).
    command = ["git", "--no-optional-locks", *args]
    try:
        env = protective_env(os.environ)
        done = await run_bounded(command, time_limit=time_limit, cwd=cwd, env=env)
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None


def _clip(status: str) -> str:
    if len(status) <= STATUS_MAX_CHARS:
        return status
    return (
        status[:STATUS_MAX_CHARS]
        + "\n... (truncated: run `git status` with the Bash tool for the full list)"
    )


def _render_git(git: GitState) -> str:
    parts = [
        "gitStatus: the git state when the conversation started. It is a snapshot: it does not "
        "change as the conversation goes on.",
        f"Current branch: {git.branch}",
        f"Status:\n{git.status or '(clean)'}",
    ]
    if git.recent_commits:
        parts.append(f"Recent commits:\n{git.recent_commits}")
    return "\n\n".join(parts)


def _render_brief_git(git: GitState) -> str:
    status = git.status.splitlines()
    shown = status[:BRIEF_STATUS_LINES]
    if len(status) > len(shown):
        shown.append(f"... and {len(status) - len(shown)} more (git status shows them)")
    listed = "\n".join(shown) or "(clean)"
    return f"gitStatus at the start: branch {git.branch}\n{listed}"
