"""Shared plumbing for benchmarks: run the real CLI against the fake model server, measure."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
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

    @property
    def to_first_request(self) -> float:
        return self.requests[0].arrived - self.started

    def gaps(self) -> list[float]:
        """From the end of each response to the arrival of the next request."""
        pairs = zip(self.requests, self.requests[1:], strict=False)
        return [b.arrived - a.finished for a, b in pairs if a.finished is not None]


def run_cli(
    scenario: Scenario,
    args: Sequence[str],
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> CliMeasurement:
    """One `codeloop -p` process against a fresh fake server; peak RSS from wait4."""
    with FakeModelServer(scenario) as server, tempfile.TemporaryDirectory() as home:
        full_env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": home,
            "ANTHROPIC_BASE_URL": server.anthropic_base_url,
            "ANTHROPIC_API_KEY": "bench",
            **(env or {}),
        }
        work = cwd or Path(home)
        argv = [sys.executable, "-m", "codeloop", "--model", MODEL, *args]
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            started = time.monotonic()
            proc = subprocess.Popen(
                argv, cwd=work, env=full_env, stdin=subprocess.DEVNULL, stdout=out, stderr=err
            )
            # wait4 gives this one child's peak RSS (ru_maxrss, in KiB on Linux).
            _, status, rusage = os.wait4(proc.pid, 0)
            ended = time.monotonic()
            proc.returncode = os.waitstatus_to_exitcode(status)
            err.seek(0)
            stderr = err.read().decode(errors="replace")
        return CliMeasurement(
            started, ended, proc.returncode, rusage.ru_maxrss / 1024, list(server.requests), stderr
        )


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"
