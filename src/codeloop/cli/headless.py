"""`codeloop -p`: one prompt, no questions asked, output for people (text) or programs (json):
build the session, run the prompt, hand every event to the format's renderer (render/)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from codeloop.cli.render import renderer_for
from codeloop.errors import UsageError
from codeloop.events import (
    LoopEnd,
)


def run_headless(args: argparse.Namespace) -> int:
    """Errors the user can fix (errors.py) propagate to `main`, which reports them."""
    started = time.monotonic()
    if getattr(args, "init_only", False):
        return asyncio.run(_run(args, "", started))
    prompt = _read_prompt(" ".join([args.prompt, *args.words]), sys.stdin)
    return asyncio.run(_run(args, prompt, started))


def _read_prompt(given: str, stdin: TextIO) -> str:
    """The prompt: the words after -p (`-p --continue go on` puts them after the flags), then
    whatever is piped in."""
    piped = "" if stdin is None or stdin.isatty() else _read_text(stdin)
    prompt = "\n\n".join(part for part in (given.strip(), piped.strip()) if part)
    if not prompt:
        raise UsageError('no prompt given: use -p "your prompt" or pipe it on stdin')
    return prompt


def _read_text(stdin: TextIO) -> str:
    """Piped input as text, whatever its encoding: bytes that are not UTF-8 (a Latin-1 file in
    a diff) become U+FFFD rather than an error."""
    buffer = getattr(stdin, "buffer", None)
    if buffer is None:
        return stdin.read()
    data: bytes = buffer.read()
    return data.decode("utf-8", errors="replace")


async def _run(args: argparse.Namespace, prompt: str, started: float) -> int:
    from codeloop.options import Options, build_session

    options = Options(
        model=args.model,
        effort=args.effort,
        cwd=Path.cwd(),
        add_dirs=args.add_dirs,
        permission_mode=(
            "bypassPermissions" if args.dangerously_skip_permissions else args.permission_mode
        ),
        setting_sources=_sources(args.setting_sources),
        agents=args.agents,
        plugin_dirs=args.plugin_dirs,
        agent=args.agent,
        allowed_tools=args.allowed_tools,
        disallowed_tools=args.disallowed_tools,
        system_prompt=args.system_prompt,
        append_system_prompt=args.append_system_prompt,
        max_turns=args.max_turns,
        settings=args.settings,
        sandbox=args.sandbox,
        max_budget_usd=args.max_budget_usd,
        fallback_model=args.fallback_model,
        token_budget=args.token_budget,
        record=args.record,
        replay=args.replay,
        session_id=args.session_id,
        # In a headless run, --resume without an id means the latest session.
        continue_conversation=args.continue_conversation or args.resume == "",
        resume=args.resume or None,
        fork_session=args.fork_session,
        mcp_config=args.mcp_config,
        strict_mcp_config=args.strict_mcp_config,
    )
    session = build_session(options)

    from codeloop.models.local import DEFAULT_MODEL, DEMO_NOTICE

    if session.config.model == DEFAULT_MODEL:
        print(DEMO_NOTICE, file=sys.stderr)
    verbose = args.verbose or sys.stderr.isatty()
    out = renderer_for(args.output_format, session, verbose=verbose)
    _install_interrupt(session)
    end: LoopEnd | None = None
    try:
        for trigger in _setup_triggers(args):
            async for event in session.setup(trigger):
                out.event(event)
        if args.init_only:
            async for event in session.start():
                out.event(event)
            return 0
        if not await session.start_servers():  # the init line lists them as they came up
            print("codeloop: interrupted", file=sys.stderr)
            return 130
        prompt = await _expand_command(prompt, session)
        out.start()
        async for event in session.submit(prompt):
            out.event(event)
            if isinstance(event, LoopEnd):
                end = event
    finally:
        await session.aclose()
    assert end is not None
    return out.finish(end, time.monotonic() - started)


async def _expand_command(prompt: str, session: Any) -> str:
    """A prompt that is an MCP prompt's slash command runs that prompt."""
    from codeloop.mcp.prompts import PromptError, expand_command, is_command

    if not is_command(prompt):
        return prompt
    if session.mcp is None:
        raise UsageError(f"{prompt.split()[0]}: no MCP server is configured")
    try:
        expanded = await expand_command(prompt, session.mcp)
    except PromptError as exc:
        raise UsageError(str(exc)) from None
    return expanded or prompt


def _sources(raw: str | None) -> list[str] | None:
    """`--setting-sources=user,project` (empty: none of the files)."""
    if raw is None:
        return None
    names = [part.strip() for part in raw.split(",") if part.strip()]
    unknown = [n for n in names if n not in ("user", "project", "local")]
    if unknown:
        raise UsageError(f"--setting-sources: {', '.join(unknown)}: use user, project, local")
    return names


def _setup_triggers(args: argparse.Namespace) -> list[str]:
    triggers = ["init"] if args.init or args.init_only else []
    return [*triggers, "maintenance"] if args.maintenance else triggers


def _install_interrupt(session: Any) -> None:
    """First Ctrl+C stops the run cleanly (every tool call gets a result); a second exits now."""
    loop = asyncio.get_running_loop()
    pressed = False

    def on_sigint() -> None:
        nonlocal pressed
        if pressed:
            if session.transcript is not None:
                with contextlib.suppress(OSError):
                    session.transcript.sync()
            os._exit(130)
        pressed = True
        session.interrupt()

    # Not the main thread, or a platform without signal handlers: Ctrl+C keeps its default.
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, on_sigint)
