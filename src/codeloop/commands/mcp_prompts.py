"""MCP servers' prompts as slash commands (`/mcp__server__prompt args`): what the server
returns for them is the prompt sent (mcp/prompts.py fills the arguments and asks it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codeloop.commands import Command, CommandContext, CommandUsageError, Handler, Submit

if TYPE_CHECKING:
    from codeloop.session import Session


def provide(session: Session) -> list[Command]:
    manager = session.mcp
    if manager is None:
        return []
    from codeloop.mcp.prompts import prompt_commands

    return [
        Command(c.name, c.description, _runner(c.name), c.argument_hint, source="mcp")
        for c in prompt_commands(manager)
    ]


def _runner(name: str) -> Handler:
    async def run(ctx: CommandContext, args: str) -> Submit | None:
        from codeloop.mcp.prompts import PromptError, expand_command

        manager = ctx.session.mcp
        if manager is None:
            raise CommandUsageError("no MCP server is configured")
        try:
            text = await expand_command(f"/{name} {args}".rstrip(), manager)
        except PromptError as exc:
            raise CommandUsageError(str(exc)) from None
        return Submit(text or f"/{name} {args}".rstrip())

    return run
