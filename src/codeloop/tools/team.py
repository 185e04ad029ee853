"""TeamCreate and SendMessage: Claude Code's agent team tools (offered only with
CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS). The lead creates its team, spawns teammates with the
Agent tool (`name` + `team_name`, teammates.py), and everyone talks through the mailboxes
(team_mail.py): a message to an idle teammate wakes it; the lead's arrive as its next prompt.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

from codeloop.teams.team_mail import LEAD
from codeloop.tools.base import Tool, ToolContext, ToolResult
from codeloop.tools.input import Arg, ToolInput


class TeamCreateInput(ToolInput):
    team_name: Annotated[str, Arg("A name for the new team.", min_length=1)]
    description: Annotated[str, Arg("What the team is for.")] = ""


class SendMessageInput(ToolInput):
    to: Annotated[str, Arg(f'The recipient: a teammate\'s name, "{LEAD}", or "*" for all.')]
    message: Annotated[str, Arg("The message.", min_length=1)]
    summary: Annotated[str, Arg("A 5-10 word summary of the message.")] = ""


class TeamCreateTool(Tool[TeamCreateInput]):
    name: ClassVar[str] = "TeamCreate"
    description: ClassVar[str] = (
        "Create an agent team that you lead. Then spawn teammates with the Agent tool (name "
        "and team_name): each works in the background in its own context, shares the task "
        "list (TaskCreate, TaskList, TaskUpdate) and talks with SendMessage. Use a team for "
        "parallel work whose parts need to talk; for a focused job whose result alone "
        "matters, a plain Agent call is cheaper."
    )
    input_model = TeamCreateInput

    def is_read_only(self, args: TeamCreateInput) -> bool:
        return True  # it changes the agents' own coordination, nothing in the workspace

    async def call(self, args: TeamCreateInput, ctx: ToolContext) -> ToolResult:
        roster = ctx.workspace.roster
        if ctx.workspace.member is not None:
            return ToolResult.error("Only the team lead creates the team.")
        if roster.team is not None:
            return ToolResult.error(f"You already lead the team {roster.team.name!r}.")
        team = roster.create(args.team_name, args.description)
        return ToolResult(
            f"Team {team.name!r} created; you are its lead ({LEAD}). Spawn teammates with the "
            f'Agent tool, giving each a name and team_name "{team.name}".'
        )


class SendMessageTool(Tool[SendMessageInput]):
    name: ClassVar[str] = "SendMessage"
    description: ClassVar[str] = (
        "Send a message to a member of your agent team: a teammate by name, the lead as "
        f'"{LEAD}", or everyone with "*". A teammate that is idle wakes up with it; the '
        "lead gets it as its next prompt. Your plain answers reach nobody: say what others "
        "need to know here."
    )
    input_model = SendMessageInput

    def is_read_only(self, args: SendMessageInput) -> bool:
        return True

    def is_concurrency_safe(self, args: SendMessageInput) -> bool:
        return True

    async def call(self, args: SendMessageInput, ctx: ToolContext) -> ToolResult:
        roster = ctx.workspace.roster
        team = roster.team
        if team is None:
            return ToolResult.error("There is no team yet: the lead creates it with TeamCreate.")
        member = ctx.workspace.member
        sender = member.name if member is not None else LEAD
        if args.to != "*" and args.to not in team.inboxes:
            known = ", ".join(team.inboxes)
            return ToolResult.error(f"No member {args.to!r} in team {team.name}: {known}")
        if args.to == sender:
            return ToolResult.error("That is you: send it to someone else.")
        names = await roster.post(sender, args.to, args.message, args.summary)
        if not names:
            return ToolResult("No one else is in the team yet.")
        return ToolResult(f"Message sent to {', '.join(names)}")
