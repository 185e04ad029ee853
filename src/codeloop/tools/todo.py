"""TodoWrite: the model's task list, in Claude Code's schema.

Each call sends the whole list; the session keeps it (Workspace.todos), its transcript records
it (a `todos` line: `--continue` brings it back), frontends see it (a TodosChanged event), and
compaction carries it into the summary, so a long task keeps its plan.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from codeloop.events import TodosChanged
from codeloop.tools.base import Tool, ToolContext, ToolResult
from codeloop.tools.input import Arg, ToolInput, wire_input


class TodoItem(ToolInput):
    content: Annotated[str, Arg("The task, in the imperative: Run the tests.", min_length=1)]
    status: Literal["pending", "in_progress", "completed"]
    activeForm: Annotated[  # Claude Code's field name
        str, Arg("The task as it is being done: Running the tests.", min_length=1)
    ]


class TodoWriteInput(ToolInput):
    todos: Annotated[list[TodoItem], Arg("The whole updated task list.")]


DESCRIPTION = """\
Create and update a task list for the current work, to track progress and show the user \
what you are doing.

- Use it for tasks of three steps or more, or when the user gives several things to do; not \
for a single trivial step.
- Each call sends the whole list. Mark a task in_progress before you start it (one at a time) \
and completed as soon as it is done; add tasks you discover, remove ones that no longer \
matter.
- Only mark a task completed when it is fully done (tests pass, nothing left unfinished)."""


class TodoWriteTool(Tool[TodoWriteInput]):
    name: ClassVar[str] = "TodoWrite"
    description: ClassVar[str] = DESCRIPTION
    input_model = TodoWriteInput

    def is_read_only(self, args: TodoWriteInput) -> bool:
        return True  # it changes the agent's own list, nothing in the workspace

    async def call(self, args: TodoWriteInput, ctx: ToolContext) -> ToolResult:
        todos = [wire_input(item) for item in args.todos]
        ctx.workspace.todos = todos
        ctx.emit(TodosChanged(tuple(todos)))
        doing = [t["activeForm"] for t in todos if t["status"] == "in_progress"]
        done = sum(t["status"] == "completed" for t in todos)
        state = f"{done} of {len(todos)} done" + (f"; now: {doing[0]}" if doing else "")
        return ToolResult(
            f"The task list is updated ({state}). Keep it current as you work, and go on with "
            "the task in progress."
        )
