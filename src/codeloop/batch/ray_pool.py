"""`--ray ADDRESS`: each task a Ray task on a cluster; results stream back to this driver.

Imported only for --ray (Ray is the optional extra `codeloop[ray]`). A worker runs the same
`run_task` as the local pool, making the workspace on its own node; the driver writes each
result the moment its task ends. The batch's rate-limit gate is one actor, so a 429 or 529
met on any node holds back the requests of every node. Ray never re-runs a task on its own
(max_retries=0): a task that costs money runs again only when the user asks
(--retry-failed).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from codeloop.batch.limiter import Gate, wait_open
from codeloop.batch.results import Result
from codeloop.batch.runner import RunConfig, new_result, run_task
from codeloop.batch.schedule import Batch
from codeloop.batch.tasks import Task


class RayUnavailable(Exception):
    """Ray is not installed, or the cluster cannot be reached; the message says which."""


class ActorGate:
    """The RateLimiter of a task on a worker: the batch's Gate, asked over Ray."""

    def __init__(self, actor: Any) -> None:
        self._actor = actor

    async def _remaining(self) -> float:
        return float(await self._actor.remaining.remote())

    async def wait(self) -> None:
        await wait_open(self._remaining)

    async def hold(self, seconds: float) -> None:
        await self._actor.hold.remote(seconds)


def task_on_worker(task: Task, source: str, config: RunConfig, gate: Any) -> Result:
    """What a Ray worker runs: one task, to its result."""
    return asyncio.run(run_task(task, source, config, ActorGate(gate)))


def run_on_ray(
    batch: Batch,
    sources: Mapping[str, str],
    config: RunConfig,
    address: str,
    in_flight: int | None,
) -> None:
    """Keep up to `in_flight` tasks on the cluster (default: its CPUs) until none are left."""
    ray = _connect(address)
    try:
        remote = ray.remote(max_retries=0)(task_on_worker)
        gate = ray.remote(num_cpus=0)(Gate).remote()
        limit = in_flight or max(1, int(ray.cluster_resources().get("CPU", 1)))
        running: dict[Any, Task] = {}
        try:
            while True:
                while len(running) < limit and (task := batch.next()) is not None:
                    running[remote.remote(task, sources[task.id], config, gate)] = task
                if not running:
                    return
                ready, _ = ray.wait(list(running), num_returns=1)
                for ref in ready:
                    task = running.pop(ref)
                    batch.finish(_collect(ray, ref, task, config))
        finally:
            for ref in running:
                ray.cancel(ref, force=True)
    finally:
        ray.shutdown()


def _collect(ray: Any, ref: Any, task: Task, config: RunConfig) -> Result:
    """The task's result; a worker that died or an error inside Ray becomes a failed one."""
    try:
        result: Result = ray.get(ref)
    except ray.exceptions.RayError as exc:
        result = new_result(task, config)
        first = str(exc).strip().splitlines()
        result["error"] = f"Ray: {type(exc).__name__}: {first[0] if first else ''}".rstrip(": ")
    return result


def _connect(address: str) -> Any:
    try:
        import ray
    except ImportError:
        raise RayUnavailable(
            "--ray needs Ray, which is not installed: pip install 'codeloop[ray]'"
        ) from None
    try:
        ray.init(
            address=address,
            logging_level=logging.WARNING,
            log_to_driver=False,
            configure_logging=True,
        )
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise RayUnavailable(f"cannot connect to the Ray cluster at {address}: {exc}") from None
    return ray
