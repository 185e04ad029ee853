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

from codeloop.testing import batch as fixture
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, fault, tool_use, turn
from tests.e2e.cli import provider_env, run_cli

FLAGS = ["--model", "claude-sonnet-4-5", "--permission-mode", "acceptEdits"]


def batch_args(fx: fixture.Fixture, out: Path, *extra: str) -> list[str]:
    return [
        "batch",
        str(fx.tasks),
        "--out",
        str(out),
        "--repos-dir",
        str(fx.repos_dir),
        *FLAGS,
        *extra,
    ]


def env_for(server: FakeModelServer, home: Path) -> dict[str, str]:
    return provider_env(server, "anthropic", home) | {"CODELOOP_HOME": str(home / "codeloop")}


def check_results(fx: fixture.Fixture, out: Path) -> list[dict[str, object]]:
    """Every task has one result; the ones that could run hold exactly their own change."""
    results = fixture.read_jsonl(out / "results.jsonl")
    assert sorted(r["id"] for r in results) == sorted(fx.ids)
    by_id = {r["id"]: r for r in results}
    for task_id in fx.ids:
        result = by_id[task_id]
        if task_id == "task-13":
            assert (result["status"], result["end_reason"]) == ("failed", "max_turns")
            assert result["diff"] == ""
            continue
        if task_id == "task-17":
            assert result["status"] == "failed" and result["end_reason"] is None
            assert "no-such-ref" in result["error"] and result["turns"] == 0
            continue
        assert result["status"] == "completed", result
        assert result["final_text"] == f"{task_id}: done"
        assert result["turns"] == 3 and result["cost_usd"] > 0
        assert result["usage"]["input_tokens"] == 300
        diff = str(result["diff"])
        assert f"+owner: {task_id}\n" in diff and "-owner: nobody\n" in diff
        assert f"+++ b/notes/{task_id}.txt" in diff
        # Only its own: no other task's id anywhere in its diff or its files.
        others = [t for t in fx.ids if t != task_id]
        assert not [t for t in others if t in diff]
        workspace = Path(str(result["workspace"]))
        files = {
            str(p.relative_to(workspace)): p.read_text(errors="replace")
            for p in workspace.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(workspace).parts
        }
        assert files["OWNERS"] == f"owner: {task_id}\n"
        assert [f for f in files if f.startswith("notes/")] == [f"notes/{task_id}.txt"]
        assert not [t for t in others if any(t in text for text in files.values())]
        assert Path(str(result["transcript"])).is_file()
    swe = by_id["acme__widgets-00"]
    assert swe["base_commit"] == fx.base_commit and swe["ref"] == fx.base_commit
    return results


def check_predictions(fx: fixture.Fixture, out: Path, tmp: Path) -> None:
    """The SWE-bench harness's own checks on the file, then its first step for each patch:
    `git apply` on the repository at the base commit."""
    path = out / "predictions.jsonl"
    assert fixture.prediction_problems(path) == []
    predictions = fixture.read_jsonl(path)
    assert sorted(p["instance_id"] for p in predictions) == sorted(fx.ids)
    assert {p["model_name_or_path"] for p in predictions} == {"claude-sonnet-4-5"}
    checkout = tmp / "apply-check"
    fixture.git("clone", "--quiet", str(fx.repos_dir / "acme__widgets"), str(checkout), cwd=tmp)
    fixture.git("checkout", "--quiet", fx.base_commit, cwd=checkout)
    swe = [p for p in predictions if p["instance_id"].startswith("acme__widgets-")]
    assert len(swe) == 5
    for pred in swe:
        patch = tmp / f"{pred['instance_id']}.diff"
        patch.write_text(pred["model_patch"])
        fixture.git("apply", "--check", str(patch), cwd=checkout)


def test_twenty_tasks_on_four_workers(tmp_path: Path) -> None:
    fx = fixture.build(tmp_path / "fx")
    before = {path: fixture.tree_digest(path) for path in fx.originals}
    out = tmp_path / "out"
    with FakeModelServer(fx.scenarios) as server:
        run = run_cli(
            batch_args(fx, out, "--workers", "4"), cwd=tmp_path, env=env_for(server, tmp_path)
        )
        requests = server.requests
    assert run.returncode == 1, run.stderr  # two tasks are meant to fail
    check_results(fx, out)
    check_predictions(fx, out, tmp_path)
    assert {path: fixture.tree_digest(path) for path in fx.originals} == before
    # 18 tasks × 3 requests, the one with a turn limit made 1; task-17 never reached the model
    assert len(requests) == 18 * 3 + 1
    assert "task-17" not in {r.conversation for r in requests}
    assert "ran 20 tasks" in run.stderr and "failed task-13: max_turns" in run.stderr
    assert run.stderr.count("codeloop batch: [") == 20  # a progress line per task


def test_killed_halfway_then_restarted_runs_only_what_was_left(tmp_path: Path) -> None:
    fx = fixture.build(tmp_path / "fx", delay=0.01)
    out = tmp_path / "out"
    results = out / "results.jsonl"
    with FakeModelServer(fx.scenarios) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "codeloop", *batch_args(fx, out, "--workers", "2")],
            cwd=tmp_path,
            env=env_for(server, tmp_path),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 60
            while _lines(results) < 8 and proc.poll() is None:
                assert time.monotonic() < deadline, "the batch made no progress"
                time.sleep(0.01)
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


def _lines(path: Path) -> int:
    try:
        return path.read_text().count("\n")
    except FileNotFoundError:
        return 0


def test_a_529_storm_on_one_task_pauses_every_worker(tmp_path: Path) -> None:
    """One task meets three 529s with retry-after 1 s; the three others, busy with many quick
    turns, send nothing while each of those waits is under way."""
    fx = fixture.build(tmp_path / "fx", count=4)
    storm, *others = fx.ids
    burst = fault("overloaded", times=3, retry_after=1)
    echoes = [turn(tool_use("Bash", {"command": f"echo {i}"}), delay=0.005) for i in range(60)]
    scenarios = {
        storm: Scenario(turns=(turn("checked", faults=[burst]),)),
        **{task_id: Scenario(turns=(*echoes, turn("done"))) for task_id in others},
    }
    out = tmp_path / "out"
    with FakeModelServer(scenarios) as server:
        run = run_cli(
            batch_args(fx, out, "--workers", "4", "--allowedTools", "Bash(echo:*)"),
            cwd=tmp_path,
            env=env_for(server, tmp_path),
        )
        requests = server.requests
    assert run.returncode == 0, run.stderr
    overloads = [r for r in requests if r.status == 529]
    assert len(overloads) == 3 and {r.conversation for r in overloads} == {storm}
    busy = [r for r in requests if r.conversation != storm]
    assert len(busy) == 3 * 61
    for hit in overloads:
        assert hit.finished is not None
        # Requests already on their way may land just after the 529; then nothing until the
        # second is up (without the shared gate, each busy task sends one every few ms).
        quiet = [r for r in busy if hit.finished + 0.3 < r.arrived < hit.finished + 0.95]
        assert quiet == [], [round(r.arrived - hit.finished, 3) for r in quiet]
    last = overloads[-1].finished
    assert last is not None
    assert any(r.arrived < last for r in busy), "the others had not started by the storm's end"
    assert any(r.arrived > last + 1 for r in busy), "the others had nothing left to do"
    results = {r["id"]: r for r in fixture.read_jsonl(out / "results.jsonl")}
    assert results[storm]["retries"] == 3 and results[storm]["status"] == "completed"
