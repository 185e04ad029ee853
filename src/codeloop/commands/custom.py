"""Custom commands and user-invocable skills as slash commands, in Claude Code's format.

The files are the ones extensions/ loaded for the session (.claude/commands/*.md,
~/.claude/commands, the .codeloop/ equivalents, skills, plugins). Running one renders its body
the way the Skill tool does ($ARGUMENTS, $1…$9, named arguments), runs its !`command` lines
through the permission policy (its `allowed-tools` count as allowed for them and for the
prompt), attaches the files its `@path`s name, and asks the model with its `model` if set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from codeloop.commands import Command, CommandContext, CommandError, Handler, Submit
from codeloop.commands.mentions import attach

if TYPE_CHECKING:
    from codeloop.extensions.skills import Skill
    from codeloop.session import Session


def provide(session: Session) -> list[Command]:
    extensions = session.extensions
    if extensions is None:
        return []
    commands = []
    for skill in extensions.skills.by_name.values():
        if not skill.user_invocable:
            continue
        commands.append(
            Command(
                skill.command_name,
                skill.description.splitlines()[0][:120] if skill.description else "",
                _runner(skill),
                skill.argument_hint or "",
                source=skill.plugin or skill.level,
            )
        )
    return commands


def _runner(skill: Skill) -> Handler:
    async def run(ctx: CommandContext, args: str) -> Submit | None:
        return await expand(ctx.session, skill, args)

    return run


async def expand(session: Session, skill: Skill, args: str) -> Submit:
    """The prompt a command file makes with these arguments."""
    from codeloop.extensions.skills import substitute
    from codeloop.tools.base import ToolContext
    from codeloop.tools.skill import ShellFailed, inject_shell

    workspace = session.workspace
    text = substitute(skill, args, session_id=session.session_id, project_dir=workspace.roots[0])
    policy = session.config.policy
    source = f"/{skill.command_name}"
    if skill.allowed_tools:
        policy.grant(skill.allowed_tools, source)
    bash = session.tools.get("Bash")

    async def may_run(command: str) -> bool:
        if bash is None:
            return False
        decided = await policy.can_use_tool(
            bash, bash.parse({"command": command}), ToolContext(workspace)
        )
        return decided.allowed

    settings = session.settings
    disabled = settings is not None and settings.skill_shell_disabled
    try:
        text = await inject_shell(text, may_run, workspace, disabled=disabled)
    except ShellFailed as exc:
        policy.clear_grants()
        raise CommandError(str(exc)) from None
    attached = attach(text, workspace.cwd)
    if attached.notes:
        text = text.rstrip() + "\n\n" + "\n".join(f"({note})" for note in attached.notes)
    return Submit(text, attached.blocks, skill.model)
