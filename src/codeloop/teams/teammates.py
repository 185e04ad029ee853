"""Agent teams' teammates, in process (Claude Code's experimental agent teams, on with
CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS): the session is the team lead, each teammate a
sub-agent loop (subagents.py: the same preparation and driver as an Agent call) that runs in
the background with its own history, shares the task list and the mailboxes (team_mail.py).

A teammate works a turn, then is about to go idle: TeammateIdle hooks fire (teammate_name,
team_name); exit 2 or `decision: block` keeps it working with the hook's reason as its next
message (at most MAX_STOP_HOOK_CONTINUATIONS times in a row), `continue: false` stops it.
Going idle, it tells the lead (an idle notification) and waits for a message; a message
wakes it with its history intact. It stops with the session.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from codeloop.hooks.hook_runner import MAX_STOP_HOOK_CONTINUATIONS
from codeloop.subagents import AgentHost, AgentRunner, PreparedAgent, drive, prepare_agent
from codeloop.teams.task_list import Member
from codeloop.teams.team_mail import LEAD, Roster
from codeloop.tools.base import AgentCall, ToolContext, ToolResult
from codeloop.types import Message

if TYPE_CHECKING:
    from codeloop.extensions.agents import AgentDefinition

_TEAMMATE_NOTE = (
    "You are {name}, a teammate in the agent team {team}; the team lead is {lead}. You share "
    "the task list (TaskList, TaskGet, TaskUpdate: claim a task by marking it in_progress, "
    "complete it when it is done) and talk with SendMessage: what you only write in your "
    "answer, nobody reads. When you end your turn you go idle until a message arrives.\n\n"
)


async def spawn_teammate(
    runner: AgentRunner,
    session: AgentHost,
    agent: AgentDefinition,
    call: AgentCall,
    ctx: ToolContext,
) -> ToolResult:
    """Start `call.name` in `call.team_name` in the background; the call returns at once."""
    roster = session.workspace.roster
    team = roster.team
    if ctx.workspace.member is not None:
        return ToolResult.error("A teammate cannot spawn teammates; ask the team lead.")
    if team is None or team.name != call.team_name:
        return ToolResult.error(
            f"No team {call.team_name!r}: create it with TeamCreate first"
            + (f" (this session leads {team.name!r})." if team else ".")
        )
    name = call.name or ""
    if not name or name == LEAD or name in team.inboxes:
        return ToolResult.error(f"Pick another name: {name!r} is taken or empty.")
    member = Member(name, team.name)
    workspace = session.workspace.fork()
    workspace.member = member
    own = ToolContext(workspace, tool_use_id=ctx.tool_use_id)
    note = _TEAMMATE_NOTE.format(name=name, team=team.name, lead=LEAD)
    prepared = await prepare_agent(
        session,
        agent,
        replace(call, prompt=note + call.prompt),
        own,
        skills=runner.skills,
        bypass_disabled=runner.bypass_disabled,
        workspace=workspace,
    )
    if isinstance(prepared, ToolResult):
        return prepared
    roster.join(name, _work(session, prepared, own, member, roster))
    return ToolResult(
        f"Spawned teammate {name} in team {team.name}. It works in the background and shares "
        f"the task list; what it sends you (and a note when it goes idle) arrives as your next "
        f"prompt. SendMessage to {name!r} reaches it."
    )


async def _work(
    session: AgentHost, agent: PreparedAgent, ctx: ToolContext, member: Member, roster: Roster
) -> None:
    """Turn after turn until the session ends, the hooks stop it, or its loop fails."""
    hooks, params, kept_on = agent.deps.hooks, agent.params, 0
    while True:
        await roster.set_working(member.name, True)
        end = await drive(session, replace(agent, params=params), ctx)
        if end.reason != "completed":
            why = end.error or end.reason.replace("_", " ")
            await roster.post(member.name, LEAD, f"{member.name} stopped: {why}")
            break
        history = end.messages
        if hooks is not None:
            idle = await hooks.run("TeammateIdle", member.hook_fields())
            if idle.stop:
                why = idle.stop_reason or "a TeammateIdle hook stopped it"
                await roster.post(member.name, LEAD, f"{member.name} stopped: {why}")
                break
            if idle.blocked and kept_on < MAX_STOP_HOOK_CONTINUATIONS:
                kept_on += 1
                params = replace(params, messages=(*history, Message.user(idle.for_model())))
                continue
        kept_on = 0
        await roster.post(
            member.name, LEAD, f"{member.name} is idle. Its last message:\n{end.final_text}"
        )
        await roster.set_working(member.name, False)
        text = await roster.receive(member.name)
        if text is None:
            break
        params = replace(params, messages=(*history, Message.user(text)))
    await roster.set_working(member.name, False)
