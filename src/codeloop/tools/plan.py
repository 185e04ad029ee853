"""ExitPlanMode: present the plan and, once it is accepted, leave plan mode.

In plan mode only read-only tools run (permissions/policy.py). The way out is this tool: its
call is what the user approves (the permission dialog shows the plan; the SDK's permission
callback answers it; in `-p` an allow rule `ExitPlanMode` accepts plans). A refusal keeps the
session in plan mode, and the model reads the user's feedback in the denial.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, ClassVar

from codeloop.tools.base import Tool, ToolContext, ToolResult
from codeloop.tools.input import Arg, ToolInput
from codeloop.tools.services import ToolServices

# The read-only part holds for a session that cannot leave plan mode (a review offers no
# ExitPlanMode): it gets that part alone.
PLAN_MODE_READ_ONLY = (
    "Plan mode is active. Research and plan only: read files and run commands that change "
    "nothing; do not edit files, write files or run anything that changes the system (those "
    "calls are refused)."
)
PLAN_MODE_REMINDER = (
    f"{PLAN_MODE_READ_ONLY} When the plan is ready, call ExitPlanMode with it; once the user "
    "accepts it you can carry it out. If the user refuses, revise the plan with their feedback."
)


class ExitPlanModeInput(ToolInput):
    plan: Annotated[
        str,
        Arg(
            "The plan you propose, in markdown: concise, step by step, naming the "
            "files you will change."
        ),
    ]


DESCRIPTION = """\
In plan mode, present your plan to the user for approval and leave plan mode once it is \
accepted.

- Call it only when the task needs code changes and the plan is complete; for research or \
questions, just answer.
- If the plan is refused, the result holds the user's feedback: revise and call again."""


class ExitPlanModeTool(Tool[ExitPlanModeInput]):
    name: ClassVar[str] = "ExitPlanMode"
    description: ClassVar[str] = DESCRIPTION
    input_model = ExitPlanModeInput

    def __init__(self, leave: Callable[[], bool] | None = None) -> None:
        """`leave` ends plan mode and says whether the session was in it (the session's
        policy); None only to declare the spec."""
        self.leave = leave

    @classmethod
    def from_services(cls, services: ToolServices) -> ExitPlanModeTool:
        return cls(services.leave_plan_mode)

    def is_read_only(self, args: ExitPlanModeInput) -> bool:
        return True  # the policy asks for approval of it by name, in plan mode

    async def call(self, args: ExitPlanModeInput, ctx: ToolContext) -> ToolResult:
        if self.leave is None or not self.leave():
            return ToolResult.error(
                "The session is not in plan mode: there is nothing to approve; go on with the task."
            )
        return ToolResult(
            "The user accepted your plan and the session left plan mode. Carry it out now, "
            "starting with its first step."
        )
