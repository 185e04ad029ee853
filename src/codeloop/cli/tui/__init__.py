"""`codeloop` without -p: the interactive session in this folder.

On a terminal it is the prompt_toolkit UI (app.py), whose first frame is drawn, taking keys,
before anything else loads (early.py); without one (stdin or stdout not a terminal) or with
TERM=dumb it falls back to plain lines (plain.py). Both render the Session's
events through the presenter and run slash commands from the shared registry (commands/).
Nothing here is imported by `-p` runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from codeloop.cli.tui.early import EarlyPrompt
    from codeloop.options import Options

PLAIN_WIDTH = 100


def run_interactive(args: argparse.Namespace) -> int:
    words = " ".join(args.words).strip()
    # -r without an id: the picker of this folder's sessions comes first.
    first = "/resume" if args.resume == "" else (words or None)
    color = not os.environ.get("NO_COLOR")
    terminal = sys.stdin.isatty() and sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
    if not terminal:
        return _run_plain(_options(args), first)
    from codeloop.cli.tui.early import EarlyPrompt

    # The prompt shows and takes keys now; the UI and the session load behind it.
    with EarlyPrompt(sys.stdin.fileno(), sys.stdout.fileno(), color=color) as early:
        return _run_terminal(_options(args), first, early, color=color)


def _options(args: argparse.Namespace) -> Options:
    from codeloop.errors import UsageError
    from codeloop.frontdoor.session_flags import session_options

    try:
        return session_options(args, interactive=True)
    except ValueError as exc:
        raise UsageError(f"{exc} (see codeloop --help)") from None


def _run_terminal(options: Options, first: str | None, early: EarlyPrompt, *, color: bool) -> int:
    import asyncio

    from codeloop.cli.tui.app import TerminalUI
    from codeloop.cli.tui.presenter import Presenter
    from codeloop.commands import default_registry
    from codeloop.store.data_paths import codeloop_home

    columns = os.get_terminal_size(sys.stdout.fileno()).columns
    presenter = Presenter(options.cwd or Path.cwd(), columns, color)
    ui = TerminalUI(
        options,
        default_registry(),
        presenter,
        first_prompt=first,
        history=codeloop_home(os.environ) / "history",
        color=color,
    )
    return asyncio.run(ui.main(typed=early.handoff()))


def _run_plain(options: Options, first: str | None) -> int:
    import asyncio

    from codeloop.cli.tui.plain import PlainUI
    from codeloop.cli.tui.presenter import Presenter
    from codeloop.commands import default_registry

    presenter = Presenter(options.cwd or Path.cwd(), PLAIN_WIDTH, color=False)
    ui = PlainUI(options, default_registry(), presenter, first_prompt=first)
    return asyncio.run(ui.main())


def startup_status(exc: BaseException) -> int:
    """The exit status of a session that could not start: the error's own (2 for settings
    that cannot be read safely, as for a bad flag), or 1."""
    from codeloop.errors import CodeloopError

    return exc.exit_status if isinstance(exc, CodeloopError) else 1


def startup_error(exc: BaseException) -> str:
    """What the user reads when the session cannot start: the user's mistake in one line,
    anything else as the bug it is."""
    from codeloop.errors import CodeloopError

    if isinstance(exc, CodeloopError):
        return f"codeloop: {exc}"
    return f"codeloop: the session could not start (a bug in codeloop): {type(exc).__name__}: {exc}"
