"""/add-dir PATH: another working directory for the rest of the session (workdirs.py), as
Claude Code's command; DirectoryAdded hooks run once it is added."""

from __future__ import annotations

from codeloop.commands import Command, CommandContext, CommandError, Submit


async def _add_dir(ctx: CommandContext, args: str) -> Submit | None:
    from codeloop.workdirs import DirectoryError, add_directory

    try:
        added = await add_directory(ctx.session, args, "slash_command")
    except DirectoryError as exc:
        raise CommandError(str(exc)) from None
    lines = [f"Added {added.path} as a working directory for this session."]
    lines += [f"  {error}" for error in added.hook_errors]
    ctx.ui.show("\n".join(lines))
    return None


COMMAND = Command(
    "add-dir", "add a working directory for the rest of this session", _add_dir, "<path>"
)
