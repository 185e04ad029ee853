"""Children are waited for without a thread each, from whichever loop started them."""

import asyncio
import signal
import sys
import threading

import pytest

from codeloop.system import child_watcher

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="pidfds are Linux's")


async def run_child(code: int, threads_seen: list[str]) -> int:
    """A shell that exits with `code` once told to; while it waits, note the threads."""
    proc = await asyncio.create_subprocess_exec(
        "sh", "-c", f"read _; exit {code}", stdin=asyncio.subprocess.PIPE
    )
    threads_seen += [t.name for t in threading.enumerate()]
    assert proc.stdin is not None
    proc.stdin.write(b"go\n")
    await proc.stdin.drain()
    return await proc.wait()


def test_children_of_loops_in_two_threads_end_with_their_own_status_and_no_waiting_thread() -> None:
    child_watcher.install()
    seen: list[str] = []
    codes: dict[int, int] = {}

    def one(code: int) -> None:
        codes[code] = asyncio.run(run_child(code, seen))

    workers = [threading.Thread(target=one, args=(code,)) for code in (3, 5)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert codes == {3: 3, 5: 5}
    assert seen and not [name for name in seen if "waitpid" in name]


def test_a_killed_child_reports_its_signal() -> None:
    child_watcher.install()

    async def killed() -> int:
        proc = await asyncio.create_subprocess_exec(
            "sh", "-c", "read _", stdin=asyncio.subprocess.PIPE
        )
        proc.send_signal(signal.SIGKILL)
        return await proc.wait()

    assert asyncio.run(killed()) == -signal.SIGKILL
