"""A session's checkpoints: taken before the first write of every turn, rewound on request.

One `Checkpoints` per session, its store in the session's folder beside the transcript
(`<project>/<session id>/checkpoints/`), never in the user's repository. The loop calls
`before_write` when a turn's first writer is about to run (any tool call the executor does not
treat as read-only: Edit, Write, a Bash command not proven read-only, a Task), and the session
calls `turn_done` when the turn's tools have finished. Each snapshot runs in a worker thread;
the one at the end of a turn overlaps the next model call, and the next checkpoint waits for it.

A lock file keeps a second process (`codeloop rewind` while the session runs) out; the kernel
drops it when the process dies, so a crash never leaves the session locked.

The journal, the object store and the scanner load with the first checkpoint taken or read: a
session that never writes has its `Checkpoints` but loads none of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from codeloop.checkpoints.limits import Limits
from codeloop.store.data_paths import git_head
from codeloop.system.valueclass import valueclass
from codeloop.types import Message, ToolResultBlock, ToolUseBlock

if TYPE_CHECKING:
    # A rewind's modules load with the first rewind: a session that only writes never needs
    # them; the others with the first checkpoint.
    from codeloop.checkpoints.journal import Checkpoint, Journal, Kind
    from codeloop.checkpoints.restore import Applied, Plan
    from codeloop.checkpoints.snapshot import Scanner, ScanStats

LOCK = "lock"


class CheckpointError(Exception):
    """Checkpoints cannot be taken, read or rewound; the message is meant for the user."""


class CheckpointsBusy(CheckpointError):
    """Another process has the session's checkpoints open."""


def _failures() -> tuple[type[BaseException], ...]:
    """What can keep a snapshot from being taken: it costs the turn its checkpoint, never the
    run (asked for only once something failed, or once the scanner is loaded)."""
    from codeloop.checkpoints.snapshot import Stopped

    return (OSError, CheckpointError, Stopped)


def _no_stats() -> ScanStats:
    from codeloop.checkpoints.snapshot import ScanStats

    return ScanStats()


@valueclass(frozen=False)
class RewindResult:
    """What a rewind of the files planned and did, and the checkpoint that undoes it."""

    plan: Plan
    applied: Applied | None = None  # None for a dry run, or when conflicts stopped it
    # The checkpoint taken just before the rewind: rewinding to it undoes the rewind.
    undo: Checkpoint | None = None
    stats: ScanStats = field(default_factory=_no_stats)
    # Stopped because it would overwrite the user's own changes: `force` overrides.
    blocked: bool = False


class Checkpoints:
    def __init__(
        self,
        directory: Path,
        roots: Sequence[Path],
        *,
        limits: Limits | None = None,
        exclude: Sequence[Path] = (),
    ) -> None:
        self.directory = directory
        self.roots = _outermost(roots)
        self.limits = limits or Limits()
        self._exclude = frozenset(p.resolve() for p in (*exclude, directory))
        self._opened: tuple[Scanner, Journal, int] | None = None
        self._checkpoints: list[Checkpoint] = []
        self._mutex = threading.Lock()
        self._open_turn: int | None = None  # the checkpoint whose turn is running
        self._pending: asyncio.Future[None] | None = None
        self.last_stats: ScanStats | None = None
        self._warned = False  # about the file-count limit, once a session
        self._warming: threading.Thread | None = None
        self._stop = threading.Event()

    # --- opening --------------------------------------------------------------------------

    def _open(self) -> tuple[Scanner, Journal]:
        if self._opened is None:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            lock = os.open(self.directory / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(lock)
                raise CheckpointsBusy(
                    f"another codeloop process is using this session's checkpoints "
                    f"({self.directory}); let it finish first"
                ) from None
            from codeloop.checkpoints.journal import Journal
            from codeloop.checkpoints.objects import ObjectStore
            from codeloop.checkpoints.snapshot import Scanner
            from codeloop.checkpoints.watch import Watcher

            store = ObjectStore(self.directory)
            scanner = Scanner(store, self.limits, self._exclude, Watcher.create(), self._stop)
            journal = Journal(self.directory)
            self._checkpoints = journal.read()
            self._seed(scanner)
            self._opened = (scanner, journal, lock)
        scanner, journal, _ = self._opened
        return scanner, journal

    def _seed(self, scanner: Scanner) -> None:
        """Prime the stat cache from the latest snapshot, so a resumed session or a rewind
        from a new process does not read every file again."""
        if not self._checkpoints:
            return
        from codeloop.checkpoints.objects import CorruptObject

        last = self._checkpoints[-1]
        snapshot, taken = (last.after, last.after_ns) if last.after else (last.roots, last.taken_ns)
        try:
            for root, tree in snapshot.items():
                scanner.remember(Path(root), tree, taken)
        except CorruptObject:
            pass  # a damaged cache only costs reading the files again

    def list(self) -> list[Checkpoint]:
        with self._mutex:
            self._open()
            return list(self._checkpoints)

    def get(self, number: int) -> Checkpoint:
        for cp in self.list():
            if cp.number == number:
                return cp
        last = self._checkpoints[-1].number if self._checkpoints else 0
        have = f"1 to {last}" if last else "none yet"
        raise CheckpointError(f"no checkpoint {number} in this session (checkpoints: {have})")

    def changed_by(self, cp: Checkpoint) -> tuple[str, ...] | None:
        """The paths the turn after `cp` changed (its own changes, not the user's), for a list
        of checkpoints; None while the turn runs, or when its process died before it ended."""
        if cp.after is None:
            return None
        from codeloop.checkpoints.restore import diff

        with self._mutex:
            scanner, _ = self._open()
            found = []
            for root, before in cp.roots.items():
                after = cp.after.get(root)
                if after is not None:
                    changed = diff(scanner, before, after)
                    found += [os.path.join(root, rel) for rel in sorted(changed)]
            return tuple(found)

    def for_message(self, uuid: str) -> Checkpoint | None:
        """The first checkpoint taken after the user message `uuid`: rewinding to it undoes
        everything the agent changed from that message on (the SDK's rewind_files)."""
        return next((cp for cp in self.list() if uuid in cp.history), None)

    # --- taking ---------------------------------------------------------------------------

    def add_root(self, root: Path) -> None:
        """A folder added mid-session (/add-dir): snapshot from the next checkpoint on."""
        with self._mutex:
            self.roots = _outermost([*self.roots, root])

    def take(self, history: Sequence[str], *, prompt: str = "", label: str = "") -> Checkpoint:
        """Snapshot the workspace and record it, durably, before returning: `history` is the
        conversation's message uuids, `prompt` and `label` say what the turn was for."""
        with self._mutex:
            roots, taken = self._scan()
            return self._record(roots, taken, history, "turn", prompt, label, None)

    def _scan(self, *, full: bool = False) -> tuple[dict[str, str], int]:
        scanner, _ = self._open()
        roots, self.last_stats, taken = scanner.scan(self.roots, full=full)
        scanner.store.flush()
        return roots, taken

    def _record(
        self,
        roots: Mapping[str, str],
        taken: int,
        history: Sequence[str],
        kind: Kind,
        prompt: str,
        label: str,
        rewound_to: int | None,
    ) -> Checkpoint:
        from codeloop.checkpoints.journal import Checkpoint

        _, journal = self._open()
        number = self._checkpoints[-1].number + 1 if self._checkpoints else 1
        heads = {root: head for root in roots if (head := git_head(Path(root)))}
        cp = Checkpoint(
            number,
            kind,
            time.time(),
            taken,
            roots,
            tuple(history),
            prompt,
            label,
            rewound_to,
            git=heads,
        )
        journal.add(cp)
        self._checkpoints.append(cp)
        return cp

    def finish(self, number: int) -> None:
        """Record the workspace as the turn of checkpoint `number` left it."""
        with self._mutex:
            self._finish(number)

    def _finish(self, number: int) -> None:
        _, journal = self._open()
        roots, taken = self._scan()
        journal.finish(number, roots, taken)
        self._checkpoints = [
            _with_after(cp, roots, taken) if cp.number == number else cp for cp in self._checkpoints
        ]

    def warm(self) -> None:
        """For a session that has checkpoints already (resumed, or continued after a crash):
        list the workspace in the background (the first prompt calls it, while the model
        answers), so that this process's first checkpoint only looks at what changed since.
        A new session does not: until it writes, it stores nothing at all."""
        if not self.directory.is_dir():
            return  # nothing taken yet: nothing to warm, nothing to load
        from codeloop.checkpoints.journal import JOURNAL

        exists = (self.directory / JOURNAL).exists()
        if exists and self._warming is None and self._opened is None:
            self._warming = threading.Thread(target=self._warm, name="checkpoint-warm", daemon=True)
            self._warming.start()

    def _warm(self) -> None:
        with contextlib.suppress(*_failures()), self._mutex:
            self._scan()

    # --- the loop's side: async, one turn at a time ----------------------------------------

    async def before_write(self, messages: Sequence[Message], call: ToolUseBlock) -> str | None:
        """Called before the first writer of a turn runs; returns once the checkpoint is on
        disk, or a warning for the user when it could not be taken (the write goes on)."""
        await self.settle()
        taking = asyncio.ensure_future(
            asyncio.to_thread(
                self.take,
                [m.uuid for m in messages],
                prompt=_prompt_of(messages),
                label=describe_call(call),
            )
        )
        # Even if the call is cancelled meanwhile, a checkpoint that got recorded gets its end.
        taking.add_done_callback(self._turn_started)
        try:
            await asyncio.shield(taking)
        except _failures() as exc:
            return f"no checkpoint for this turn, so it cannot be rewound: {_reason(exc)}"
        if self.last_stats is not None and self.last_stats.limited and not self._warned:
            self._warned = True
            return (
                f"the workspace has more than {self.limits.max_files:,} files: checkpoints "
                "skip the rest, and a rewind leaves them as they are (checkpoints.maxFiles)"
            )
        return None

    def _turn_started(self, taking: asyncio.Future[Checkpoint]) -> None:
        if not taking.cancelled() and taking.exception() is None:
            self._open_turn = taking.result().number

    def turn_done(self) -> None:
        """The turn's tools have finished: snapshot what they left, in the background."""
        number, self._open_turn = self._open_turn, None
        if number is not None:
            self._pending = asyncio.ensure_future(asyncio.to_thread(self._finish_quietly, number))

    def _finish_quietly(self, number: int) -> None:
        # Without it, a rewind counts what followed the turn as the agent's: no harm done.
        with contextlib.suppress(*_failures()):
            self.finish(number)

    async def settle(self) -> None:
        """Wait for the end-of-turn snapshot still running, if any."""
        if self._pending is not None:
            pending, self._pending = self._pending, None
            await pending

    # --- rewinding ------------------------------------------------------------------------

    def rewind(
        self,
        number: int,
        *,
        history: Sequence[str],
        files: bool = True,
        dry_run: bool = False,
        force: bool = False,
    ) -> RewindResult:
        """Set the files back to checkpoint `number` (with `files` false, only record the
        moment, for a rewind of the conversation alone). First a checkpoint of the workspace
        as it is (kind "rewind", with the conversation `history`), so the rewind can itself be
        rewound; a dry run, or conflicts without `force`, change nothing and record nothing."""
        from codeloop.checkpoints.restore import apply, make_plan

        target = self.get(number)
        with self._mutex:
            # Every folder listed: what a watcher cannot see must not escape a rewind.
            now, taken = self._scan(full=True)
            scanner, _ = self._open()
            stats = self.last_stats or _no_stats()
            plan = make_plan(scanner, self._checkpoints, target, now)
            blocked = files and bool(plan.conflicts) and not force
            if dry_run or blocked:
                return RewindResult(plan, stats=stats, blocked=blocked)
            label = f"rewind to checkpoint {number}"
            undo = self._record(now, taken, history, "rewind", target.prompt, label, number)
            applied = apply(scanner, plan.to_apply(force) if files else [])
            self._finish(undo.number)
            return RewindResult(plan, applied, undo, stats)

    async def aclose(self) -> None:
        await self.settle()
        self.close()

    def close(self) -> None:
        self._stop.set()  # a snapshot still running (a huge first one) gives up
        if self._warming is not None:
            self._warming.join()
        with self._mutex:
            if self._opened is None:
                return
            scanner, journal, lock = self._opened
            self._opened = None
            try:
                scanner.store.close()
                journal.close()
                if scanner.watcher is not None:
                    scanner.watcher.close()
            finally:
                os.close(lock)


def describe_call(call: ToolUseBlock) -> str:
    """A tool call in a few words, for the list of checkpoints."""
    args = call.input
    detail = args.get("command") or args.get("file_path") or args.get("description") or ""
    text = " ".join(str(detail).split())
    if len(text) > 60:
        text = text[:59] + "…"
    return f"{call.name}: {text}" if text else call.name


def _prompt_of(messages: Sequence[Message]) -> str:
    """The latest request the user typed (not tool results, not codeloop's own notes)."""
    for message in reversed(messages):
        if message.role != "user" or message.is_meta:
            continue
        if any(isinstance(block, ToolResultBlock) for block in message.content):
            continue
        text = " ".join(message.text.split())
        return text if len(text) <= 80 else text[:79] + "…"
    return ""


def _with_after(cp: Checkpoint, roots: Mapping[str, str], taken: int) -> Checkpoint:
    return replace(cp, after=dict(roots), after_ns=taken)


def _outermost(roots: Sequence[Path]) -> list[Path]:
    """The roots without those inside another one (an --add-dir below the working folder)."""
    resolved = sorted({r.resolve() for r in roots}, key=lambda p: len(p.parts))
    kept: list[Path] = []
    for root in resolved:
        if not any(root.is_relative_to(k) for k in kept):
            kept.append(root)
    return [r for r in (p.resolve() for p in roots) if r in kept]


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    return str(exc)
