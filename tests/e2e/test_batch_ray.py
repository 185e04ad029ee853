"""The scripted batch on a local Ray cluster gives the results the local workers give.

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
from pathlib import Path

import pytest

from codeloop.testing import batch as fixture
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.tree import tree_digest
from tests.e2e.batch_checks import batch_args, check_predictions, check_results, env_for
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


@pytest.fixture(scope="module")
def ray_ready() -> None:
    missing = _missing()
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the Ray tests: {missing}")
        pytest.skip(missing)


@pytest.mark.usefixtures("ray_ready")
def test_twenty_tasks_on_ray_match_the_local_workers(tmp_path: Path) -> None:
    fx = fixture.build(tmp_path / "fx")
    before = {path: tree_digest(path) for path in fx.originals}

    local_out = tmp_path / "local"
    with FakeModelServer(fx.scenarios) as server:
        local = run_cli(
            batch_args(fx, local_out, "--workers", "4"), cwd=tmp_path, env=env_for(server, tmp_path)
        )
    assert local.returncode == 1, local.stderr

    ray_out = tmp_path / "ray"
    script = 'ip link set lo up && exec "$0" "$@"'
    driver = subprocess.run(
        [
            *NETNS,
            "sh",
            "-c",
            script,
            sys.executable,
            str(DRIVER),
            str(fx.root),
            str(ray_out),
            str(tmp_path / "ray-home"),
        ],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert driver.returncode == 1, driver.stdout + driver.stderr  # the batch's: 2 tasks fail
    assert "ran 20 tasks" in driver.stderr

    check_results(fx, ray_out)
    check_predictions(fx, ray_out, tmp_path)
    local_results = fixture.read_jsonl(local_out / "results.jsonl")
    ray_results = fixture.read_jsonl(ray_out / "results.jsonl")
    assert fixture.comparable(ray_results, ray_out) == fixture.comparable(local_results, local_out)
    assert (ray_out / "predictions.jsonl").read_text().count("\n") == 20
    assert sorted(fixture.read_jsonl(ray_out / "predictions.jsonl"), key=str) == sorted(
        fixture.read_jsonl(local_out / "predictions.jsonl"), key=str
    )
    asked = json.loads((ray_out / "requests.json").read_text())
    assert len(asked) == 18 * 3 + 1 and "task-17" not in asked
    assert {path: tree_digest(path) for path in fx.originals} == before
