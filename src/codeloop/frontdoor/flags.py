"""The command-line pieces every face's parser shares (`codeloop`, `codeloop batch`): one-line
usage errors, checked numbers, and the permission flags, the same for one headless run and for
every task of a batch. Only argparse: each face's parser is built before anything heavier loads."""

from __future__ import annotations

import argparse
from typing import NoReturn

from codeloop.permissions.modes import MODE_ALIASES, PERMISSION_MODES

# What --permission-mode accepts: Claude Code's modes and their other names.
MODE_CHOICES = (*PERMISSION_MODES, *MODE_ALIASES)


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line, not the whole usage: the mistake and where to look."""
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def positive_amount(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an amount: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def add_permission_flags(group: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """--permission-mode, --settings, --sandbox, --allowedTools and --disallowedTools."""
    group.add_argument(
        "--permission-mode",
        choices=MODE_CHOICES,
        default=None,
        help="permission mode (default: the settings' defaultMode, else default)",
    )
    group.add_argument(
        "--settings",
        metavar="FILE_OR_JSON",
        help="a settings file, or inline JSON, applied above every settings file",
    )
    group.add_argument(
        "--sandbox",
        action="store_true",
        help="run Bash under bubblewrap: files read-only outside the workspace, no network",
    )
    group.add_argument(
        "--allowedTools",
        "--allowed-tools",
        dest="allowed_tools",
        action="append",
        default=[],
        metavar="TOOLS",
        help='tools allowed without asking, e.g. "Bash Edit" (repeatable)',
    )
    group.add_argument(
        "--disallowedTools",
        "--disallowed-tools",
        dest="disallowed_tools",
        action="append",
        default=[],
        metavar="TOOLS",
        help="tools never allowed (repeatable)",
    )
