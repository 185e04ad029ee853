"""/review [BASE] and /security-review [BASE]: the changes from the merge base with BASE
(default: the default branch) to the working tree, uncommitted and new files included, go to
the model in the prompt, with what to look for and the findings' shape (review/findings.py).
The command runs git itself, so the model has the diff whatever the permission mode allows it
to run."""

from __future__ import annotations

import asyncio

from codeloop.commands import Command, CommandContext, CommandError, Submit


async def _submit(ctx: CommandContext, base: str, kind: str) -> Submit:
    from codeloop.review.changes import (
        Changes,
        ReviewError,
        collect,
        default_branch,
        merge_base,
        repository_root,
    )
    from codeloop.review.findings import review_prompt

    def changes() -> Changes:
        root = repository_root(ctx.session.workspace.roots[0])
        target = base or default_branch(root)
        return collect(root, merge_base(root, target, "HEAD"), None, base_label=target)

    try:
        found = await asyncio.to_thread(changes)
    except ReviewError as exc:
        raise CommandError(str(exc)) from None
    if found.empty:
        raise CommandError(f"nothing to review: no changes from {found.base_label}")
    return Submit(review_prompt(found, "security" if kind == "security" else "review", "text"))


async def _review(ctx: CommandContext, args: str) -> Submit | None:
    return await _submit(ctx, args.strip(), "review")


async def _security_review(ctx: CommandContext, args: str) -> Submit | None:
    return await _submit(ctx, args.strip(), "security")


COMMANDS = (
    Command(
        "review",
        "review the changes from BASE (default: the default branch) to the working tree",
        _review,
        "[base]",
    ),
    Command(
        "security-review",
        "a security review of the changes from the default branch (or BASE) to the working tree",
        _security_review,
        "[base]",
    ),
)
