"""Throughput of `codeloop batch` on 1, 2 and 4 workers, and what a task costs in a batch
compared with one `codeloop -p` run of the same conversation.

The scripted batch of codeloop.testing.batch (read, edit + write, answer: three turns a task,
each in its own clone) against the fake server, once answering at once and once pacing every
streamed event (a model's latency, during which other workers can run). Medians of --runs.

    python -m bench.batch [--runs 3] [--tasks 20] [--delay 0.02]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import median
from codeloop.testing import batch as fixture
from codeloop.testing.fake_server import FakeModelServer

FLAGS = ["--model", "claude-sonnet-4-5", "--permission-mode", "acceptEdits"]


def environment(server: FakeModelServer, home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        **fixture.model_env(server.url),
    }


def run_batch(tasks: int, workers: int, delay: float) -> tuple[float, list[float]]:
    """Wall time of one batch process, and each task's own duration inside it."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        fx = fixture.build(root / "fx", tasks, delay=delay)
        out = root / "out"
        with FakeModelServer(fx.scenarios) as server:
            argv = [sys.executable, "-m", "codeloop", "batch", str(fx.tasks), "--out", str(out)]
            argv += ["--repos-dir", str(fx.repos_dir), "--workers", str(workers), *FLAGS]
            started = time.monotonic()
            done = subprocess.run(
                argv, env=environment(server, root), capture_output=True, text=True, check=False
            )
            wall = time.monotonic() - started
        if done.returncode not in (0, 1) or "ran " not in done.stderr:
            sys.exit(f"batch failed (exit {done.returncode}):\n{done.stderr}")
        durations = [r["duration_s"] for r in fixture.read_jsonl(out / "results.jsonl")]
        return wall, durations


def run_single(delay: float) -> float:
    """One `codeloop -p` run of one task's conversation, in a fresh clone of its repository."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        fx = fixture.build(root / "fx", 1, delay=delay)
        (task_id,) = fx.ids
        clone = root / "clone"
        fixture.git("clone", "--quiet", str(fx.repos_dir / "acme__widgets"), str(clone), cwd=root)
        with FakeModelServer(fx.scenarios) as server:
            argv = [sys.executable, "-m", "codeloop", "-p", f"Task {task_id}", *FLAGS]
            started = time.monotonic()
            done = subprocess.run(
                argv, cwd=clone, env=environment(server, root), capture_output=True, check=False
            )
            wall = time.monotonic() - started
        if done.returncode != 0:
            sys.exit(f"codeloop -p failed: {done.stderr.decode(errors='replace')}")
        return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument(
        "--delay", type=float, default=0.02, help="seconds after each streamed event"
    )
    args = parser.parse_args()
    print(f"codeloop batch, {args.tasks} tasks of 3 turns, {args.runs} runs (medians)")
    per_task: dict[tuple[float, int], float] = {}
    for delay in (0.0, args.delay):
        label = "instant server" if delay == 0 else f"{delay * 1000:g} ms per streamed event"
        for workers in (1, 2, 4):
            walls, inner = [], []
            for _ in range(args.runs):
                wall, durations = run_batch(args.tasks, workers, delay)
                walls.append(wall)
                inner.extend(durations)
            wall = median(walls)
            per_task[delay, workers] = wall / args.tasks
            print(
                f"  {label:<26} {workers} worker{'s' if workers > 1 else ' '}  "
                f"{args.tasks / wall * 60:7.1f} tasks/min   wall {wall:6.2f} s   "
                f"a task inside {median(inner) * 1000:6.0f} ms"
            )
    for delay in (0.0, args.delay):
        single = median([run_single(delay) for _ in range(args.runs)])
        batch_one = per_task[delay, 1]
        label = "instant server" if delay == 0 else f"{delay * 1000:g} ms per event"
        print(
            f"  {label}: codeloop -p of one task {single * 1000:6.0f} ms; a task in a batch "
            f"on 1 worker {batch_one * 1000:6.0f} ms (clone and diff included): "
            f"{(batch_one - single) * 1000:+.0f} ms"
        )


if __name__ == "__main__":
    main()
