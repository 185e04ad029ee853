"""The session's task list, as Claude Code's TaskCreate / TaskGet / TaskUpdate / TaskList keep
it: numbered tasks with a subject, a description, a status, an owner and the tasks each one
blocks or waits for.

One list per session, shared by its sub-agents and teammates (Workspace.fork hands the same
object on), written to the session's folder at every change, so a resumed session (same id)
finds it again and a compaction cannot lose it: it never lives in the history. Ids count up
from 1 and are never given twice, a deleted task's included (the file keeps the highest one).
A leaf: it knows nothing of hooks or tools (tools/task_tools.py runs the hooks around it).
"""

from __future__ import annotations

import contextlib
from dataclasses import field
from pathlib import Path
from typing import Any, Literal

from codeloop.system.jsonfile import read_json_object, write_json_atomic
from codeloop.system.valueclass import valueclass

Status = Literal["pending", "in_progress", "completed"]
STATUSES: tuple[Status, ...] = ("pending", "in_progress", "completed")


@valueclass(frozen=False)
class Task:
    id: str
    subject: str
    description: str
    status: Status = "pending"
    active_form: str | None = None
    owner: str | None = None
    blocks: list[str] = field(default_factory=list)
    blocked_by: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Claude Code's field names (its task files' shape)."""
        data: dict[str, Any] = {
            "id": self.id,
            "subject": self.subject,
            "description": self.description,
            "status": self.status,
            "blocks": list(self.blocks),
            "blockedBy": list(self.blocked_by),
        }
        if self.active_form is not None:
            data["activeForm"] = self.active_form
        if self.owner is not None:
            data["owner"] = self.owner
        if self.metadata:
            data["metadata"] = dict(self.metadata)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Task:
        status = data.get("status")
        return cls(
            str(data["id"]),
            str(data.get("subject", "")),
            str(data.get("description", "")),
            status if status in STATUSES else "pending",
            _optional(data.get("activeForm")),
            _optional(data.get("owner")),
            [str(i) for i in data.get("blocks", ())],
            [str(i) for i in data.get("blockedBy", ())],
            dict(data.get("metadata") or {}),
        )


class TaskList:
    """The tasks of one session; `path` None keeps them in memory only."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._tasks: dict[str, Task] | None = None
        self._highest = 0

    def reserve_id(self) -> str:
        """The next task's id, taken now (a TaskCreated hook sees it before the task exists;
        a blocked creation leaves the number used, as Claude Code's does)."""
        self._load()
        self._highest += 1
        return str(self._highest)

    def add(self, task: Task) -> None:
        self._all()[task.id] = task
        self.save()

    def get(self, task_id: str) -> Task | None:
        return self._all().get(task_id.lstrip("#"))

    def tasks(self) -> list[Task]:
        return sorted(self._all().values(), key=lambda t: _number(t.id))

    def delete(self, task_id: str) -> bool:
        tasks = self._all()
        if tasks.pop(task_id, None) is None:
            return False
        for task in tasks.values():
            task.blocks = [i for i in task.blocks if i != task_id]
            task.blocked_by = [i for i in task.blocked_by if i != task_id]
        self.save()
        return True

    def block(self, blocker: str, blocked: str) -> bool:
        """`blocker` must be completed before `blocked` can start."""
        first, second = self.get(blocker), self.get(blocked)
        if first is None or second is None or first is second:
            return False
        if second.id not in first.blocks:
            first.blocks.append(second.id)
        if first.id not in second.blocked_by:
            second.blocked_by.append(first.id)
        return True

    def open_blockers(self, task: Task) -> list[str]:
        """The tasks `task` still waits for (completed ones no longer block)."""
        tasks = self._all()
        return [i for i in task.blocked_by if i in tasks and tasks[i].status != "completed"]

    def save(self) -> None:
        """Written whole at every change; a disk that refuses costs persistence, never a run."""
        if self.path is None:
            return
        data = {"highWaterMark": self._highest, "tasks": [t.to_json() for t in self.tasks()]}
        with contextlib.suppress(OSError):
            write_json_atomic(self.path, data)

    def _all(self) -> dict[str, Task]:
        self._load()
        assert self._tasks is not None
        return self._tasks

    def _load(self) -> None:
        if self._tasks is not None:
            return
        self._tasks = {}
        if self.path is None:
            return
        try:
            data = read_json_object(self.path)
        except OSError:
            data = {}  # unreadable: start empty; the next change writes a good file
        for raw in data.get("tasks", ()):
            with contextlib.suppress(KeyError, TypeError, ValueError, AttributeError):
                task = Task.from_json(raw)
                self._tasks[task.id] = task
        mark = data.get("highWaterMark")
        numbers = [_number(i) for i in self._tasks]
        self._highest = max([mark if isinstance(mark, int) else 0, *numbers])


def _optional(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _number(task_id: str) -> int:
    return int(task_id) if task_id.isdigit() else 0


@valueclass
class Member:
    """An agent team's teammate: its name and its team's (what task hooks are told)."""

    name: str
    team: str

    def hook_fields(self) -> dict[str, str]:
        return {"teammate_name": self.name, "team_name": self.team}
