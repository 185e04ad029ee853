"""Working directories added while a session runs (`/add-dir PATH`; an SDK's repo root would
come the same way): from then on the permission rules, the sandbox and the file tools treat
the folder as --add-dir does, the model is told on its next turn, and DirectoryAdded fires.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from codeloop.errors import CodeloopError
from codeloop.system.valueclass import valueclass

if TYPE_CHECKING:
    from codeloop.session import Session

Source = Literal["slash_command", "register_repo_root"]


class DirectoryError(CodeloopError):
    """The path cannot be added; the message says why, for the user."""


@valueclass
class Added:
    path: Path
    # DirectoryAdded hooks that failed, for the user (the add itself stands).
    hook_errors: tuple[str, ...] = ()


async def add_directory(session: Session, raw: str, source: Source) -> Added:
    """Add `raw` (relative to the shell's folder, `~` expanded) for the rest of the session and
    fire DirectoryAdded (after the add, which it cannot undo). Raises DirectoryError."""
    workspace = session.workspace
    # The working directories as the rules see them: the project's first (`cd` moves no root).
    roots = session.config.policy.roots or workspace.roots
    path = _checked(raw, workspace.cwd, roots)
    workspace.extra_dirs.append(path)  # file tools, sub-agents forked from now, the sandbox
    session.config.policy.add_root(path)
    if session.checkpoints is not None:  # /rewind restores it too
        session.checkpoints.add_root(path)
    session.remind(
        f"The user added {path} as a working directory for this session: its files may be "
        "read and edited like the project's."
    )
    if session.hooks is None:
        return Added(path)
    outcome = await session.hooks.run("DirectoryAdded", {"directory": str(path), "source": source})
    # As Claude Code: what the hooks say is for the model's next turn, their failures the user's.
    told = [m for m in outcome.system_messages if m not in outcome.errors]
    if text := "\n\n".join(part for part in (*told, outcome.for_model()) if part):
        session.remind(f"DirectoryAdded hook: {text}")
    return Added(path, outcome.errors)


def _checked(raw: str, cwd: Path, roots: list[Path]) -> Path:
    """The folder `raw` names, if it is one and not already a working directory's."""
    if not raw.strip():
        raise DirectoryError("give the directory to add: /add-dir PATH")
    path = Path(os.path.realpath(cwd / Path(raw.strip()).expanduser()))
    if not path.exists():
        raise DirectoryError(f"{path}: no such directory")
    if not path.is_dir():
        raise DirectoryError(f"{path} is not a directory (did you mean its folder, {path.parent}?)")
    for root in roots:
        if path == root or path.is_relative_to(root):
            raise DirectoryError(f"{path} is already inside the working directory {root}")
    return path
