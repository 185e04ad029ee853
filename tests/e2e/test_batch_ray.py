"""The scripted batch on a local Ray cluster gives the results the local workers give, and a
529 storm there pauses every task on the cluster.

The cluster, its workers and the fake model server run in a private network namespace with
only loopback (ray_netns_driver.py): Ray binds to the machine's address otherwise. Needs the
`ray` extra and root (CI has both; elsewhere the test skips, saying why).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

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

DRIVER = Path(__file__).with_name("ray_netns_driver.py")
NETNS = ["unshare", "--net", "--pid", "--fork", "--mount-proc"]


def _missing() -> str | None:
    if importlib.util.find_spec("ray") is None:
        return "Ray is not installed (the ray extra)"
    if shutil.which("unshare") is None:
        return "unshare is not installed"
    probe = subprocess.run([*NETNS, "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        return f"no private network namespace here (root needed): {probe.stderr.decode().strip()}"
    return None


@dataclass(frozen=True)
class RayRuns:
    twenty: fixture.Fixture
    twenty_out: Path
    storm: fixture.Fixture
    storm_out: Path
    digests: dict[Path, str]


@pytest.fixture(scope="module")
def on_ray(tmp_path_factory: pytest.TempPathFactory) -> RayRuns:
    """Both batches on one cluster, started once (a cluster takes seconds to start)."""
    missing = _missing()
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the Ray tests: {missing}")
        pytest.skip(missing)
    tmp = tmp_path_factory.mktemp("ray")
    twenty, storm = fixture.build(tmp / "twenty"), fixture.build(tmp / "storm", 4)
    digests = {path: tree_digest(path) for path in twenty.originals}
    runs = RayRuns(twenty, tmp / "twenty-out", storm, tmp / "storm-out", digests)
    spec = [
        {
            "root": str(twenty.root),
            "out": str(runs.twenty_out),
            "home": str(tmp / "home"),
            "storm": False,
            "args": ["--workers", "4"],
        },
        {
            "root": str(storm.root),
            "out": str(runs.storm_out),
            "home": str(tmp / "home"),
            "storm": True,
            "args": STORM_FLAGS,
        },
    ]
    (tmp / "spec.json").write_text(json.dumps(spec))
    driver = subprocess.run(
        [
            *NETNS,
            "sh",
            "-c",
            'ip link set lo up && exec "$0" "$@"',
            sys.executable,
            str(DRIVER),
            str(tmp / "spec.json"),
        ],
        cwd=tmp,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert driver.returncode == 0, driver.stdout + driver.stderr
    return runs


def test_twenty_tasks_on_ray_match_the_local_workers(on_ray: RayRuns, tmp_path: Path) -> None:
    fx, ray_out = on_ray.twenty, on_ray.twenty_out
    assert (ray_out / "exit_status").read_text() == "1"  # two tasks are meant to fail
    local_out = tmp_path / "local"
    with FakeModelServer(fx.scenarios) as server:
        local = run_cli(
            batch_args(fx, local_out, "--workers", "4"), cwd=tmp_path, env=env_for(server, tmp_path)
        )
    assert local.returncode == 1, local.stderr

    check_results(fx, ray_out)
    check_predictions(fx, ray_out, tmp_path)
    local_results = fixture.read_jsonl(local_out / "results.jsonl")
    ray_results = fixture.read_jsonl(ray_out / "results.jsonl")
    assert fixture.comparable(ray_results, ray_out) == fixture.comparable(local_results, local_out)
    assert sorted(fixture.read_jsonl(ray_out / "predictions.jsonl"), key=str) == sorted(
        fixture.read_jsonl(local_out / "predictions.jsonl"), key=str
    )
    asked = [r["conversation"] for r in json.loads((ray_out / "requests.json").read_text())]
    assert len(asked) == 18 * 3 + 1 and "task-17" not in asked
    assert {path: tree_digest(path) for path in fx.originals} == on_ray.digests


def test_a_529_storm_pauses_every_task_across_the_cluster(on_ray: RayRuns) -> None:
    """The gate is an actor: each task, in its own Ray worker process, waits on it."""
    assert (on_ray.storm_out / "exit_status").read_text() == "0"
    requests = json.loads((on_ray.storm_out / "requests.json").read_text())
    check_storm(on_ray.storm, on_ray.storm_out, requests)
