"""`codeloop batch` end to end: the real CLI as a subprocess, 20 scripted tasks, the fake server.

Isolation (each workspace holds its own task's changes, the originals stay byte for byte as
they were), SWE-bench predictions that apply, a kill halfway then a restart that asks the
model nothing for the finished tasks, and a 529 storm that pauses every worker.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from codeloop.testing import batch as fixture
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.tree import tree_digest
from tests.e2e.batch_checks import (
    STORM_FLAGS,
    batch_args,
    check_predictions,
    check_results,
    check_storm,
    env_for,
)
from tests.e2e.cli import run_cli


def test_twenty_tasks_on_four_workers(tmp_path: Path) -> None:
    fx = fixture.build(tmp_path / "fx")
    before = {path: tree_digest(path) for path in fx.originals}
    out = tmp_path / "out"
    with FakeModelServer(fx.scenarios) as server:
        run = run_cli(
            batch_args(fx, out, "--workers", "4"), cwd=tmp_path, env=env_for(server, tmp_path)
        )
        requests = server.requests
    assert run.returncode == 1, run.stderr  # two tasks are meant to fail
    check_results(fx, out)
    check_predictions(fx, out, tmp_path)
    assert {path: tree_digest(path) for path in fx.originals} == before
    # 18 tasks × 3 requests, the one with a turn limit made 1; task-17 never reached the model
    assert len(requests) == 18 * 3 + 1
    assert "task-17" not in {r.conversation for r in requests}
    assert "ran 20 tasks" in run.stderr
    assert "1 failed: max_turns: Reached the limit of 1 turns\n    task-13\n" in run.stderr
    assert run.stderr.count("codeloop batch: [") == 20  # a progress line per task


def test_killed_halfway_then_restarted_runs_only_what_was_left(tmp_path: Path) -> None:
    fx = fixture.build(tmp_path / "fx", delay=0.01)
    out = tmp_path / "out"
    results = out / "results.jsonl"
    with FakeModelServer(fx.scenarios) as server:
        proc = start_batch(fx, out, server, tmp_path, start_new_session=True)
        try:
            wait_for_results(proc, results, 8)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    finished = {r["id"] for r in fixture.read_jsonl(results)}
    assert 8 <= len(finished) < 20

    with FakeModelServer(fx.scenarios) as server:
        run = run_cli(
            batch_args(fx, out, "--workers", "2"), cwd=tmp_path, env=env_for(server, tmp_path)
        )
        asked = {r.conversation for r in server.requests}
    assert run.returncode == 1, run.stderr
    assert f"{len(finished)} of 20 tasks finished in an earlier run" in run.stderr
    assert not asked & finished  # no new model request for a finished task
    assert asked == set(fx.ids) - finished - {"task-17"}
    check_results(fx, out)  # one line each, and the interrupted ones started over cleanly
    check_predictions(fx, out, tmp_path)


def start_batch(
    fx: fixture.Fixture, out: Path, server: FakeModelServer, tmp: Path, **popen: Any
) -> subprocess.Popen[str]:
    """The batch on two workers, in the background; stderr readable once it ends."""
    return subprocess.Popen(
        [sys.executable, "-m", "codeloop", *batch_args(fx, out, "--workers", "2")],
        cwd=tmp,
        env=env_for(server, tmp),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


def wait_for_results(proc: subprocess.Popen[str], path: Path, count: int) -> None:
    """Until `count` results are on disk (the batch is then midway), for a minute at most."""
    deadline = time.monotonic() + 60
    while _lines(path) < count and proc.poll() is None:
        assert time.monotonic() < deadline, "the batch made no progress"
        time.sleep(0.01)


def _lines(path: Path) -> int:
    try:
        return path.read_text().count("\n")
    except FileNotFoundError:
        return 0


def test_a_529_storm_on_one_task_pauses_every_worker(tmp_path: Path) -> None:
    fx = fixture.build(tmp_path / "fx", count=4)
    out = tmp_path / "out"
    with FakeModelServer(fixture.storm_conversations(fx.ids)) as server:
        run = run_cli(
            batch_args(fx, out, *STORM_FLAGS), cwd=tmp_path, env=env_for(server, tmp_path)
        )
        requests = [fixture.timing(r) for r in server.requests]
    assert run.returncode == 0, run.stderr
    check_storm(fx, out, requests)


def test_the_batch_budget_stops_new_tasks_and_counts_earlier_runs(tmp_path: Path) -> None:
    fx = fixture.build(tmp_path / "fx")
    out = tmp_path / "out"
    budget = ["--workers", "1", "--max-budget-usd", "0.005"]  # a task costs $0.00153
    with FakeModelServer(fx.scenarios) as server:
        first = run_cli(batch_args(fx, out, *budget), cwd=tmp_path, env=env_for(server, tmp_path))
        again = run_cli(batch_args(fx, out, *budget), cwd=tmp_path, env=env_for(server, tmp_path))
        asked_before_more = len(server.requests)
        more = run_cli(
            batch_args(fx, out, "--workers", "1", "--max-budget-usd", "0.008"),
            cwd=tmp_path,
            env=env_for(server, tmp_path),
        )
    assert first.returncode == 1
    assert "the batch budget of $0.005 is spent; 16 tasks were not started" in first.stderr
    assert again.returncode == 1 and "ran 0 tasks" in again.stderr
    assert asked_before_more == 4 * 3  # the second run asked nothing
    assert more.returncode == 1 and "ran 2 tasks" in more.stderr
    results = fixture.read_jsonl(out / "results.jsonl")
    assert len(results) == 6 and sum(r["cost_usd"] for r in results) >= 0.008


def test_ctrl_c_stops_the_batch_and_the_next_run_finishes_it(tmp_path: Path) -> None:
    fx = fixture.build(tmp_path / "fx", delay=0.01)
    out = tmp_path / "out"
    with FakeModelServer(fx.scenarios) as server:
        proc = start_batch(fx, out, server, tmp_path)
        wait_for_results(proc, out / "results.jsonl", 3)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 130, stderr
        assert "interrupted;" in stderr and "run the same command again" in stderr
        assert "Traceback" not in stderr
    with FakeModelServer(fx.scenarios) as server:  # the interrupted tasks start over
        again = run_cli(
            batch_args(fx, out, "--workers", "2"), cwd=tmp_path, env=env_for(server, tmp_path)
        )
    assert again.returncode == 1, again.stderr
    check_results(fx, out)
