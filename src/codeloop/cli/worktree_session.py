"""`--worktree [NAME]`: the session runs in a worktree of its own (worktree.py makes it, or the
WorktreeCreate hooks do), and at the end the worktree goes when nothing changed in it; with
changes the interactive UI asks, a headless run keeps it and says where."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path

from codeloop.frontdoor.session_flags import setting_sources
from codeloop.hooks.hook_runner import HookRunner
from codeloop.settings.settings_files import load_settings
from codeloop.store.session_store import SessionStore
from codeloop.types import new_uuid
from codeloop.worktree import (
    Worktree,
    create_with_git,
    from_hook,
    has_changes,
    remove_with_git,
    worktree_name,
)


def run_in_worktree(
    args: argparse.Namespace, run: Callable[[argparse.Namespace], int], *, interactive: bool
) -> int:
    """Make the worktree, run the session there (`run`), then clean up after it."""
    cwd = Path.cwd()
    hooks, env = _hooks(args, cwd)
    name = worktree_name(args.worktree)
    if hooks.configured("WorktreeCreate"):  # the hook replaces git
        outcome = asyncio.run(hooks.run("WorktreeCreate", {"name": name}))
        tree = from_hook(outcome, name, hooks.project_dir)
    else:
        tree = create_with_git(cwd, name)
    os.chdir(tree.path)
    try:
        return run(args)
    finally:
        os.chdir(cwd)
        hooks.transcript_path = str(SessionStore(tree.path, env).path_for(hooks.session_id))
        _finish(tree, hooks, interactive=interactive)


def _hooks(args: argparse.Namespace, cwd: Path) -> tuple[HookRunner, dict[str, str]]:
    """The project's hooks (for WorktreeCreate/WorktreeRemove, around the session), and the
    session's id: a new session gets it now, so the hooks and the session share it."""
    settings = load_settings(
        cwd, cli=args.settings, env=os.environ, sources=setting_sources(args.setting_sources)
    )
    env = {**os.environ, **settings.env}
    if args.session_id is None and not (args.continue_conversation or args.resume is not None):
        args.session_id = new_uuid()
    session_id = args.session_id or new_uuid()
    skip = args.dangerously_skip_permissions
    mode = "bypassPermissions" if skip else args.permission_mode
    mode = mode or settings.permissions.default_mode or "default"
    transcript = SessionStore(cwd, env).path_for(session_id)
    runner = HookRunner(settings.hooks, session_id, transcript, cwd, env=env)
    runner.permission_mode = lambda: mode
    return runner, env


def _finish(tree: Worktree, hooks: HookRunner, *, interactive: bool) -> None:
    """Remove the worktree unless it holds changes the user keeps; say what stays."""
    where = f"{tree.path}" + (f" (branch {tree.branch})" if tree.branch else "")
    if has_changes(tree) and not (interactive and _remove_anyway(where)):
        print(f"codeloop: kept the worktree {where}: it has changes", file=sys.stderr)
        return
    if tree.branch is None and hooks.configured("WorktreeRemove"):
        outcome = asyncio.run(hooks.run("WorktreeRemove", {"worktree_path": str(tree.path)}))
        failed = [run for run in outcome.runs if run.exit_code != 0]
        why = None
        if failed and tree.path.exists():  # a hook that deleted it and then failed counts
            detail = failed[0].stderr.strip() or f"exit status {failed[0].exit_code}"
            why = f"the WorktreeRemove hook `{failed[0].command}` failed: {detail}"
    else:
        why = remove_with_git(tree)
    if why is not None:
        print(f"codeloop: the worktree {where} stays: {why}", file=sys.stderr)


def _remove_anyway(where: str) -> bool:
    if not sys.stdin.isatty():
        return False
    try:
        answer = input(f"The worktree {where} has changes. Remove it and its changes? [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")
