"""What a rewind changes, and changing it: diffs between snapshots, the plan, its application.

A rewind undoes the agent's changes since a checkpoint and keeps the user's own: the agent's
are what changed during its turns (a checkpoint's snapshot to the same turn's "after"), the
user's what changed between turns. A path both touched is a conflict that only `force`
overwrites. Entries that were never stored (too big, unreadable) are never overwritten or
deleted; the plan names them instead.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from pathlib import Path

from codeloop.checkpoints.journal import Checkpoint
from codeloop.checkpoints.snapshot import DIR, FILE, LINK, SKIPPED, Entry, Scanner
from codeloop.store.data_paths import git_head
from codeloop.system.valueclass import valueclass

Pair = tuple[Entry | None, Entry | None]


def diff(scanner: Scanner, a: str | None, b: str | None, prefix: str = "") -> dict[str, Pair]:
    """Every path whose content or mode differs between trees `a` and `b` (ids, or None for
    nothing), with its entry on each side; below a skipped folder nothing is known."""
    out: dict[str, Pair] = {}
    _diff(scanner, a, b, prefix, out)
    return out


def _diff(
    scanner: Scanner, a: str | None, b: str | None, prefix: str, out: dict[str, Pair]
) -> None:
    if a == b:
        return
    left = scanner.tree(a) if a else {}
    right = scanner.tree(b) if b else {}
    for name in left.keys() | right.keys():
        ea, eb = left.get(name), right.get(name)
        rel = prefix + name
        if ea is not None and eb is not None and ea.kind == DIR and eb.kind == DIR:
            if ea.mode != eb.mode:
                out[rel] = (ea, eb)
            _diff(scanner, ea.id, eb.id, f"{rel}/", out)
            continue
        if ea is not None and eb is not None and ea.same_content(eb):
            continue
        out[rel] = (ea, eb)
        if SKIPPED in (ea.kind if ea else "", eb.kind if eb else ""):
            continue
        if ea is not None and ea.kind == DIR:
            out.update({p: (e, None) for p, e in scanner.flatten(ea.id, f"{rel}/")})
        if eb is not None and eb.kind == DIR:
            out.update({p: (None, e) for p, e in scanner.flatten(eb.id, f"{rel}/")})


@valueclass
class Change:
    """One path a rewind sets back: from what is there now to what was there then."""

    root: str
    path: str
    now: Entry | None
    then: Entry | None

    @property
    def action(self) -> str:
        if self.now is None:
            return "restore"  # deleted since
        if self.then is None:
            return "remove"  # created since
        if self.now.kind != self.then.kind:
            return "replace"
        if self.now.kind == DIR or self.now.id == self.then.id:
            return "chmod"
        return "revert"

    @property
    def where(self) -> str:
        return os.path.join(self.root, self.path)


@valueclass(frozen=False)
class Plan:
    """What a rewind to `target` changes, keeps, and cannot restore."""

    target: Checkpoint
    changes: list[Change] = field(default_factory=list)
    # Changes the user made on paths the agent changed too: overwritten only with force.
    conflicts: list[Change] = field(default_factory=list)
    # The user's own changes on paths the agent never touched: a rewind leaves them.
    kept: list[Change] = field(default_factory=list)
    # Paths that differ but were never stored: left as they are.
    unrestorable: list[tuple[Change, str]] = field(default_factory=list)
    # Roots the rewind cannot judge (a turn did not snapshot them).
    notes: list[str] = field(default_factory=list)

    def to_apply(self, force: bool) -> list[Change]:
        return sorted([*self.changes, *(self.conflicts if force else ())], key=_depth_order)


def make_plan(
    scanner: Scanner, history: Sequence[Checkpoint], target: Checkpoint, now: Mapping[str, str]
) -> Plan:
    """Set the workspace back to `target`: `history` is every checkpoint from `target` on, in
    order; `now` the snapshot just taken of the workspace as it is."""
    plan = Plan(target)
    later = [cp for cp in history if cp.number >= target.number]
    for root, then_tree in target.roots.items():
        head = git_head(Path(root))
        if root in target.git and head != target.git[root]:
            plan.notes.append(
                f"git's HEAD in {root} moved since checkpoint {target.number} "
                f"({target.git[root]} → {head}); a rewind restores files, never .git"
            )
        if root not in now:
            plan.notes.append(f"{root} was not snapshotted now; left as it is")
            continue
        agent, user = _authors(scanner, root, later, now[root])
        for rel, (then, current) in diff(scanner, then_tree, now[root]).items():
            change = Change(root, rel, current, then)
            why = _unrestorable(then, current)
            if why is not None and (rel in agent or rel in user):
                plan.unrestorable.append((change, why))
            elif rel in agent:
                (plan.conflicts if rel in user else plan.changes).append(change)
            elif rel in user:
                plan.kept.append(change)
    return plan


def _authors(
    scanner: Scanner, root: str, later: Sequence[Checkpoint], now_tree: str
) -> tuple[set[str], set[str]]:
    """The paths the agent changed during its turns, and those changed between them."""
    agent: set[str] = set()
    user: set[str] = set()
    for i, cp in enumerate(later):
        before = cp.roots.get(root)
        following = later[i + 1].roots.get(root) if i + 1 < len(later) else now_tree
        after = cp.after.get(root) if cp.after is not None else None
        if before is None or following is None:
            continue  # that interval was not snapshotted for this root
        if after is None:  # the process died during the turn: what followed is the agent's
            agent.update(diff(scanner, before, following))
        else:
            agent.update(diff(scanner, before, after))
            user.update(diff(scanner, after, following))
    return agent, user


def _unrestorable(then: Entry | None, now: Entry | None) -> str | None:
    if then is not None and then.kind == SKIPPED:
        return f"not stored at the checkpoint ({then.id})"
    if now is not None and now.kind == SKIPPED:
        return f"not stored now ({now.id}), so a rewind could not be undone for it"
    return None


def _depth_order(change: Change) -> tuple[str, int, str]:
    return (change.root, change.path.count("/"), change.path)


@valueclass(frozen=False)
class Applied:
    """The changes a rewind made, and those that failed (with why)."""

    done: list[Change] = field(default_factory=list)
    failed: list[tuple[Change, str]] = field(default_factory=list)


def apply(scanner: Scanner, changes: Iterable[Change]) -> Applied:
    """Removals deepest first, then creations and contents shallowest first, then folder modes
    deepest first (a read-only folder gets its mode after its files are back)."""
    ordered = sorted(changes, key=_depth_order)
    result = Applied()
    failed: set[str] = set()

    def attempt(change: Change, step: str) -> None:
        if change.where in failed:
            return
        try:
            _safe_parent(change)
            _STEPS[step](scanner, change)
        except OSError as exc:
            failed.add(change.where)
            result.failed.append((change, exc.strerror or str(exc)))

    for change in reversed(ordered):
        if change.now is not None and (change.then is None or change.now.kind != change.then.kind):
            attempt(change, "remove")
    for change in ordered:
        if change.then is not None:
            attempt(change, "put")
    for change in reversed(ordered):
        if change.then is not None and change.then.kind == DIR:
            attempt(change, "dir_mode")
    result.done = [c for c in ordered if c.where not in failed]
    return result


def _safe_parent(change: Change) -> None:
    """Refuse to act through a symlink: the folders above the path must be real folders."""
    parent = os.path.dirname(change.where)
    expected = os.path.join(os.path.realpath(change.root), os.path.dirname(change.path))
    if os.path.realpath(parent) != os.path.normpath(expected):
        raise OSError(0, f"{parent} is now a symlink")


def _remove(scanner: Scanner, change: Change) -> None:
    assert change.now is not None
    if change.now.kind == DIR:
        os.rmdir(change.where)
    else:
        os.unlink(change.where)


def _put(scanner: Scanner, change: Change) -> None:
    then, where = change.then, change.where
    assert then is not None
    if then.kind == DIR:
        if not os.path.isdir(where) or os.path.islink(where):
            os.mkdir(where, 0o700)
        return
    if then.kind == LINK:
        target = scanner.blob(then)
        if os.path.lexists(where):
            os.unlink(where)
        os.symlink(target, where)
        return
    assert then.kind == FILE
    now = change.now
    if now is not None and now.kind == FILE and now.id == then.id:
        os.chmod(where, then.mode)
        return
    data = scanner.blob(then)
    fd, temp = tempfile.mkstemp(dir=os.path.dirname(where), prefix=".codeloop-rewind-")
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, then.mode)
        os.close(fd)
        fd = -1
        os.replace(temp, where)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        os.unlink(temp)
        raise


def _dir_mode(scanner: Scanner, change: Change) -> None:
    assert change.then is not None
    if stat.S_IMODE(os.lstat(change.where).st_mode) != change.then.mode:
        os.chmod(change.where, change.then.mode)


_STEPS = {"remove": _remove, "put": _put, "dir_mode": _dir_mode}
