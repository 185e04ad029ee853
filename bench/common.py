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
            started = time.monotonic()
            proc = subprocess.Popen(
                argv, cwd=work, env=full_env, stdin=subprocess.DEVNULL, stdout=out, stderr=err
            )
            samples: list[tuple[int, float]] = []
            cpu: list[tuple[int, float]] = []
            done = threading.Event()
            sampler = threading.Thread(
                target=_sample, args=(proc.pid, server, rss_every, samples, cpu, done)
            )
            if rss_every is not None:
                sampler.start()
            # wait4 gives this one child's peak RSS (ru_maxrss, in KiB on Linux).
            _, status, rusage = os.wait4(proc.pid, 0)
            ended = time.monotonic()
            done.set()
            if sampler.is_alive():
                sampler.join()
            proc.returncode = os.waitstatus_to_exitcode(status)
            err.seek(0)
            stderr = err.read().decode(errors="replace")
        return CliMeasurement(
            started,
            ended,
            proc.returncode,
            rusage.ru_maxrss / 1024,
            list(server.requests),
            stderr,
            rusage.ru_utime + rusage.ru_stime,
            samples,
            cpu,
        )


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
