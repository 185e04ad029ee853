"""An exception nobody expected is a bug in codeloop, never the user's mistake: the user gets
one line saying so and where the details went; the traceback goes to a log file."""

from __future__ import annotations

import os
import time
import traceback
from collections.abc import Mapping

from codeloop.store.data_paths import codeloop_home


def report_bug(exc: BaseException, env: Mapping[str, str] | None = None) -> str:
    """Write the traceback under CODELOOP_HOME/logs/; the one line to show the user."""
    what = f"{type(exc).__name__}: {exc}".strip().splitlines()[0]
    folder = codeloop_home(os.environ if env is None else env) / "logs"
    path = folder / f"error-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(traceback.format_exception(exc)), encoding="utf-8")
    except OSError as error:
        return f"codeloop: internal error ({what}); the details could not be saved: {error}"
    return f"codeloop: internal error ({what}); this is a bug in codeloop, details in {path}"
