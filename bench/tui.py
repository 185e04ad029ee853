"""The interactive UI on a pseudo-terminal, against the fake model server: launch to a ready
prompt, keystroke-to-echo latency, and memory after a 100-turn session.

The bench plays the terminal: it reads what codeloop writes to the pty and answers its
cursor-position queries, as a terminal emulator does. It types from the moment the prompt is
drawn, a key every TYPING_PACE seconds, and times each key's echo: while the UI still loads
(the keys are taken by the first frame, early.py) and once prompt_toolkit runs.

    python -m bench.tui [--runs 5] [--turns 100] [--against OTHER/src]

--against times another source tree too (say, main's), its launches interleaved with these,
so both columns see the same load.
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
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import MODEL, median, ms
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, tool_use, turn

READY = "❯".encode()  # the input's prompt: typing is taken from here on
EDITOR = b"\x1b[6n"  # prompt_toolkit's first cursor-position query: its input runs
SESSION_READY = b"context "  # the footer: the session is built
_CPR = re.compile(rb"\x1b\[6n")
TYPING_PACE = 0.1  # seconds between keys: a fast typist's ten a second
# Keys whose byte nothing else the UI writes while it starts contains (no escape sequence's
# letter, nothing of the footer, nothing that opens a completion menu): the first time one
# shows after it is typed is its echo.
KEYS = "bjkpvwyz#&*+,:<=>^_`{|}"
# prompt_toolkit without its package __init__ (which loads shortcuts: PromptSession, dialogs,
# widgets), importing just what the UI uses: is a lighter subset worth it?
SUBSET = """
import importlib.util, sys, types
spec = importlib.util.find_spec("prompt_toolkit")
package = types.ModuleType("prompt_toolkit")
package.__path__ = list(spec.submodule_search_locations)
sys.modules["prompt_toolkit"] = package
import prompt_toolkit.application, prompt_toolkit.layout.menus, prompt_toolkit.history
import prompt_toolkit.input.vt100_parser, prompt_toolkit.styles
"""


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
        self.arrivals: list[tuple[int, float]] = []  # (bytes seen, when) after each read

    def read_until(self, marker: bytes, timeout: float = 60.0, since: int | None = None) -> float:
        """The time `marker` is in the output read from now on (or from byte `since`)."""
        start = len(self.seen) if since is None else since
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
            now = time.monotonic()
            self.arrivals.append((len(self.seen), now))
        return time.monotonic()

    def first_seen(self, marker: bytes) -> float | None:
        """When the chunk that completed the first `marker` was read, if it was."""
        at = self.seen.find(marker)
        if at < 0:
            return None
        return next(when for end, when in self.arrivals if end >= at + len(marker))

    def write(self, data: bytes) -> None:
        os.write(self.master, data)

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        kib = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))  # type: ignore[union-attr]
        return kib / 1024

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        os.close(self.master)


def environment(server: FakeModelServer, home: str, source: str | None) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
        "TERM": "xterm-256color",
        "ANTHROPIC_BASE_URL": server.anthropic_base_url,
        "ANTHROPIC_API_KEY": "bench",
    }
    if source is not None:  # measuring another source tree
        env["PYTHONPATH"] = source
    return env


@dataclass
class Launches:
    """One source tree's launches: seconds from launch, and each key's echo latency."""

    prompt: list[float] = field(default_factory=list)
    first_echo: list[float] = field(default_factory=list)
    editor: list[float] = field(default_factory=list)
    session: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # CPU seconds used by then: load aside
    # Each key's echo, by when it was typed: before prompt_toolkit ran, while the session was
    # built, once it was ready.
    echo_loading: list[float] = field(default_factory=list)
    echo_building: list[float] = field(default_factory=list)
    echo_ready: list[float] = field(default_factory=list)

    def launch(self, source: str | None) -> None:
        with (
            FakeModelServer(Scenario(turns=(turn("hi"),))) as server,
            tempfile.TemporaryDirectory() as home,
        ):
            term = Pty(environment(server, home, source), Path(home))
            try:
                self.prompt.append(term.read_until(READY) - term.started)
                editor = session = None
                for n, key in enumerate(KEYS):
                    if n:
                        time.sleep(TYPING_PACE)
                    sent = time.monotonic()
                    if EDITOR not in term.seen:
                        phase = self.echo_loading
                    elif SESSION_READY not in term.seen:
                        phase = self.echo_building
                    else:
                        phase = self.echo_ready
                    term.write(key.encode())
                    echoed = term.read_until(key.encode())
                    phase.append(echoed - sent)
                    if n == 0:
                        self.first_echo.append(echoed - term.started)
                    editor = editor or term.first_seen(EDITOR)
                    session = session or term.first_seen(SESSION_READY)
                self.editor.append((editor or term.read_until(EDITOR, since=0)) - term.started)
                session = session or term.read_until(SESSION_READY, since=0)
                self.session.append(session - term.started)
                self.cpu.append(term.cpu_s())
            finally:
                term.close()


def long_session(turns: int) -> tuple[float, float]:
    """RSS after the first turn and after `turns` turns (each runs a Bash call)."""
    steps = []
    for n in range(turns):
        steps += [turn(tool_use("Bash", {"command": f"echo step{n}"})), turn(f"Answer number {n}.")]
    with (
        FakeModelServer(Scenario(turns=tuple(steps))) as server,
        tempfile.TemporaryDirectory() as home,
    ):
        env = environment(server, home, os.environ.get("PYTHONPATH"))
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


def floor(code: str, runs: int) -> str:
    """An interpreter running `code`, for scale (what no UI can start faster than): median
    wall time, and CPU time (user + system), which load does not change."""
    walls, cpus = [], []
    for _ in range(runs):
        started = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-c", code])
        _, status, usage = os.wait4(proc.pid, 0)
        assert status == 0, code
        walls.append(time.monotonic() - started)
        cpus.append(usage.ru_utime + usage.ru_stime)
    return f"{ms(median(walls))}, CPU {ms(median(cpus)).strip()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--against", metavar="SRC", help="another source tree, side by side")
    options = parser.parse_args()
    trees = {"this tree": os.environ.get("PYTHONPATH")}
    if options.against:
        trees[options.against] = options.against
    launches = {name: Launches() for name in trees}
    for _ in range(options.runs):
        for name, source in trees.items():
            launches[name].launch(source)
    runs = max(options.runs, 9)
    bare = floor("pass", runs)
    toolkit = floor("import prompt_toolkit.application", runs)
    subset = floor(SUBSET, runs)
    print(f"codeloop (interactive) on a pty, {options.runs} launches (medians)")
    print(f"  python -c pass (floor)             {bare}")
    print(f"  + import prompt_toolkit            {toolkit}")
    print(f"  + the UI's part of it, no __init__ {subset}")
    rows = [
        ("launch → prompt drawn", "prompt", "goal < 300 ms"),
        ("launch → first key echoed", "first_echo", "typed when the prompt shows"),
        ("launch → editor runs", "editor", "prompt_toolkit: history, completion"),
        ("launch → session ready", "session", "footer: model, context"),
        ("  CPU used by then", "cpu", "user + system: what load does not change"),
        ("keystroke → echo: UI loading", "echo_loading", "(keys) the first frame echoes"),
        ("  session being built", "echo_building", "prompt_toolkit echoes"),
        ("  session ready", "echo_ready", ""),
    ]
    print(f"  {'':34}" + "".join(f"{name[-16:]:>18}" for name in trees))
    for label, attribute, note in rows:
        cells = []
        for name in trees:
            values = getattr(launches[name], attribute)
            cell = ms(median(values)) if values else "—"
            if attribute.startswith("echo_"):
                cell += f" ({len(values)})"
            cells.append(f"{cell:>18}")
        print(f"  {label:34}" + "".join(cells) + f"   {note}")
    first, last = long_session(options.turns)
    print(f"  RSS after 1 turn                   {first:8.1f} MB")
    print(f"  RSS after {options.turns} turns{' ' * (23 - len(str(options.turns)))}{last:8.1f} MB")


if __name__ == "__main__":
    main()
