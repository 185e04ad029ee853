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
from typing import TYPE_CHECKING, Any, TextIO

from codeloop.cli.render import renderer_for
from codeloop.errors import UsageError
from codeloop.events import Event, LoopEnd
from codeloop.types import Message, TextBlock, Usage

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from codeloop.commands.headless import Expanded
    from codeloop.frontdoor import Conversation
    from codeloop.structured_output import StructuredOutput


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
    from codeloop.frontdoor import Conversation
    from codeloop.frontdoor.session_flags import session_options

    structured = schema_output(args)
    partial = args.output_format == "stream-json" and args.include_partial_messages
    conversation = await Conversation.open(session_options(args), stream_events=partial)
    session = conversation.session
    try:
        fit_session(conversation, args, structured)
    except BaseException:
        await conversation.close()
        raise

    from codeloop.models.factory import DEFAULT_MODELS

    if session.config.model == DEFAULT_MODELS["local"]:
        from codeloop.models.local import DEMO_NOTICE  # its module costs ~20 ms of start-up

        print(DEMO_NOTICE, file=sys.stderr)
    # A person at the terminal sees the tool calls of a text answer; json ones on --verbose.
    verbose = args.verbose or (sys.stderr.isatty() and args.output_format == "text")
    out = renderer_for(
        args.output_format,
        session,
        verbose=verbose,
        structured=structured,
    )
    _install_interrupt(conversation)
    end: LoopEnd | None = None
    try:
        for trigger in _setup_triggers(args):
            async for event in session.setup(trigger):
                out.event(event)
        if args.init_only:
            async for event in session.start():
                out.event(event)
            return 0
        if not await conversation.start_servers():  # the init line lists them as they came up
            print("codeloop: interrupted", file=sys.stderr)
            return 130
        if args.output_format == "stream-json":  # the init line lists every slash command
            conversation.list_commands()
        out.start()
        # The command registry loads for a `/` prompt only.
        expanded = await _expand(session, prompt) if prompt.startswith("/") else None
        if expanded is not None and expanded.submit is None:  # a built-in command answered
            reply = Message("assistant", (TextBlock(expanded.output),))
            end = LoopEnd("completed", 0, Usage(), (*session.messages, reply))
        else:
            submit = expanded.submit if expanded is not None else None
            events = (
                conversation.prompt(prompt)
                if submit is None
                else conversation.prompt(
                    submit.prompt, attachments=submit.attachments, model=submit.model
                )
            )
            end = await _rendered(events, out)
            # An agent team's lead: what its teammates send is its next prompt, until none
            # is working and nothing waits (teammates.py).
            while (sent := await conversation.teammate_prompt()) is not None:
                end = await _rendered(conversation.prompt(sent), out) or end
    finally:
        await conversation.close()
    assert end is not None
    return out.finish(end, time.monotonic() - started)


async def _rendered(events: AsyncIterator[Event], out: Any) -> LoopEnd | None:
    """Every event of one prompt to the renderer; how the prompt's run ended."""
    end = None
    async for event in events:
        out.event(event)
        if isinstance(event, LoopEnd):
            end = event
    return end


async def _expand(session: Any, prompt: str) -> Expanded:
    """A `/command` prompt goes through the slash-command registry (a failing command raises
    its CommandError, reported by `main` in one line)."""
    from codeloop.commands.headless import expand_command

    expanded = await expand_command(session, prompt)
    if expanded.notice:
        print(f"codeloop: {expanded.notice}", file=sys.stderr)
    return expanded


def schema_output(args: argparse.Namespace) -> StructuredOutput | None:
    """--json-schema, checked before anything starts."""
    if args.json_schema is None:
        return None
    from codeloop.structured_output import StructuredOutput, parse_schema

    return StructuredOutput(parse_schema(args.json_schema))


def fit_session(
    conversation: Conversation, args: argparse.Namespace, structured: StructuredOutput | None
) -> None:
    """What the flags change on a built session: the tools offered (--tools), the structured
    answer's tool (--json-schema)."""
    if args.tools is not None:
        conversation.keep_tools(args.tools)
    if structured is not None:
        structured.attach(conversation.session)


def _setup_triggers(args: argparse.Namespace) -> list[str]:
    triggers = ["init"] if args.init or args.init_only else []
    return [*triggers, "maintenance"] if args.maintenance else triggers


def _install_interrupt(conversation: Conversation) -> None:
    """First Ctrl+C stops the run cleanly (every tool call gets a result); a second exits now."""
    loop = asyncio.get_running_loop()
    pressed = False

    def on_sigint() -> None:
        nonlocal pressed
        if pressed:
            transcript = conversation.session.transcript
            if transcript is not None:
                with contextlib.suppress(OSError):
                    transcript.close()  # synced now: the exit would not wait
            os._exit(130)
        pressed = True
        conversation.interrupt()

    # Not the main thread, or a platform without signal handlers: Ctrl+C keeps its default.
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, on_sigint)
