"""What a list of checkpoints and a rewind say, as lines: `codeloop rewind` prints them, the
UI's /rewind shows them. One wording for every frontend."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path
from typing import Literal

from codeloop.checkpoints.journal import Checkpoint
from codeloop.checkpoints.manager import Checkpoints
from codeloop.checkpoints.restore import Change
from codeloop.checkpoints.rewinding import Rewound
from codeloop.system.valueclass import valueclass


def summary(cp: Checkpoint) -> str:
    """One line: the number, when, the call that needed it and the prompt."""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(cp.created))
    prompt = f'  "{cp.prompt}"' if cp.prompt and cp.kind == "turn" else ""
    return f"{cp.number:>3}  {when}  before {cp.label or 'a write'}{prompt}"


def changed_line(checkpoints: Checkpoints, cp: Checkpoint, project: Path) -> str:
    """What the turn after `cp` changed, on one line ("" when nothing)."""
    changed = checkpoints.changed_by(cp)
    if changed is None:
        return "(the turn did not finish: what it changed is not known)"
    names = [relative(Path(p), project) for p in changed]
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return f"changed {', '.join(names[:3])}{more}" if names else ""


@valueclass(frozen=False)
class Said:
    """A rewind's report, in order: lines of output, warnings (the conflicts it stops at) and
    errors (what it refused or failed to do), and the exit status (1: refused, or a path
    failed)."""

    lines: list[tuple[Literal["out", "warning", "error"], str]] = field(default_factory=list)
    status: int = 0

    def out(self, text: str) -> None:
        self.lines.append(("out", text))

    def warn(self, text: str) -> None:
        self.lines.append(("warning", text))

    def err(self, text: str) -> None:
        self.lines.append(("error", text))

    def section(self, title: str, lines: Sequence[str]) -> None:
        if lines:
            self.out(title)
            for line in lines:
                self.out(f"  {line}")


def report(
    done: Rewound,
    project: Path,
    *,
    dry_run: bool,
    files: bool,
    force: bool,
    undo_hint: str = "codeloop rewind --to {n}",
    force_hint: str = "add --force",
) -> Said:
    """What the rewind changed (or would), what it kept and could not restore, and how to undo
    it: the hints are the frontend's ways to undo ({n}: the checkpoint that undoes it) and to
    force it."""
    target, result, plan = done.target, done.files, done.files.plan
    said = Said()
    head = "Would rewind" if dry_run else "Rewinding"
    said.out(f"{head} to checkpoint {target.number} (before {target.label or 'a write'}).")
    if files:
        to_do = plan.to_apply(force)
        said.section("Files:", [f"{c.action:<8} {_shown(c, project)}{_mode(c)}" for c in to_do])
        if not to_do:
            said.out("Files: nothing to change.")
        said.section(
            "Your own changes since, kept as they are:", [_shown(c, project) for c in plan.kept]
        )
        said.section(
            "Left as they are (never stored):",
            [f"{_shown(c, project)}: {why}" for c, why in plan.unrestorable],
        )
        for note in plan.notes:
            said.out(f"Note: {note}")
    if done.messages is not None:
        said.out(f"Conversation: {done.messages_before} messages → {len(done.messages)}.")
    if files and plan.conflicts and not force:
        names = ", ".join(_shown(c, project) for c in plan.conflicts)
        said.warn(f"The rewind would overwrite your own changes to: {names}.")
        if not dry_run:
            said.err(
                f"nothing was changed; {force_hint} to overwrite them (the rewind can itself be "
                "rewound)"
            )
            said.status = 1
            return said
    if dry_run:
        return said
    failed = result.applied.failed if result.applied else []
    for change, why in failed:
        said.err(f"could not {change.action} {_shown(change, project)}: {why}")
    if result.undo is not None:
        said.out(f"Done. To undo this rewind: {undo_hint.format(n=result.undo.number)}")
    said.status = 1 if failed else 0
    return said


def relative(where: Path, project: Path) -> str:
    return str(where.relative_to(project)) if where.is_relative_to(project) else str(where)


def _shown(change: Change, project: Path) -> str:
    return relative(Path(change.where), project)


def _mode(change: Change) -> str:
    if change.action != "chmod" or change.now is None or change.then is None:
        return ""
    return f" ({change.now.mode:o} → {change.then.mode:o})"
