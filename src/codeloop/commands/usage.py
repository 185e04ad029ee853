"""/usage: where the running session's tokens and money went — the same report as
`codeloop usage` (issue 25), read from this session's transcript."""

from __future__ import annotations

import asyncio
import shutil

from codeloop.commands import Command, CommandContext, CommandError, CommandUsageError, Submit

DEFAULT_VIEWS = ("model", "tool")


async def _usage(ctx: CommandContext, args: str) -> Submit | None:
    from codeloop.usage.ledger import read_ledger
    from codeloop.usage.report import build_report
    from codeloop.usage.views import VIEWS, usage_text

    views = args.split() or list(DEFAULT_VIEWS)
    wrong = [v for v in views if v not in VIEWS]
    if wrong:
        raise CommandUsageError(f"/usage [{'|'.join(VIEWS)} ...], not {' '.join(wrong)}")
    transcript = ctx.session.transcript
    if transcript is None:
        raise CommandError("this session keeps no transcript to count from")
    transcript.sync()
    try:
        ledger = await asyncio.to_thread(read_ledger, transcript.path)
    except OSError as exc:
        raise CommandError(f"cannot read {transcript.path}: {exc.strerror}") from None
    if not ledger.requests:
        ctx.ui.show("No model requests in this session yet.")
        return None
    width = max(40, shutil.get_terminal_size((100, 24)).columns - 6)
    ctx.ui.show(usage_text(build_report([ledger]), views, width))
    return None


COMMAND = Command(
    "usage",
    "where this session's tokens and cost went (by model, tool, turn, sub-agent, file)",
    _usage,
    "[turn|tool|subagent|model|file ...]",
)
