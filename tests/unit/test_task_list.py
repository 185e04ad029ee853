"""The task list store: ids never given twice, dependencies both ways, the file read back."""

from __future__ import annotations

import json
from pathlib import Path

from codeloop.teams.task_list import Task, TaskList


def test_ids_are_never_reused_and_the_file_is_read_back(tmp_path: Path) -> None:
    path = tmp_path / "task-list.json"
    tasks = TaskList(path)
    for subject in ("a", "b", "c"):
        tasks.add(Task(tasks.reserve_id(), subject, ""))
    assert tasks.block("1", "2") and tasks.block("3", "2")
    assert not tasks.block("1", "9") and not tasks.block("1", "1")
    assert tasks.delete("3")
    blocked = tasks.get("2")
    assert blocked is not None and blocked.blocked_by == ["1"]

    again = TaskList(path)
    assert [t.subject for t in again.tasks()] == ["a", "b"]
    assert again.reserve_id() == "4"  # 3 was deleted, its number stays used
    second = again.get("#2")
    assert second is not None and again.open_blockers(second) == ["1"]
    first = again.get("1")
    assert first is not None
    first.status = "completed"
    assert again.open_blockers(second) == []


def test_a_damaged_file_starts_an_empty_list(tmp_path: Path) -> None:
    path = tmp_path / "task-list.json"
    path.write_text("{not json")
    tasks = TaskList(path)
    assert tasks.tasks() == []
    tasks.add(Task(tasks.reserve_id(), "fresh", ""))
    assert json.loads(path.read_text())["tasks"][0]["subject"] == "fresh"
