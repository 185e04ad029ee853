"""Run the scripted batch on a local Ray cluster, inside a network namespace with only loopback.

Started by test_batch_ray.py as `unshare --net --pid --fork --mount-proc`, never by hand: Ray
binds to the machine's address unless the namespace has no other, and the pid namespace ends
every process the cluster started when this script (its init) exits. The fake model server
runs here too, so all traffic stays on this namespace's 127.0.0.1.

    python ray_netns_driver.py FIXTURE_ROOT OUT_DIR HOME_DIR

Writes OUT_DIR/requests.json (the conversation of each request the server saw) and exits with
the batch's exit status.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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
        proc.send_signal(signal.SIGTERM)
    _, alive = psutil.wait_procs(ours, timeout=5)
    for proc in alive:
        proc.kill()
    head.wait()


def _session(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except OSError:
        return None


def main() -> int:
    root, out, home = (Path(arg) for arg in sys.argv[1:4])
    fx_tasks = root / "tasks.jsonl"
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "CODELOOP_HOME": str(home)}
    os.environ.update(env)
    temp = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))  # short: Ray's socket paths
    head = start_head(temp)
    try:
        scenarios = fixture.conversations(fixture.task_ids(fx_tasks))
        with FakeModelServer(scenarios) as server:
            env |= {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "test-key"}
            batch = subprocess.run(
                [
                    *(sys.executable, "-m", "codeloop", "batch", str(fx_tasks)),
                    *("--out", str(out), "--repos-dir", str(root / "repos")),
                    *("--model", "claude-sonnet-4-5", "--permission-mode", "acceptEdits"),
                    *("--ray", f"127.0.0.1:{PORT}", "--workers", "4"),
                ],
                env=env,
                stdin=subprocess.DEVNULL,
                check=False,
            )
            conversations = [r.conversation for r in server.requests]
        (out / "requests.json").write_text(json.dumps(conversations))
        return batch.returncode
    finally:
        stop(head)
        shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
