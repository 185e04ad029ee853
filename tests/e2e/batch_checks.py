"""What every run of the scripted batch must show, however it ran (workers or Ray)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from codeloop.testing import batch as fixture
from codeloop.testing.fake_server import FakeModelServer
from tests.e2e.cli import provider_env

FLAGS = ["--model", "claude-sonnet-4-5", "--permission-mode", "acceptEdits"]
STORM_FLAGS = ["--workers", "4", "--allowedTools", "Bash(echo:*)"]


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


def check_storm(fx: fixture.Fixture, out: Path, requests: list[dict[str, Any]]) -> None:
    """While the storm task waits out each 529, no busy task sends more than the one request
    it may have had past the gate already: the gate is held from the moment the 529 arrived
    until the wait is up (without it, each busy task sends one every few milliseconds)."""
    storm = fx.ids[0]
    overloads = [r for r in requests if r["status"] == 529]
    assert len(overloads) == 3 and {r["conversation"] for r in overloads} == {storm}
    busy = [r for r in requests if r["conversation"] != storm]
    assert len(busy) == 3 * 61
    wait = fixture.STORM_RETRY_AFTER
    for hit in overloads:
        start, end = hit["finished"], hit["finished"] + wait
        during = Counter(r["conversation"] for r in busy if start < r["arrived"] < end)
        assert max(during.values(), default=0) <= 1, during
    last = overloads[-1]["finished"]
    assert any(r["arrived"] < last for r in busy), "the others had not started by the storm's end"
    assert any(r["arrived"] > last + wait for r in busy), "the others had nothing left to do"
    results = {r["id"]: r for r in fixture.read_jsonl(out / "results.jsonl")}
    assert results[storm]["retries"] == 3 and results[storm]["status"] == "completed"
