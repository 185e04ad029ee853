"""Task: hand a self-contained job to a sub-agent and get back its final answer.

The sub-agent is a fresh loop with its own history (only the prompt), the same model, tools
(but Task) and permissions; only its last message comes back, so a long search or a noisy
investigation costs the main conversation a few lines. The session provides the spawner.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from codeloop.tools.base import Tool, ToolContext, ToolResult
from codeloop.tools.input import ToolInput


class TaskInput(ToolInput):
    description: str = Field(description="A short (3-5 word) description of the task.")
    prompt: str = Field(
        description="The task for the sub-agent, complete in itself: it sees nothing of this "
        "conversation. Say exactly what it should find or do and what to report back."
    )
    subagent_type: str = Field(
        default="general-purpose",
        description="The type of agent to run (see the list in the tool's description).",
    )


class TaskTool(Tool[TaskInput]):
    name: ClassVar[str] = "Task"
    description: ClassVar[str] = (
        "Launch a sub-agent to carry out a multi-step task on its own, such as searching a "
        "large codebase for something, or investigating a question that needs many reads.\n"
        "- The sub-agent has the same tools (except Task) and permissions, and starts with "
        "nothing but your prompt: include every detail it needs.\n"
        "- Only its final answer comes back to you; the user does not see it, so report what "
        "matters.\n"
        "- Use it for open-ended searches; for a known file or symbol, Read or Grep directly."
    )
    input_model = TaskInput

    def is_read_only(self, args: TaskInput) -> bool:
        """Needs no approval itself: every tool the sub-agent uses is checked as it runs."""
        return True

    def is_concurrency_safe(self, args: TaskInput) -> bool:
        # Two sub-agents may each run writers: one at a time, so their edits cannot interleave.
        return False

    async def call(self, args: TaskInput, ctx: ToolContext) -> ToolResult:
        if ctx.spawn_agent is None:
            return ToolResult.error("Sub-agents are not available in this session.")
        return await ctx.spawn_agent(
            args.description, args.prompt, args.subagent_type, ctx.tool_use_id
        )
