"""The interactive UI on a pseudo-terminal, against the fake model server: launch to a ready
prompt, keystroke-to-echo latency, and memory after a 100-turn session.

The bench plays the terminal: it reads what codeloop writes to the pty and answers its
cursor-position queries, as a terminal emulator does.

    python -m bench.tui [--runs 5] [--turns 100]
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

from bench.common import MODEL, median, ms
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, tool_use, turn

READY = "❯".encode()  # the input's prompt: typing is taken from here on
SESSION_READY = b"context "  # the footer: the session is built
_CPR = re.compile(rb"\x1b\[6n")
TYPING_PACE = 0.1  # seconds between keys: a fast typist's ten a second


class Pty:
    """codeloop on a 100×30 pseudo-terminal; `read_until` collects its output."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "codeloop", "--model", MODEL],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self.master = master
        self.seen = b""

    def read_until(self, marker: bytes, timeout: float = 60.0) -> float:
        """Seconds until `marker` is in the output read from now on."""
        start = len(self.seen)
        deadline = time.monotonic() + timeout
        while marker not in self.seen[start:]:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{marker!r} not seen; last output: {self.seen[-400:]!r}")
            ready, _, _ = select.select([self.master], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.master, 65536)
            for _ in _CPR.findall(chunk):  # the terminal's answer: row 1, column 1
                os.write(self.master, b"\x1b[1;1R")
            self.seen += chunk
        return time.monotonic()

    def write(self, data: bytes) -> None:
        os.write(self.master, data)

    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        kib = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))  # type: ignore[union-attr]
        return kib / 1024

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        os.close(self.master)


def environment(server: FakeModelServer, home: str) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
        "TERM": "xterm-256color",
        "ANTHROPIC_BASE_URL": server.anthropic_base_url,
        "ANTHROPIC_API_KEY": "bench",
    }
    if "PYTHONPATH" in os.environ:  # measuring another source tree
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def launch(runs: int) -> tuple[list[float], list[float], list[float]]:
    prompt, session, echo = [], [], []
    for _ in range(runs):
        with (
            FakeModelServer(Scenario(turns=(turn("hi"),))) as server,
            tempfile.TemporaryDirectory() as home,
        ):
            term = Pty(environment(server, home), Path(home))
            try:
                prompt.append(term.read_until(READY) - term.started)
                session.append(term.read_until(SESSION_READY) - term.started)
                for char in "abcdefghijklmnopqrst":
                    time.sleep(TYPING_PACE)
                    sent = time.monotonic()
                    term.write(char.encode())
                    echo.append(term.read_until(char.encode()) - sent)
            finally:
                term.close()
    return prompt, session, echo


def long_session(turns: int) -> tuple[float, float]:
    """RSS after the first turn and after `turns` turns (each runs a Bash call)."""
    steps = []
    for n in range(turns):
        steps += [turn(tool_use("Bash", {"command": f"echo step{n}"})), turn(f"Answer number {n}.")]
    with (
        FakeModelServer(Scenario(turns=tuple(steps))) as server,
        tempfile.TemporaryDirectory() as home,
    ):
        env = environment(server, home)
        Path(home, ".codeloop").mkdir()
        Path(home, ".codeloop", "settings.json").write_text('{"permissions": {"allow": ["Bash"]}}')
        term = Pty(env, Path(home))
        try:
            term.read_until(SESSION_READY)
            first = 0.0
            for n in range(turns):
                term.write(f"go {n}\r".encode())
                term.read_until(f"Answer number {n}.".encode(), timeout=120)
                if n == 0:
                    first = term.rss_mb()
            return first, term.rss_mb()
        finally:
            term.close()


def floor(code: str) -> float:
    """An interpreter running `code`, for scale: what no UI can start faster than."""
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--turns", type=int, default=100)
    options = parser.parse_args()
    prompt, session, echo = launch(options.runs)
    bare = median([floor("pass") for _ in range(options.runs)])
    toolkit = median([floor("import prompt_toolkit.application") for _ in range(options.runs)])
    print(f"codeloop (interactive) on a pty, {options.runs} launches (medians)")
    print(f"  python -c pass (floor)       {ms(bare)}")
    print(f"  + import prompt_toolkit      {ms(toolkit)}")
    print(f"  launch → prompt ready        {ms(median(prompt))}   goal < 300 ms")
    print(f"  launch → session ready       {ms(median(session))}   (footer: model, context)")
    print(f"  keystroke → echo             {ms(median(echo))}   ({len(echo)} keys)")
    first, last = long_session(options.turns)
    print(f"  RSS after 1 turn             {first:8.1f} MB")
    print(f"  RSS after {options.turns} turns          {last:8.1f} MB")


if __name__ == "__main__":
    main()
