"""`codeloop rewind`: list a session's checkpoints, or set its files and conversation back.

Works on a saved session from any process, also after a crash: the checkpoints are on disk
before the tool they guard runs. Without --to it lists the checkpoints; with --to N it rewinds
(files and conversation unless told otherwise), refusing to overwrite the user's own edits
without --force. Every rewind is itself a checkpoint, so `--to` that one undoes it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from codeloop.checkpoints import CheckpointError, Checkpoints, Limits
from codeloop.checkpoints.journal import JOURNAL, Journal
from codeloop.checkpoints.restore import Change
from codeloop.checkpoints.rewind import REWIND_TRIGGER, Rewound, messages_from, rewind
from codeloop.cli.args import Parser, positive_int
from codeloop.errors import SessionError
from codeloop.session_store import SessionStore
from codeloop.settings import load_settings
from codeloop.transcript import TranscriptWriter, claim

EXAMPLES = """\
examples:
  codeloop rewind                       list the latest session's checkpoints
  codeloop rewind --to 3 --dry-run      what rewinding to checkpoint 3 would change
  codeloop rewind --to 3                files and conversation back to checkpoint 3
  codeloop rewind --to 3 --files        only the files; the conversation goes on
  codeloop rewind --to 7                undo the rewind that checkpoint 7 was taken before

A checkpoint is taken before every turn that can write (Edit, Write, a Bash command not proven
read-only): rewinding to it undoes everything the agent changed from then on, shell commands
included. Your own edits between turns are kept; one on a file the agent also changed stops
the rewind unless --force. Files under .git, and files too big to store, are never touched."""


def run_rewind(argv: Sequence[str]) -> int:
    parser = Parser(
        prog="codeloop rewind",
        description="List a session's checkpoints, or rewind its files and conversation to one.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--session", metavar="ID", help="the session (default: the latest here)")
    parser.add_argument("--to", type=positive_int, metavar="N", help="the checkpoint to rewind to")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--files", action="store_true", help="rewind only the files")
    what.add_argument("--conversation", action="store_true", help="rewind only the conversation")
    what.add_argument("--both", action="store_true", help="files and conversation (default)")
    parser.add_argument("--dry-run", action="store_true", help="show what would change, only")
    parser.add_argument(
        "--force", action="store_true", help="overwrite your own edits to files the agent changed"
    )
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except (SessionError, CheckpointError) as exc:
        print(f"codeloop: {exc}", file=sys.stderr)
        return 1


def _claim(transcript: Path, session_id: str) -> int:
    """The session's transcript, locked before anything is rewound: a session another codeloop
    process is running is not rewound under it."""
    try:
        claimed = claim(transcript)
    except OSError as exc:
        raise SessionError(f"cannot open the session {transcript}: {exc.strerror}") from None
    if claimed is None:
        raise SessionError(
            f"session {session_id} is being run by another codeloop process: rewind it once "
            "that run has ended (nothing was changed)"
        )
    return claimed


def _run(args: argparse.Namespace) -> int:
    project = Path.cwd().resolve()
    store = SessionStore(project, os.environ)
    transcript = store.find(args.session) if args.session else store.latest()
    session_id = transcript.stem
    changing = args.to is not None and not args.dry_run
    claimed = _claim(transcript, session_id) if changing else None
    checkpoints = _open(store.directory / session_id / "checkpoints", project)
    try:
        if args.to is None:
            _print_list(checkpoints, session_id, project)
            return 0
        history = messages_from(transcript)
        done = rewind(
            checkpoints,
            args.to,
            history=history,
            transcript=transcript,
            files=not args.conversation,
            conversation=not args.files,
            dry_run=args.dry_run,
            force=args.force,
        )
        if done.messages is not None and claimed is not None:
            writer = TranscriptWriter(transcript, session_id, project, history, claimed=claimed)
            claimed = None  # the writer closes it
            try:
                writer.compact(done.messages, trigger=REWIND_TRIGGER)
            finally:
                writer.close()
    finally:
        checkpoints.close()
        if claimed is not None:
            os.close(claimed)
    return _report(
        done, project, dry_run=args.dry_run, files=not args.conversation, force=args.force
    )


def _open(directory: Path, project: Path) -> Checkpoints:
    """The session's checkpoints, over the folders its checkpoints covered."""
    if not (directory / JOURNAL).exists():
        raise CheckpointError(
            f"session {directory.parent.name} has no checkpoints: it changed no files"
        )
    roots = {root: None for cp in Journal(directory).read() for root in cp.roots}
    wanted = load_settings(project, env=os.environ).checkpoints
    limits = Limits(int(wanted.max_file_mb * 1024 * 1024), wanted.max_files)
    from codeloop.paths import codeloop_home

    return Checkpoints(
        directory, [Path(r) for r in roots], limits=limits, exclude=[codeloop_home(os.environ)]
    )


def _print_list(checkpoints: Checkpoints, session_id: str, project: Path) -> None:
    print(f"Checkpoints of session {session_id}, oldest first:")
    for cp in checkpoints.list():
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(cp.created))
        prompt = f'  "{cp.prompt}"' if cp.prompt and cp.kind == "turn" else ""
        print(f"  {cp.number:>3}  {when}  before {cp.label or 'a write'}{prompt}")
        changed = checkpoints.changed_by(cp)
        if changed is None:
            print("              (the turn did not finish: what it changed is not known)")
        elif changed:
            names = [_relative(Path(p), project) for p in changed]
            more = f" and {len(names) - 3} more" if len(names) > 3 else ""
            print(f"              changed {', '.join(names[:3])}{more}")
    print("Rewind with: codeloop rewind --to N  (add --dry-run to see what it changes first)")


def _report(done: Rewound, project: Path, *, dry_run: bool, files: bool, force: bool) -> int:
    target, result, plan = done.target, done.files, done.files.plan
    head = "Would rewind" if dry_run else "Rewinding"
    print(f"{head} to checkpoint {target.number} (before {target.label or 'a write'}).")
    if files:
        to_do = plan.to_apply(force)
        _section("Files:", [f"{c.action:<8} {_shown(c, project)}{_mode_note(c)}" for c in to_do])
        if not to_do:
            print("Files: nothing to change.")
        _section(
            "Your own changes since, kept as they are:",
            [_shown(c, project) for c in plan.kept],
        )
        _section(
            "Left as they are (never stored):",
            [f"{_shown(c, project)}: {why}" for c, why in plan.unrestorable],
        )
        for note in plan.notes:
            print(f"Note: {note}")
    if done.messages is not None:
        print(f"Conversation: {done.messages_before} messages → {len(done.messages)}.")
    if files and plan.conflicts and not force:
        names = ", ".join(_shown(c, project) for c in plan.conflicts)
        print(f"The rewind would overwrite your own changes to: {names}.", file=sys.stderr)
        if not dry_run:
            print(
                "codeloop: nothing was changed; add --force to overwrite them (the rewind can "
                "itself be rewound)",
                file=sys.stderr,
            )
            return 1
    if dry_run:
        return 0
    failed = result.applied.failed if result.applied else []
    for change, why in failed:
        print(
            f"codeloop: could not {change.action} {_shown(change, project)}: {why}", file=sys.stderr
        )
    if result.undo is not None:
        print(f"Done. To undo this rewind: codeloop rewind --to {result.undo.number}")
    return 1 if failed else 0


def _section(title: str, lines: Sequence[str]) -> None:
    if lines:
        print(title)
        for line in lines:
            print(f"  {line}")


def _shown(change: Change, project: Path) -> str:
    return _relative(Path(change.where), project)


def _relative(where: Path, project: Path) -> str:
    return str(where.relative_to(project)) if where.is_relative_to(project) else str(where)


def _mode_note(change: Change) -> str:
    if change.action != "chmod" or change.now is None or change.then is None:
        return ""
    return f" ({change.now.mode:o} → {change.then.mode:o})"
