"""`codeloop usage`: where a session's tokens and money went, from its transcript.

The command line only: the report's views (tables, JSON) are usage/views.py's, which /usage
shares. `--json` prints one object for scripts with every breakdown, whatever `--by` says.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import NoReturn

from codeloop.errors import SessionNotFound
from codeloop.store.session_store import SessionStore
from codeloop.usage.ledger import SessionLedger, read_ledger
from codeloop.usage.report import build_report
from codeloop.usage.views import VIEWS, print_report, report_json


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"codeloop usage: {message} (see codeloop usage --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="codeloop usage",
        description="What a session cost and why: tokens (input, cache read, cache write, "
        "output) and dollars per turn, per tool (what its results added to every later "
        "request, until folded or compacted), per sub-agent, per model and per file read, "
        "with the largest contributors, the cache hit rate and what compaction saved. "
        "Without SESSION: this directory's latest session.",
    )
    parser.add_argument("session", nargs="?", metavar="SESSION", help="a session id, or its start")
    parser.add_argument("--all", action="store_true", help="every session of this directory")
    parser.add_argument(
        "--since",
        metavar="DATE",
        type=_since,
        help="only requests made since DATE (2025-06-10, or 2025-06-10T14:00 local time); "
        "without SESSION, across every session of this directory",
    )
    parser.add_argument(
        "--by",
        choices=VIEWS,
        action="append",
        help="the breakdown to show (repeatable; default: model and tool)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object, for scripts")
    return parser


def _since(text: str) -> str:
    """DATE as the transcripts' UTC timestamps are written, for comparing as text."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date: {text!r} (e.g. 2025-06-10)") from None
    if moment.tzinfo is None:
        moment = moment.astimezone()  # local time, as people mean it
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def run_usage(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.session and args.all:
        print("codeloop usage: give SESSION or --all, not both", file=sys.stderr)
        return 2
    project = Path.cwd().resolve()
    store = SessionStore(project, os.environ)
    try:
        paths = _paths(store, args)
    except SessionNotFound as exc:
        print(f"codeloop usage: {exc}", file=sys.stderr)
        return 1
    if not paths:
        print(f"No sessions in {project} yet.")
        return 0
    ledgers: list[SessionLedger] = []
    for path in paths:
        try:
            ledgers.append(read_ledger(path))
        except OSError as exc:
            print(f"codeloop usage: cannot read {path}: {exc.strerror}", file=sys.stderr)
            return 1
    for ledger in ledgers:
        for warning in ledger.warnings:
            print(f"codeloop usage: warning: {warning}", file=sys.stderr)
    report = build_report(ledgers, args.since)
    views = args.by or (VIEWS if args.json else ["model", "tool"])
    if args.json:
        print(json.dumps(report_json(report, views), ensure_ascii=False, indent=2))
    else:
        print_report(report, views)
    return 0


def _paths(store: SessionStore, args: argparse.Namespace) -> list[Path]:
    if args.session:
        return [store.find(args.session)]
    if args.all or args.since:
        return store.paths()[::-1]  # oldest first
    paths = store.paths()
    return paths[:1]
