"""`codeloop -p`: one prompt, no questions asked, output for people (text) or programs (json).

The json and stream-json shapes are Claude Code's, so scripts and the Claude Agent SDK that
read Claude Code's output read ours unchanged.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from codeloop.cli.live import LiveText
from codeloop.errors import UsageError
from codeloop.events import (
    AssistantTurn,
    CompactBoundary,
    Event,
    LoopEnd,
    MediaRemoved,
    Notice,
    ResponseDiscarded,
    Retrying,
    TextDelta,
    ToolStarted,
    UserTurn,
)
from codeloop.models.catalog import cost_usd, model_info
from codeloop.types import Message, Usage, block_to_dict


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
    )
    session = build_session(options)

    from codeloop.models.local import DEFAULT_MODEL, DEMO_NOTICE

    if session.config.model == DEFAULT_MODEL:
        print(DEMO_NOTICE, file=sys.stderr)
    out = _Output(args.output_format, session, verbose=args.verbose or sys.stderr.isatty())
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
        out.init()
        async for event in session.submit(prompt):
            out.event(event)
            if isinstance(event, LoopEnd):
                end = event
    finally:
        await session.aclose()
    assert end is not None
    return out.result(end, time.monotonic() - started)


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


SUBTYPES = {
    "completed": "success",
    "max_turns": "error_max_turns",
    "max_budget": "error_max_budget_usd",
}


class _Output:
    def __init__(self, fmt: str, session: Any, *, verbose: bool) -> None:
        self.fmt = fmt
        self.session = session
        self.verbose = verbose
        # A person watching gets the text as it streams; a pipe gets only the final answer.
        self.live = (
            LiveText(sys.stdout, shares_screen=sys.stderr.isatty())
            if fmt == "text" and sys.stdout.isatty()
            else None
        )

    def _line(self, obj: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
        sys.stdout.flush()

    def init(self) -> None:
        if self.fmt != "stream-json":
            return
        self._line(
            {
                "type": "system",
                "subtype": "init",
                "cwd": str(self.session.workspace.cwd),
                "session_id": self.session.session_id,
                "tools": list(self.session.tools),
                "mcp_servers": [],
                "model": self.session.config.model,
                "permissionMode": self.session.config.policy.mode,
                "slash_commands": [],
                "apiKeySource": "none",
                "output_style": "default",
                # What was loaded: agents, memory files, skills, plugins (options.py).
                **self.session.inventory,
            }
        )

    def _stream_text(self, live: LiveText, event: Event) -> None:
        if isinstance(event, TextDelta):
            live.write(event.text)
        elif isinstance(event, ResponseDiscarded):
            live.discard(event.reason)  # never left on screen looking like the answer
        elif isinstance(event, AssistantTurn | ToolStarted | Notice | Retrying | MediaRemoved):
            # the turn ended, or a line is about to go to stderr: end the streamed line first
            live.end_line()
            if isinstance(event, AssistantTurn):
                live.settle()

    def _err(self, line: str) -> None:
        print(line, file=sys.stderr)
        if self.live is not None:
            self.live.other_line(line)

    def event(self, event: Event) -> None:
        if self.live is not None:
            self._stream_text(self.live, event)
        if self.fmt == "stream-json":
            if isinstance(event, AssistantTurn):
                self._line(self._assistant_line(event))
            elif isinstance(event, UserTurn):
                self._line(self._user_line(event.message))
            elif isinstance(event, Retrying):
                self._line(self._retry_line(event))
            elif isinstance(event, CompactBoundary):
                self._line(
                    {
                        "type": "system",
                        "subtype": "compact_boundary",
                        "session_id": self.session.session_id,
                        "compact_metadata": {
                            "trigger": event.trigger,
                            "pre_tokens": event.tokens_before,
                            "post_tokens": event.tokens_after,
                        },
                    }
                )
        if isinstance(event, CompactBoundary):
            self._err(
                f"codeloop: compacted the conversation ({event.trigger}): "
                f"{event.tokens_before:,} → {event.tokens_after:,} tokens"
            )
        if isinstance(event, MediaRemoved):
            self._err(
                f"codeloop: warning: removed {event.removed} image(s) the API refused "
                f"({event.reason}); sending again without them"
            )
        elif isinstance(event, Retrying):
            self._err(
                f"codeloop: {event.error}; retrying in {event.wait_seconds:.1f} s "
                f"(attempt {event.attempt + 1} of {event.max_attempts})"
            )
        elif isinstance(event, Notice) and event.level != "info":
            self._err(f"codeloop: {event.level}: {event.text}")
        elif self.verbose and self.fmt == "text" and (line := _progress(event)):
            self._err(line)

    def _retry_line(self, retry: Retrying) -> dict[str, Any]:
        return {
            "type": "system",
            "subtype": "api_retry",
            "attempt": retry.attempt,
            "max_retries": retry.max_attempts,
            "retry_delay_ms": round(retry.wait_seconds * 1000),
            "error_status": retry.status,
            "error": retry.error,
            "session_id": self.session.session_id,
        }

    def _assistant_line(self, turn: AssistantTurn) -> dict[str, Any]:
        return {
            "type": "assistant",
            "message": {
                "id": turn.message_id,
                "type": "message",
                "role": "assistant",
                "model": turn.model,
                "content": [block_to_dict(b) for b in turn.message.content],
                "stop_reason": turn.stop_reason,
                "stop_sequence": None,
                "usage": turn.usage.to_dict(),
            },
            "parent_tool_use_id": None,
            "session_id": self.session.session_id,
            "uuid": turn.message.uuid,
        }

    def _user_line(self, message: Message) -> dict[str, Any]:
        return {
            "type": "user",
            "message": {"role": "user", "content": [block_to_dict(b) for b in message.content]},
            "parent_tool_use_id": None,
            "session_id": self.session.session_id,
            "uuid": message.uuid,
        }

    def result(self, end: LoopEnd, elapsed: float) -> int:
        subtype = SUBTYPES.get(end.reason, "error_during_execution")
        is_error = subtype != "success"
        text = end.final_text
        if self.fmt == "text":
            if text and self.live is None:
                sys.stdout.write(text.rstrip("\n") + "\n")
                sys.stdout.flush()
        else:
            self._line(
                {
                    "type": "result",
                    "subtype": subtype,
                    "is_error": is_error,
                    "duration_ms": round(elapsed * 1000),
                    "duration_api_ms": round(self.session.api_duration_ms),
                    "num_turns": end.turns,
                    "result": text if not is_error or text else (end.error or ""),
                    "session_id": self.session.session_id,
                    "total_cost_usd": round(self.session.cost_usd, 6),
                    "usage": self.session.usage.to_dict(),
                    "modelUsage": {
                        model: _model_usage(model, usage)
                        for model, usage in self.session.usage_by_model.items()
                    },
                    "terminal_reason": end.reason,
                    "permission_denials": [
                        {
                            "tool_name": d.tool_name,
                            "tool_use_id": d.tool_use_id,
                            "tool_input": d.tool_input,
                        }
                        for d in self.session.config.policy.denials
                    ],
                }
            )
        if is_error:
            print(f"codeloop: {_end_message(end)}", file=sys.stderr)
            return 130 if end.reason.startswith("aborted") else 1
        return 0


def _model_usage(model: str, usage: Usage) -> dict[str, Any]:
    """One model's totals, in the shape of Claude Code's result (modelUsage)."""
    info = model_info(model)
    return {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "cacheReadInputTokens": usage.cache_read_input_tokens,
        "cacheCreationInputTokens": usage.cache_creation_input_tokens,
        "webSearchRequests": 0,
        "costUSD": cost_usd(model, usage),
        "contextWindow": info.context_window,
        "maxOutputTokens": info.max_output_tokens,
    }


def _end_message(end: LoopEnd) -> str:
    if end.reason == "max_turns":
        return end.error or "reached the turn limit"
    if end.reason.startswith("aborted"):
        return "interrupted"
    return end.error or end.reason.replace("_", " ")


def _progress(event: Event) -> str | None:
    if isinstance(event, ToolStarted):
        args = json.dumps(event.tool_use.input, ensure_ascii=False)
        return f"⏺ {event.tool_use.name}({args[:120]})"
    if isinstance(event, Notice):
        return f"  {event.level}: {event.text}"
    return None
