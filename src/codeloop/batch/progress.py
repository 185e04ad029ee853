"""What a person sees while a batch runs (stderr) and the table it ends with.

On a terminal one status line is redrawn in place: done, running, failed, cost so far; in a
log (not a terminal) each finished task gets a line of its own instead.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from typing import TextIO

from codeloop.batch.results import Result
from codeloop.system.valueclass import valueclass


@valueclass(frozen=False)
class Counts:
    total: int
    done: int = 0
    failed: int = 0
    running: int = 0
    cost_usd: float = 0.0


class Progress:
    def __init__(self, counts: Counts, stream: TextIO | None = None) -> None:
        self.counts = counts
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self.started = time.monotonic()

    def changed(self, finished: Result | None = None) -> None:
        if self.live:
            self.stream.write("\r\x1b[K" + self.status_line())
        elif finished is not None:
            self.stream.write(f"codeloop batch: {self._finished_line(finished)}\n")
        self.stream.flush()

    def status_line(self) -> str:
        c = self.counts
        return (
            f"batch: {c.done}/{c.total} done · {c.running} running · {c.failed} failed · "
            f"${c.cost_usd:.4f} · {_duration(time.monotonic() - self.started)}"
        )

    def _finished_line(self, result: Result) -> str:
        c = self.counts
        what = "completed" if result["status"] == "completed" else f"failed: {why(result)}"
        return (
            f"[{c.done}/{c.total}] {result['id']} {what} ({result.get('turns', 0)} turns, "
            f"${result.get('cost_usd', 0.0):.4f}, {result.get('duration_s', 0.0):.1f} s) · "
            f"{c.running} running · ${c.cost_usd:.4f} so far"
        )

    def close(self) -> None:
        if self.live:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def why(result: Result) -> str:
    reason = result.get("end_reason")
    error = result.get("error")
    if reason and error:
        return f"{reason}: {error}"
    return str(error or reason or "unknown")


def summary(results: Iterable[Result], wall_s: float, ran: int) -> str:
    """The closing table: tasks, turns, tokens and cost by status, then each failure."""
    rows: dict[str, list[float]] = {}
    failures: list[Result] = []
    for result in results:
        usage = result.get("usage") or {}
        row = rows.setdefault(result["status"], [0, 0, 0, 0, 0.0])
        for i, value in enumerate(
            (
                1,
                result.get("turns", 0),
                usage.get("input_tokens", 0),
                usage.get("output_tokens", 0),
                result.get("cost_usd", 0.0),
            )
        ):
            row[i] += value
        if result["status"] != "completed":
            failures.append(result)
    total = [sum(col) for col in zip(*rows.values(), strict=True)] if rows else [0] * 5
    header = (
        f"{'status':<11}{'tasks':>7}{'turns':>8}{'tokens in':>12}{'tokens out':>12}{'cost':>11}"
    )
    lines = [header, "-" * len(header)]
    for name, row in [*sorted(rows.items()), ("total", total)]:
        tasks, turns, tokens_in, tokens_out, cost = row
        lines.append(
            f"{name:<11}{int(tasks):>7}{int(turns):>8}{int(tokens_in):>12,}{int(tokens_out):>12,}"
            f"{'$' + format(cost, '.4f'):>11}"
        )
    rate = f", {ran / wall_s * 60:.1f} tasks/min" if ran and wall_s > 0 else ""
    lines.append(f"ran {ran} tasks in {_duration(wall_s)}{rate}")
    lines += _failures(failures)
    return "\n".join(lines)


def _failures(failures: list[Result], groups: int = 10, ids: int = 8) -> list[str]:
    """Failures grouped by their reason: one reason (a missing API key, say) is said once."""
    by_reason: dict[str, list[str]] = {}
    for result in failures:
        by_reason.setdefault(why(result), []).append(result["id"])
    lines = []
    for reason, which in sorted(by_reason.items(), key=lambda item: -len(item[1]))[:groups]:
        more = f" and {len(which) - ids} more" if len(which) > ids else ""
        lines.append(f"  {len(which)} failed: {reason}")
        lines.append(f"    {', '.join(which[:ids])}{more}")
    if len(by_reason) > groups:
        lines.append(f"  ... and {len(by_reason) - groups} other reasons (see results.jsonl)")
    return lines


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{seconds:.1f}s"
