"""The built-in slash commands. Each acts on the session's public surface and shows its output
through the frontend, so the terminal UI and headless `-p "/name"` run the same code."""

from __future__ import annotations

import os
import time
from pathlib import Path

from codeloop.commands import (
    Command,
    CommandContext,
    CommandError,
    CommandUsageError,
    Submit,
    reports,
)
from codeloop.context.auto_memory import INDEX


async def _help(ctx: CommandContext, args: str) -> Submit | None:
    lines = ["Commands:"]
    for command in ctx.registry.commands(ctx.session):
        hint = f" {command.argument_hint}" if command.argument_hint else ""
        where = "" if command.source == "built-in" else f" ({command.source})"
        lines.append(f"  /{command.name}{hint} — {command.description}{where}")
    lines += [
        "",
        "Keys: Enter sends · \\ then Enter, Alt+Enter or Ctrl+J for a new line · Esc stops the "
        "turn · Ctrl+C clears the input (twice: exit) · Ctrl+D exits · Shift+Tab cycles the "
        "permission mode · Ctrl+O shows the last folded output · @path attaches a file",
    ]
    ctx.ui.show("\n".join(lines))
    return None


async def _clear(ctx: CommandContext, args: str) -> Submit | None:
    await ctx.ui.reopen({})
    ctx.ui.show("Started a new session (the previous one is saved: /resume).")
    return None


async def _compact(ctx: CommandContext, args: str) -> Submit | None:
    if not ctx.session.messages:
        raise CommandError("nothing to compact yet")
    result = await ctx.session.compact(args or None)
    boundary = result.boundary
    if boundary is None:
        raise CommandError(f"the summary failed, nothing was dropped: {result.failure}")
    ctx.ui.show(
        f"Compacted the conversation: {boundary.tokens_before:,} → "
        f"{boundary.tokens_after:,} tokens."
    )
    return None


async def _context(ctx: CommandContext, args: str) -> Submit | None:
    ctx.ui.show(reports.context_report(ctx.session))
    return None


async def _cost(ctx: CommandContext, args: str) -> Submit | None:
    ctx.ui.show(reports.cost_report(ctx.session))
    return None


async def _model(ctx: CommandContext, args: str) -> Submit | None:
    """Switch the model: the same conversation goes on with it (the session is rebuilt
    for the model's window, prices and provider). The PreModelSwitch hooks may refuse it;
    the PostModelSwitch hooks' context goes with the next prompt."""
    from codeloop.model_switch import SwitchRefused, check_switch
    from codeloop.models.aliases import ALIASES, resolve_alias
    from codeloop.models.factory import split_spec

    current = ctx.session.config.model
    env = ctx.session.workspace.env if ctx.session.workspace.env is not None else os.environ
    if not args:
        choices = [(alias, resolve_alias(alias, env)) for alias in ALIASES]
        listed = [f"{alias} ({full})" for alias, full in choices]
        if not ctx.ui.interactive:
            ctx.ui.show(f"Model: {current}. Switch with /model NAME: " + ", ".join(listed))
            return None
        picked = await ctx.ui.choose(f"Model (now {current}); or /model NAME", listed)
        if picked is None:
            return None
        args = choices[picked][0]
    target = split_spec(resolve_alias(args, env), env)[1]

    async def confirm(question: str) -> bool:
        return await ctx.ui.choose(question, ["Yes, switch", "No"]) == 0

    try:
        for text in await check_switch(
            ctx.session.hooks, current, target, confirm if ctx.ui.interactive else None
        ):
            ctx.ui.show(text)
    except SwitchRefused as exc:
        raise CommandError(str(exc)) from None
    await ctx.ui.reopen({"model": args, "resume": ctx.session.session_id})
    ctx.ui.show(f"Model: {ctx.session.config.model} (was {current}).")
    await ctx.session.model_switched(current, ctx.ui.show)
    return None


async def _resume(ctx: CommandContext, args: str) -> Submit | None:
    from codeloop.store.session_store import SessionStore

    store = SessionStore(ctx.session.workspace.roots[0], ctx.session.workspace.env or os.environ)
    if args:
        target = store.find(args).stem
    else:
        others = [s for s in store.summaries() if s.session_id != ctx.session.session_id]
        if not others:
            raise CommandError("no other session in this folder to resume")
        if not ctx.ui.interactive:
            raise CommandUsageError(
                "give the session's id: /resume ID (codeloop sessions lists them)"
            )
        options = [
            f"{time.strftime('%m-%d %H:%M', time.localtime(s.last_active))}  "
            f"{s.turns:>3} turns  {' '.join(s.first_prompt.split())[:60] or '-'}"
            for s in others
        ]
        picked = await ctx.ui.choose("Resume which session?", options)
        if picked is None:
            return None
        target = others[picked].session_id
    await ctx.ui.reopen({"resume": target})
    count = len(ctx.session.messages)
    ctx.ui.show(f"Resumed session {target} ({count} messages).")
    return None


async def _permissions(ctx: CommandContext, args: str) -> Submit | None:
    policy = ctx.session.config.policy
    rules = [(kind, rule) for kind, listed in policy.rules().items() for rule in listed]
    if not rules:
        ctx.ui.show(f"Permission mode: {policy.mode}. No rules.")
        return None
    lines = [f"{kind:<5} {rule.text}  ({rule.source})" for kind, rule in rules]
    ctx.ui.show(f"Permission mode: {policy.mode}.\n" + "\n".join(lines))
    if args.split()[:1] == ["remove"] or (not args and ctx.ui.interactive):
        if not ctx.ui.interactive:
            raise CommandUsageError("removing a rule needs the interactive UI")
        picked = await ctx.ui.choose("Remove which rule? (Esc: none)", lines)
        if picked is not None:
            kind, rule = rules[picked]
            where = policy.remove_rule(kind, rule)
            ctx.ui.show(f"Removed {rule.text}" + (f" from {where}." if where else "."))
    return None


async def _memory(ctx: CommandContext, args: str) -> Submit | None:
    root = ctx.session.workspace.roots[0]
    home = Path.home()
    candidates = [root / "CLAUDE.md", root / "AGENTS.md", root / ".claude" / "CLAUDE.md"]
    project = next((p for p in candidates if p.is_file()), root / "AGENTS.md")
    files = [project, home / ".claude" / "CLAUDE.md"]
    labels = [f"project: {files[0]}", f"user: {files[1]}"]
    if (auto := ctx.session.memory_dir) is not None:
        files.append(auto / INDEX)
        labels.append(f"auto memory (the model's notes): {auto / INDEX}")
    if not ctx.ui.interactive:
        raise CommandError("/memory opens your editor: run it in the interactive UI")
    picked = await ctx.ui.choose("Edit which memory file?", labels)
    if picked is None:
        return None
    await ctx.ui.edit(files[picked])
    ctx.ui.show(f"Saved {files[picked]}; it applies from the next session (or /clear).")
    return None


INIT_PROMPT = """\
Please analyze this codebase and write a {name} file at the root of the repository: the \
instructions a coding agent working here needs.

Include:
1. The commands to build, lint and run the tests, and how to run a single test.
2. The high-level architecture: the big picture that takes reading several files to see.

Do not repeat what anyone can find in a minute, invent nothing, and list no generic practices. \
If there are Cursor rules (.cursor/rules/, .cursorrules), Copilot instructions \
(.github/copilot-instructions.md) or a README, include what matters from them. {existing}\
Start the file with:

# {name}

This file guides coding agents working in this repository."""


async def _init(ctx: CommandContext, args: str) -> Submit | None:
    root = ctx.session.workspace.roots[0]
    claude_style = (root / "CLAUDE.md").exists() or (root / ".claude").is_dir()
    name = "CLAUDE.md" if claude_style else "AGENTS.md"
    existing = (
        f"{name} exists already: improve it rather than starting again. "
        if (root / name).exists()
        else ""
    )
    return Submit(INIT_PROMPT.format(name=name, existing=existing))


async def _status(ctx: CommandContext, args: str) -> Submit | None:
    from codeloop._version import __version__

    session = ctx.session
    inventory = session.inventory
    memory = ", ".join(Path(f["path"]).name for f in inventory.get("memory_files", [])) or "none"
    lines = [
        f"codeloop {__version__}",
        f"Session:     {session.session_id}",
        f"Folder:      {session.workspace.roots[0]}",
        f"Model:       {session.config.model}",
        f"Permissions: {session.config.policy.mode}",
        f"Tools:       {', '.join(session.tools)}",
        f"Memory:      {memory}",
        f"Context:     {reports.context_line(session)}",
        f"Cost:        ${session.cost_usd:.4f}",
    ]
    if session.transcript is not None:
        lines.append(f"Transcript:  {session.transcript.path}")
    ctx.ui.show("\n".join(lines))
    return None


async def _exit(ctx: CommandContext, args: str) -> Submit | None:
    ctx.ui.exit()
    return None


COMMANDS = (
    Command("help", "list the commands and keys", _help),
    Command("clear", "start a new session (this one stays saved)", _clear),
    Command("compact", "summarise the conversation to free the window", _compact, "[instructions]"),
    Command("context", "what fills the context window", _context),
    Command("cost", "tokens and cost of this session", _cost),
    Command("model", "show or switch the model", _model, "[name]"),
    Command("resume", "continue an earlier session of this folder", _resume, "[id]"),
    Command("permissions", "list the permission rules, and remove one", _permissions, "[remove]"),
    Command(
        "memory",
        "edit a memory file (CLAUDE.md, AGENTS.md) in $EDITOR",
        _memory,
        interactive_only=True,
    ),
    Command("init", "write an AGENTS.md (or CLAUDE.md) for this project", _init),
    Command("status", "version, session, model, permissions, memory", _status),
    Command("exit", "leave codeloop (the session is saved)", _exit),
)
