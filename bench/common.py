"""Shared plumbing for benchmarks: run the real CLI against the fake model server, measure."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codeloop.testing.fake_server import FakeModelServer, RecordedRequest
from codeloop.testing.scenario import Scenario

MODEL = "anthropic:claude-sonnet-4-5"


@dataclass
class CliMeasurement:
    started: float  # time.monotonic() just before the process was spawned
    ended: float
    returncode: int
    peak_rss_mb: float
    requests: list[RecordedRequest]
    stderr: str
    cpu_s: float = 0.0  # user + system CPU time of the process: what load on the machine hides
    # (requests the server had seen, RSS in MB), sampled while the process ran (rss_every).
    rss_samples: list[tuple[int, float]] = field(default_factory=list)
    # (requests the server had seen, CPU seconds the process had used), sampled alike.
    cpu_samples: list[tuple[int, float]] = field(default_factory=list)

    @property
    def to_first_request(self) -> float:
        return self.requests[0].arrived - self.started

    def gaps(self) -> list[float]:
        """From the end of each response to the arrival of the next request."""
        pairs = zip(self.requests, self.requests[1:], strict=False)
        return [b.arrived - a.finished for a, b in pairs if a.finished is not None]


def run_cli(
    scenario: Scenario | Mapping[str, Scenario],
    args: Sequence[str],
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    *,
    program: Sequence[str] | None = None,
    keep_bodies: bool = True,
    rss_every: float | None = None,
) -> CliMeasurement:
    """One `codeloop -p` process (or `program`, another agent's command line, given `args`
    alone) against a fresh fake server (one scenario, or one per conversation key); peak RSS
    and CPU time from wait4, and with `rss_every` the RSS every so many seconds as the session
    goes on."""
    with (
        FakeModelServer(scenario, keep_bodies=keep_bodies) as server,
        tempfile.TemporaryDirectory() as home,
    ):
        full_env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": home,
            "ANTHROPIC_BASE_URL": server.anthropic_base_url,
            "ANTHROPIC_API_KEY": "bench",
            **(env or {}),
        }
        work = cwd or Path(home)
        base = program or [sys.executable, "-m", "codeloop", "--model", MODEL]
        argv = [*base, *args]
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            with Launched(argv, cwd=work, env=full_env, stdout=out, stderr=err) as launched:
                samples: list[tuple[int, float]] = []
                cpu: list[tuple[int, float]] = []
                done = threading.Event()
                sampler = threading.Thread(
                    target=_sample, args=(launched.pid, server, rss_every, samples, cpu, done)
                )
                if rss_every is not None:
                    sampler.start()
                returncode, peak_kb, cpu_s = launched.wait()
                ended = time.monotonic()
                done.set()
                if sampler.is_alive():
                    sampler.join()
            err.seek(0)
            stderr = err.read().decode(errors="replace")
        return CliMeasurement(
            launched.started,
            ended,
            returncode,
            peak_kb / 1024,
            list(server.requests),
            stderr,
            cpu_s,
            samples,
            cpu,
        )


# Forks the measured program from a small process and reports, on the descriptor its first
# argument names, the program's pid and the monotonic clock just before the fork, then its
# exit status, peak RSS (KiB) and CPU seconds.
# A program spawned straight from the benchmark (vfork, posix_spawn or fork alike) reports the
# benchmark's own peak RSS as part of its ru_maxrss (Linux folds the old address space's high
# water mark in at exec), so a small process must stand between them.
_LAUNCHER = """
import os, sys, time
report = os.fdopen(int(sys.argv[1]), "w")
started = time.monotonic()
pid = os.fork()
if pid == 0:
    report.close()
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
print(pid, started, file=report, flush=True)
_, status, usage = os.wait4(pid, 0)
code = os.waitstatus_to_exitcode(status)
print(code, usage.ru_maxrss, usage.ru_utime + usage.ru_stime, file=report, flush=True)
"""


class Launched:
    """The measured program, started by `_LAUNCHER`."""

    def __init__(self, argv: Sequence[str], **popen: Any) -> None:
        read, write = os.pipe()
        # The launcher runs isolated from the caller's Python settings (-I -S); the program
        # gets the environment as given.
        launcher = [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(write), *argv]
        try:
            self._proc = subprocess.Popen(
                launcher, stdin=subprocess.DEVNULL, pass_fds=(write,), **popen
            )
        finally:
            os.close(write)
        self._report = os.fdopen(read, encoding="ascii")
        first = self._report.readline().split()
        if len(first) != 2:
            self._proc.wait()
            raise RuntimeError(f"could not start {argv[0]}")
        self.pid, self.started = int(first[0]), float(first[1])

    def wait(self) -> tuple[int, float, float]:
        """Exit code, peak RSS in KiB and CPU seconds of the program."""
        last = self._report.readline().split()
        self._proc.wait()
        return int(last[0]), float(last[1]), float(last[2])

    def __enter__(self) -> Launched:
        return self

    def __exit__(self, *exc: object) -> None:
        self._report.close()
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()


def _sample(
    pid: int,
    server: FakeModelServer,
    every: float | None,
    rss: list[tuple[int, float]],
    cpu: list[tuple[int, float]],
    done: threading.Event,
) -> None:
    """RSS and CPU time (utime + stime, in clock ticks) from /proc, with the request count."""
    page_mb = os.sysconf("SC_PAGE_SIZE") / 2**20
    tick = os.sysconf("SC_CLK_TCK")
    while every is not None and not done.wait(every):
        try:
            with open(f"/proc/{pid}/statm", encoding="ascii") as statm:
                resident = int(statm.read().split()[1])
            with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, ValueError, IndexError):
            return
        seen = len(server.requests)
        rss.append((seen, resident * page_mb))
        cpu.append((seen, (int(fields[11]) + int(fields[12])) / tick))


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"
