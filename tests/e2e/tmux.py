"""A real terminal for end-to-end tests of the interactive UI: tmux on a private socket runs
`codeloop`; tests type into it and read the screen (capture-pane). Every wait polls the screen
until the text shows (or the timeout passes): nothing sleeps to synchronise."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from types import TracebackType
from typing import Self

import pytest

DEFAULT_TIMEOUT = 60.0
EXITED = "CODELOOP-EXITED="


def tmux_binary() -> str:
    """tmux, or a skip on a developer machine without it (CI installs it: there it fails)."""
    found = shutil.which("tmux")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("tmux is not installed (.ci/run installs it)")
        pytest.skip("tmux is not installed")
    return found


class Terminal:
    """`codeloop ARGS` in a `width`×`height` tmux pane, in `cwd`, with exactly `env`."""

    def __init__(
        self,
        args: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        width: int = 100,
        height: int = 30,
        record: Path | None = None,
    ) -> None:
        self.tmux = tmux_binary()
        self.socket = f"codeloop-test-{uuid.uuid4().hex[:12]}"
        env = {"TERM": "screen-256color", **env}
        assignments = " ".join(shlex.quote(f"{k}={v}") for k, v in env.items())
        program = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "codeloop", *args])
        # The pane stays after codeloop exits, so its last screen and exit status can be read.
        script = f"env -i {assignments} {program}; echo {EXITED}$?; sleep 86400"
        self._run("new-session", "-d", "-x", str(width), "-y", str(height), "-c", str(cwd), script)
        if record is not None:
            # Every byte the program writes to the terminal, for counting.
            self._run("pipe-pane", "-o", f"cat >> {shlex.quote(str(record))}")

    def _run(self, *argv: str) -> str:
        done = subprocess.run(
            [self.tmux, "-L", self.socket, "-f", "/dev/null", *argv],
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    def screen(self, *, escapes: bool = False) -> str:
        """The visible screen (with `escapes`, its colours and attributes as SGR codes)."""
        return self._run("capture-pane", "-p", *(["-e"] if escapes else []))

    def history(self) -> str:
        """The scrollback and the screen."""
        return self._run("capture-pane", "-p", "-S", "-")

    def write(self, text: str) -> None:
        self._run("send-keys", "-l", text)

    def keys(self, *keys: str) -> None:
        """Named keys: Enter, Escape, C-c, C-d, BTab (Shift+Tab), Up, Down ..."""
        self._run("send-keys", *keys)

    def send(self, text: str) -> None:
        self.write(text)
        self.keys("Enter")

    def resize(self, width: int, height: int) -> None:
        self._run("resize-window", "-x", str(width), "-y", str(height))

    def wait_for(
        self, text: str, timeout: float = DEFAULT_TIMEOUT, *, scrollback: bool = False
    ) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.history() if scrollback else self.screen()
            if text in screen:
                return screen
            time.sleep(0.05)  # polling interval, not a synchronisation
        raise AssertionError(f"{text!r} did not show within {timeout} s; the screen:\n{screen}")

    def wait_until_gone(self, text: str, timeout: float = DEFAULT_TIMEOUT) -> str:
        deadline = time.monotonic() + timeout
        screen = self.screen()
        while time.monotonic() < deadline:
            screen = self.screen()
            if text not in screen:
                return screen
            time.sleep(0.05)
        raise AssertionError(f"{text!r} still shows after {timeout} s; the screen:\n{screen}")

    def ready(self, timeout: float = DEFAULT_TIMEOUT) -> str:
        """Wait until the session is open: the footer names the permission mode."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if "· context " in screen or EXITED in screen:
                return screen
            time.sleep(0.05)
        raise AssertionError(f"the UI did not become ready within {timeout} s:\n{screen}")

    def exit_status(self, timeout: float = DEFAULT_TIMEOUT) -> int:
        screen = self.wait_for(EXITED, timeout, scrollback=True)
        tail = screen.split(EXITED, 1)[1]
        return int(tail.split()[0])

    def close(self) -> None:
        subprocess.run(
            [self.tmux, "-L", self.socket, "kill-server"], capture_output=True, check=False
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
