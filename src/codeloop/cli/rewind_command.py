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
from collections.abc import Sequence
from pathlib import Path

from codeloop.checkpoints.journal import JOURNAL, Journal
from codeloop.checkpoints.limits import Limits
from codeloop.checkpoints.manager import CheckpointError, Checkpoints
from codeloop.checkpoints.rewinding import REWIND_TRIGGER, Rewound, messages_from, rewind
from codeloop.checkpoints.wording import changed_line, report, summary
from codeloop.errors import SessionError
from codeloop.frontdoor.flags import Parser, positive_int
from codeloop.settings.settings_files import load_settings
from codeloop.store.session_store import SessionStore
from codeloop.store.transcript import TranscriptWriter, claim

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
    from codeloop.store.data_paths import codeloop_home

    return Checkpoints(
        directory, [Path(r) for r in roots], limits=limits, exclude=[codeloop_home(os.environ)]
    )


def _print_list(checkpoints: Checkpoints, session_id: str, project: Path) -> None:
    print(f"Checkpoints of session {session_id}, oldest first:")
    for cp in checkpoints.list():
        print(f"  {summary(cp)}")
        changed = changed_line(checkpoints, cp, project)
        if changed:
            print(f"              {changed}")
    print("Rewind with: codeloop rewind --to N  (add --dry-run to see what it changes first)")


def _report(done: Rewound, project: Path, *, dry_run: bool, files: bool, force: bool) -> int:
    said = report(done, project, dry_run=dry_run, files=files, force=force)
    for kind, line in said.lines:
        if kind == "out":
            print(line)
        else:
            print(line if kind == "warning" else f"codeloop: {line}", file=sys.stderr)
    return said.status
