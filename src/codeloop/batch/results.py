"""DIR/results.jsonl and DIR/predictions.jsonl: one line per finished task, on disk at once.

Each line is flushed and synced as its task ends, so a batch killed at any moment keeps every
result it had; the next run reads them back (a torn last line is dropped) and skips those
tasks. predictions.jsonl is SWE-bench's prediction format: instance_id, model_name_or_path,
model_patch.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

RESULTS = "results.jsonl"
PREDICTIONS = "predictions.jsonl"

Result = dict[str, Any]


def prediction(result: Result) -> dict[str, str]:
    return {
        "instance_id": result["id"],
        "model_name_or_path": result.get("model") or "codeloop",
        "model_patch": result.get("diff") or "",
    }


class ResultsFile:
    """The batch's output folder: the results so far, and appending new ones."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.path = out / RESULTS
        self.predictions_path = out / PREDICTIONS
        self.finished: dict[str, Result] = {}

    def open(self, *, retry_failed: bool = False) -> None:
        """Read what earlier runs finished (failures left out when they are to run again),
        and rewrite both files from that: whole lines only, one per task."""
        self.out.mkdir(parents=True, exist_ok=True)
        self.finished = {
            task_id: result
            for task_id, result in _read(self.path).items()
            if not (retry_failed and result.get("status") != "completed")
        }
        _write_lines(self.path, self.finished.values())
        _write_lines(self.predictions_path, map(prediction, self.finished.values()))

    def add(self, result: Result) -> None:
        self.finished[result["id"]] = result
        _append(self.path, result)
        _append(self.predictions_path, prediction(result))


def _read(path: Path) -> dict[str, Result]:
    """The results in `path` by id (the last line wins); lines that do not parse — a run
    killed mid-write — are left out."""
    found: dict[str, Result] = {}
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return found
    for line in text.splitlines():
        try:
            result = json.loads(line)
        except ValueError:
            continue
        if isinstance(result, dict) and isinstance(result.get("id"), str):
            found[result["id"]] = result
    return found


def _line(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False) + "\n"


def _append(path: Path, obj: Any) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(_line(obj))
        handle.flush()
        os.fsync(handle.fileno())


def _write_lines(path: Path, objs: Iterable[Any]) -> None:
    """Replace `path` whole (a temporary file renamed over it): never half-written."""
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.writelines(_line(obj) for obj in objs)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
