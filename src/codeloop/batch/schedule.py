"""Which task starts next, what a finished one changes, and the local worker pool.

`Batch` is the driver's state whatever runs the tasks: the tasks left to start (finished ones
are skipped), the spend so far against the batch's budget (once spent, nothing new starts;
tasks already running finish), and the results file each result goes to the moment it
arrives. `run_local` runs it on N asyncio workers in this process, sharing one LocalGate.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections import deque
from collections.abc import Mapping, Sequence

from codeloop.batch.limiter import LocalGate
from codeloop.batch.progress import Counts, Progress
from codeloop.batch.results import Result, ResultsFile
from codeloop.batch.runner import RunConfig, run_task
from codeloop.batch.tasks import Task


class Batch:
    def __init__(
        self,
        tasks: Sequence[Task],
        results: ResultsFile,
        *,
        budget_usd: float | None = None,
        progress: Progress | None = None,
    ) -> None:
        ids = {task.id for task in tasks}
        earlier = [r for r in results.finished.values() if r["id"] in ids]
        self.results = results
        self.skipped = len(earlier)
        self.pending = deque(task for task in tasks if task.id not in results.finished)
        self.budget_usd = budget_usd
        self.counts = Counts(
            total=len(tasks),
            done=len(earlier),
            failed=sum(r["status"] != "completed" for r in earlier),
            cost_usd=sum(float(r.get("cost_usd") or 0.0) for r in earlier),
        )
        self.progress = progress or Progress(self.counts)
        self.progress.counts = self.counts
        self.ran = 0
        self.budget_stopped = False
        self.interrupted = False

    def next(self) -> Task | None:
        """The next task to start, or None: none left, or the budget is spent."""
        if not self.pending:
            return None
        if self.budget_usd is not None and self.counts.cost_usd >= self.budget_usd:
            self.budget_stopped = True
            return None
        self.counts.running += 1
        self.progress.changed()
        return self.pending.popleft()

    def give_back(self, task: Task) -> None:
        """A task stopped before its end (the batch was interrupted): it starts next time."""
        self.counts.running -= 1
        self.pending.appendleft(task)

    def finish(self, result: Result) -> None:
        self.results.add(result)
        self.ran += 1
        self.counts.running -= 1
        self.counts.done += 1
        self.counts.failed += result["status"] != "completed"
        self.counts.cost_usd += float(result.get("cost_usd") or 0.0)
        self.progress.changed(result)

    @property
    def not_started(self) -> int:
        return len(self.pending)


async def run_local(
    batch: Batch, sources: Mapping[str, str], config: RunConfig, workers: int
) -> None:
    """At most `workers` tasks at once, each an in-process session; one limiter for all.
    Ctrl+C interrupts the running tasks cleanly and starts no more (their results are not
    kept: they run again next time); a second Ctrl+C exits at once."""
    gate = LocalGate()
    stop = asyncio.Event()
    _on_ctrl_c(stop)

    async def worker() -> None:
        while not stop.is_set() and (task := batch.next()) is not None:
            result = await run_task(task, sources[task.id], config, gate, stop)
            if result["status"] == "interrupted":
                batch.give_back(task)
            else:
                batch.finish(result)

    await asyncio.gather(*(worker() for _ in range(workers)))
    batch.interrupted = stop.is_set()


def _on_ctrl_c(stop: asyncio.Event) -> None:
    def pressed() -> None:
        if stop.is_set():
            os._exit(130)  # every finished result is already on disk
        stop.set()

    # Not the main thread, or no signal handlers here: Ctrl+C keeps its default.
    with contextlib.suppress(NotImplementedError, RuntimeError):
        asyncio.get_running_loop().add_signal_handler(signal.SIGINT, pressed)
