"""TaskCreate, TaskGet, TaskUpdate and TaskList: Claude Code's task list tools, names and input
shapes as its own, over the session's list (teams/task_list.py), which sub-agents and teammates
share.

They replace TodoWrite where Claude Code offers them (CLAUDE_CODE_ENABLE_TASKS, agent teams;
tools/task_tools.py decides). A TaskCreated hook runs before a task is added and a
TaskCompleted hook before one is marked completed: exit 2 (or `decision: block`) leaves the
list as it was and its reason goes back to the model as the call's error.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from codeloop.teams.task_list import Task, TaskList
from codeloop.tools.base import Tool, ToolContext, ToolResult
from codeloop.tools.input import Arg, ToolInput


class TaskCreateInput(ToolInput):
    subject: Annotated[str, Arg("A brief title, in the imperative: Fix the login bug.")]
    description: Annotated[str, Arg("What needs to be done, and how to tell it is done.")]
    activeForm: Annotated[  # Claude Code's field name
        str | None,
        Arg("The task as it is being done, shown while it is in progress: Fixing the login bug."),
    ] = None
    metadata: Annotated[dict[str, Any] | None, Arg("Arbitrary data to keep with the task.")] = None


class TaskIdInput(ToolInput):
    taskId: Annotated[str, Arg("The task's id (from TaskCreate or TaskList).")]


class TaskUpdateInput(ToolInput):
    taskId: Annotated[str, Arg("The id of the task to update.")]
    subject: Annotated[str | None, Arg("A new subject.")] = None
    description: Annotated[str | None, Arg("A new description.")] = None
    activeForm: Annotated[str | None, Arg("A new in-progress form.")] = None
    status: Annotated[
        Literal["pending", "in_progress", "completed", "deleted"] | None,
        Arg("in_progress when you start it, completed when it is fully done, deleted to drop it."),
    ] = None
    owner: Annotated[str | None, Arg("Who works on it (an agent's name).")] = None
    addBlocks: Annotated[
        list[str] | None, Arg("Tasks that cannot start until this one is completed.")
    ] = None
    addBlockedBy: Annotated[
        list[str] | None, Arg("Tasks that must be completed before this one can start.")
    ] = None
    metadata: Annotated[
        dict[str, Any] | None, Arg("Keys to merge into the task's metadata (null removes one).")
    ] = None


class TaskListInput(ToolInput):
    pass


CREATE = """\
Add a task to the session's task list, to plan and track multi-step work (three steps or \
more, or when the user asks for several things); not for a single trivial step.

- The task starts pending with no owner. Give a subject in the imperative and a \
description saying what done means.
- Then TaskUpdate it to in_progress when you start and completed as soon as it is fully \
done; TaskList shows the whole list. Sub-agents and teammates see the same list."""

GET = "Read one task in full: subject, description, status, owner and dependencies."

UPDATE = """\
Change a task of the task list: its status (pending, in_progress, completed; deleted removes \
it), subject, description, activeForm, owner, metadata, or its dependencies (addBlocks, \
addBlockedBy).

- Mark a task in_progress before you start it and completed only when it is fully done \
(tests pass, nothing left unfinished); a task still blocked by an open one cannot start.
- Read the task first (TaskGet) when someone else may have changed it."""

LIST = """\
List every task: id, status, subject, owner and the open tasks it waits for. Use it to find \
the next task to take (pending, no owner, not blocked) and to see overall progress."""


class _TaskTool(Tool[Any]):
    def is_read_only(self, args: Any) -> bool:
        return True  # it changes the agents' own list, nothing in the workspace

    def is_concurrency_safe(self, args: Any) -> bool:
        return True  # each change is one step on the event loop (ids are taken at once)


class TaskCreateTool(_TaskTool):
    name: ClassVar[str] = "TaskCreate"
    description: ClassVar[str] = CREATE
    input_model = TaskCreateInput

    async def call(self, args: TaskCreateInput, ctx: ToolContext) -> ToolResult:
        tasks = ctx.workspace.tasks
        task = Task(
            tasks.reserve_id(),
            args.subject,
            args.description,
            active_form=args.activeForm,
            metadata=dict(args.metadata or {}),
        )
        if refused := await _refused(ctx, "TaskCreated", task):
            return ToolResult.error(f"Task #{task.id} was not created. {refused}")
        tasks.add(task)
        return ToolResult(f"Task #{task.id} created successfully: {task.subject}")


class TaskGetTool(_TaskTool):
    name: ClassVar[str] = "TaskGet"
    description: ClassVar[str] = GET
    input_model = TaskIdInput

    async def call(self, args: TaskIdInput, ctx: ToolContext) -> ToolResult:
        tasks = ctx.workspace.tasks
        task = tasks.get(args.taskId)
        if task is None:
            return ToolResult.error(_not_found(args.taskId))
        lines = [
            f"Task #{task.id}: {task.subject}",
            f"Status: {task.status}",
            f"Description: {task.description}",
        ]
        if task.owner:
            lines.append(f"Owner: {task.owner}")
        if task.blocked_by:
            lines.append(f"Blocked by: {_ids(task.blocked_by)}")
        if task.blocks:
            lines.append(f"Blocks: {_ids(task.blocks)}")
        return ToolResult("\n".join(lines))


class TaskUpdateTool(_TaskTool):
    name: ClassVar[str] = "TaskUpdate"
    description: ClassVar[str] = UPDATE
    input_model = TaskUpdateInput

    async def call(self, args: TaskUpdateInput, ctx: ToolContext) -> ToolResult:
        tasks = ctx.workspace.tasks
        task = tasks.get(args.taskId)
        if task is None:
            return ToolResult.error(_not_found(args.taskId))
        if args.status == "deleted":
            tasks.delete(task.id)
            return ToolResult(f"Task #{task.id} deleted")
        changed: list[str] = []
        if args.status is not None and args.status != task.status:
            if problem := await _status_problem(ctx, tasks, task, args.status):
                return ToolResult.error(problem)
            task.status = args.status
            changed.append("status")
        member = ctx.workspace.member
        if args.status == "in_progress" and args.owner is None and not task.owner and member:
            task.owner = member.name  # a teammate taking a task owns it, as in Claude Code
            changed.append("owner")
        for name, value in (
            ("subject", args.subject),
            ("description", args.description),
            ("activeForm", args.activeForm),
            ("owner", args.owner),
        ):
            if value is not None and value != getattr(task, _ATTRS[name]):
                setattr(task, _ATTRS[name], value)
                changed.append(name)
        if args.metadata is not None:
            merged = {**task.metadata, **args.metadata}
            task.metadata = {k: v for k, v in merged.items() if v is not None}
            changed.append("metadata")
        changed += _dependencies(tasks, task, args)
        tasks.save()
        if not changed:
            return ToolResult(f"Task #{task.id} is unchanged")
        return ToolResult(f"Updated task #{task.id} {', '.join(changed)}")


class TaskListTool(_TaskTool):
    name: ClassVar[str] = "TaskList"
    description: ClassVar[str] = LIST
    input_model = TaskListInput

    async def call(self, args: TaskListInput, ctx: ToolContext) -> ToolResult:
        tasks = ctx.workspace.tasks
        lines = []
        for task in tasks.tasks():
            owner = f" ({task.owner})" if task.owner else ""
            open_ = tasks.open_blockers(task)
            blocked = f" [blocked by {_ids(open_)}]" if open_ else ""
            lines.append(f"#{task.id} [{task.status}] {task.subject}{owner}{blocked}")
        return ToolResult("\n".join(lines) or "No tasks found")


_ATTRS = {
    "subject": "subject",
    "description": "description",
    "activeForm": "active_form",
    "owner": "owner",
}


async def _status_problem(ctx: ToolContext, tasks: TaskList, task: Task, status: str) -> str:
    """Why the task cannot take `status` ("" when it can): open blockers, or a TaskCompleted
    hook refusing the completion."""
    if status == "in_progress" and (open_ := tasks.open_blockers(task)):
        return f"Task #{task.id} is blocked by {_ids(open_)}: complete those first."
    if status == "completed" and (refused := await _refused(ctx, "TaskCompleted", task)):
        return f"Task #{task.id} was not marked completed. {refused}"
    return ""


async def _refused(ctx: ToolContext, event: str, task: Task) -> str:
    """Run the event's hooks for `task`; their reason when one blocks ("" otherwise)."""
    if ctx.run_hook is None:
        return ""
    member = ctx.workspace.member
    payload = {
        "task_id": task.id,
        "task_subject": task.subject,
        "task_description": task.description,
        **(member.hook_fields() if member is not None else {}),
    }
    outcome = await ctx.run_hook(event, payload)
    return outcome.for_model() if outcome.blocked else ""


def _dependencies(tasks: TaskList, task: Task, args: TaskUpdateInput) -> list[str]:
    changed = []
    if any([tasks.block(task.id, other) for other in args.addBlocks or ()]):
        changed.append("blocks")
    if any([tasks.block(other, task.id) for other in args.addBlockedBy or ()]):
        changed.append("blockedBy")
    return changed


def _ids(ids: list[str]) -> str:
    return ", ".join(f"#{i}" for i in ids)


def _not_found(task_id: str) -> str:
    return f"Task #{task_id.lstrip('#')} not found (TaskList shows the tasks there are)."
