"""/rewind: set the files, the conversation, or both back to a checkpoint (issue 21's
`Session.rewind`), in the words of `codeloop rewind` (checkpoints/wording.py). In the UI: a
picker of the checkpoints, newest first, then what to restore, after a dry run says how much;
Esc Esc on an empty input opens it. Headless: `-p "/rewind N [files|conversation|both]"`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from codeloop.commands import Command, CommandContext, CommandError, CommandUsageError, Submit

if TYPE_CHECKING:
    from codeloop.checkpoints.journal import Checkpoint

WHAT = {"both": (True, True), "files": (True, False), "conversation": (False, True)}
USAGE = "/rewind [N] [files|conversation|both] [force]"


async def _rewind(ctx: CommandContext, args: str) -> Submit | None:
    from codeloop.checkpoints.wording import report

    session = ctx.session
    if session.checkpoints is None:
        raise CommandError(
            "this session keeps no checkpoints (checkpoints.enabled is false, or "
            "CODELOOP_CHECKPOINTS=0)"
        )
    number, what, force = _parse(args)
    if number is None:
        if not ctx.ui.interactive:
            raise CommandUsageError("give the checkpoint: /rewind N (codeloop rewind lists them)")
        target = await _pick(ctx)
        if target is None:
            return None
        number = target.number
    if what is None and ctx.ui.interactive:
        chosen = await _ask_what(ctx, number)
        if chosen is None:
            return None
        what, force = chosen
    files, conversation = WHAT[what or "both"]
    done = await session.rewind(number, files=files, conversation=conversation, force=force)
    said = report(
        done,
        session.workspace.roots[0],
        dry_run=False,
        files=files,
        force=force,
        undo_hint="/rewind {n}",
        force_hint=f"/rewind {number} {what or 'both'} force",
    )
    ctx.ui.show("\n".join(line for kind, line in said.lines if kind == "out"))
    problems = [line for kind, line in said.lines if kind != "out"]
    if problems:
        raise CommandError(" ".join(problems))
    return None


def _parse(args: str) -> tuple[int | None, str | None, bool]:
    number: int | None = None
    what: str | None = None
    force = False
    for word in args.split():
        if word.isdigit() and int(word) > 0 and number is None:
            number = int(word)
        elif word in WHAT and what is None:
            what = word
        elif word == "force":
            force = True
        else:
            raise CommandUsageError(f"{USAGE}, not {word!r}")
    return number, what, force


async def _pick(ctx: CommandContext) -> Checkpoint | None:
    from codeloop.checkpoints.wording import changed_line, summary

    checkpoints = ctx.session.checkpoints
    assert checkpoints is not None
    await checkpoints.settle()
    newest = list(reversed(checkpoints.list()))
    if not newest:
        raise CommandError("nothing to rewind: no turn of this session has changed files yet")
    root = ctx.session.workspace.roots[0]
    options = []
    for cp in newest:
        changed = changed_line(checkpoints, cp, root)
        options.append(summary(cp).strip() + (f" · {changed}" if changed else ""))
    picked = await ctx.ui.choose("Rewind to before which change? (newest first)", options)
    return None if picked is None else newest[picked]


async def _ask_what(ctx: CommandContext, number: int) -> tuple[str, bool] | None:
    """What to restore, once a dry run has said how much changes. Your own edits that the
    rewind would overwrite are named, and overwritten only when such an option is picked."""
    from codeloop.checkpoints.wording import relative

    preview = await ctx.session.rewind(number, dry_run=True)
    plan = preview.files.plan
    root = ctx.session.workspace.roots[0]
    title = f"Checkpoint {number}: {len(plan.to_apply(False))} path(s) to set back"
    if preview.messages is not None:
        title += f"; the conversation {preview.messages_before} → {len(preview.messages)} messages"
    overwrite = ""
    if plan.conflicts:
        names = ", ".join(relative(Path(c.where), root) for c in plan.conflicts)
        overwrite = f", overwriting your own edits to {names}"
    choices = [
        ("both", f"Restore the code and the conversation{overwrite}"),
        ("conversation", "Restore the conversation only"),
        ("files", f"Restore the code only{overwrite}"),
    ]
    picked = await ctx.ui.choose(title, [label for _, label in choices])
    if picked is None:
        return None
    what = choices[picked][0]
    return what, bool(overwrite) and what != "conversation"


COMMAND = Command(
    "rewind",
    "set the files and/or the conversation back to a checkpoint",
    _rewind,
    "[N] [files|conversation|both]",
)
