"""Run scripted batches on a local Ray cluster, inside a network namespace with only loopback.

Started by test_batch_ray.py as `unshare --net --pid --fork --mount-proc`, never by hand: Ray
binds to the machine's address unless the namespace has no other, and the pid namespace ends
every process the cluster started when this script (its init) exits. The fake model server
runs here too, so all traffic stays on this namespace's 127.0.0.1.

    python ray_netns_driver.py SPEC.json

SPEC.json lists batches, each {"root": fixture folder, "out": DIR, "home": DIR, "storm": bool,
"args": [extra flags]}; one cluster runs them in turn. Each OUT gets requests.json (what the
fake server saw of each request) and exit_status (the batch's).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]

from codeloop.testing import batch as fixture
from codeloop.testing.fake_server import FakeModelServer

PORT = 6379  # nothing else listens in a fresh namespace


def start_head(temp: Path) -> subprocess.Popen[bytes]:
    """`ray start --head --block` in a session of its own: the processes to stop later."""
    ray = Path(sys.executable).with_name("ray")
    log = open(temp / "head.log", "wb")  # noqa: SIM115  # the head writes it until it stops
    head = subprocess.Popen(
        [
            str(ray),
            "start",
            "--head",
            "--block",
            "--node-ip-address=127.0.0.1",
            f"--port={PORT}",
            "--num-cpus=4",
            "--include-dashboard=false",
            "--disable-usage-stats",
            f"--temp-dir={temp}",
        ],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while b"Ray runtime started" not in (temp / "head.log").read_bytes():
        if head.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"ray start failed:\n{(temp / 'head.log').read_text(errors='replace')}")
        time.sleep(0.1)
    return head


def stop(head: subprocess.Popen[bytes]) -> None:
    """End every process of the head's session (its workers too), by pid: never `ray stop`."""
    ours = [p for p in psutil.process_iter() if _session(p.pid) == head.pid]
    for proc in ours:
        with contextlib.suppress(psutil.NoSuchProcess):  # it may have ended meanwhile
            proc.send_signal(signal.SIGTERM)
    _, alive = psutil.wait_procs(ours, timeout=5)
    for proc in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()
    head.wait()


def _session(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except OSError:
        return None


def run(batch: dict[str, Any], env: dict[str, str]) -> None:
    root, out = Path(batch["root"]), Path(batch["out"])
    ids = fixture.task_ids(root / "tasks.jsonl")
    scenarios = fixture.storm_conversations(ids) if batch["storm"] else fixture.conversations(ids)
    with FakeModelServer(scenarios) as server:
        done = subprocess.run(
            [
                *(sys.executable, "-m", "codeloop", "batch", str(root / "tasks.jsonl")),
                *("--out", str(out), "--repos-dir", str(root / "repos")),
                *("--model", "claude-sonnet-4-5", "--permission-mode", "acceptEdits"),
                *("--ray", f"127.0.0.1:{PORT}", *batch["args"]),
            ],
            env={**env, **fixture.model_env(server.url), "CODELOOP_HOME": batch["home"]},
            stdin=subprocess.DEVNULL,
            check=False,
        )
        requests = [fixture.timing(r) for r in server.requests]
    (out / "requests.json").write_text(json.dumps(requests))
    (out / "exit_status").write_text(str(done.returncode))


def main() -> int:
    batches = json.loads(Path(sys.argv[1]).read_text())
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    temp = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))  # short: Ray's socket paths
    head = start_head(temp)
    try:
        for batch in batches:
            run(batch, env)
        return 0
    finally:
        stop(head)
        shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
