"""Agent (formerly Task): hand a self-contained job to a sub-agent, get back its final answer.

The sub-agent is a fresh loop with its own history (only the prompt), tools (but Agent),
permissions and turn limit; only its last message comes back, so a long search or a noisy
investigation costs the main conversation a few lines. Several calls in one answer run side
by side: the call itself changes nothing, and what its agent does goes through the same
checks, checkpoint and session-wide write lock as any other call. The session provides the
spawner (subagents.py).
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from codeloop.tools.base import AgentCall, Tool, ToolContext, ToolResult
from codeloop.tools.input import Arg, ToolInput


class AgentInput(ToolInput):
    description: Annotated[str, Arg("A short (3-5 word) description of the task.")]
    prompt: Annotated[
        str,
        Arg(
            "The task for the sub-agent, complete in itself: it sees nothing of this "
            "conversation. Say exactly what it should find or do and what to report back."
        ),
    ]
    subagent_type: Annotated[
        str, Arg("The type of agent to run (see the list in the tool's description).")
    ] = "general-purpose"
    model: Annotated[
        Literal["sonnet", "opus", "haiku"] | None,
        Arg("A model for this agent (default: the agent's own, else this session's)."),
    ] = None
    # Claude Code's background agents: accepted so a call that sets it false still works.
    run_in_background: Annotated[bool, Arg(hidden=True)] = False
    # Agent teams (tools/team.py shows them in the schema when teams are on): spawn a
    # teammate of that name in that team.
    name: Annotated[str | None, Arg(hidden=True)] = None
    team_name: Annotated[str | None, Arg(hidden=True)] = None


class AgentTool(Tool[AgentInput]):
    name: ClassVar[str] = "Agent"
    description: ClassVar[str] = (
        "Launch a sub-agent to carry out a multi-step task on its own, such as searching a "
        "large codebase for something, or investigating a question that needs many reads.\n"
        "- The sub-agent has the same tools (except Agent) and permissions, and starts with "
        "nothing but your prompt: include every detail it needs.\n"
        "- Only its final answer comes back to you; the user does not see it, so report what "
        "matters.\n"
        "- Independent jobs run at the same time when you start several agents in one "
        "message.\n"
        "- Use it for open-ended searches; for a known file or symbol, Read or Grep directly."
    )
    input_model = AgentInput
    delegates: ClassVar[bool] = True

    def is_read_only(self, args: AgentInput) -> bool:
        """Needs no approval itself: every tool the sub-agent uses is checked as it runs."""
        return True

    def is_concurrency_safe(self, args: AgentInput) -> bool:
        # Agents run side by side; their writers take the session's write lock one at a time.
        return True

    async def call(self, args: AgentInput, ctx: ToolContext) -> ToolResult:
        if ctx.spawn_agent is None:
            return ToolResult.error(
                "Sub-agents are not available here (a sub-agent cannot start one)."
            )
        if args.run_in_background and not args.team_name:
            return ToolResult.error(
                "Background agents are not supported: call Agent again without "
                "run_in_background; agents started in one message already run side by side."
            )
        call = AgentCall(
            args.description,
            args.prompt,
            args.subagent_type,
            args.model,
            args.name,
            args.team_name,
        )
        return await ctx.spawn_agent(call, ctx)
