"""The session flags of `codeloop` and `codeloop acp` (MCP servers, what the Agent SDKs pass)
and the session they ask for (`session_options`), below both faces; what the command line
shares with `codeloop batch` is in frontdoor.flags."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from codeloop.frontdoor.flags import positive_int

if TYPE_CHECKING:
    from codeloop.options import Options


def add_mcp_flags(parser: argparse.ArgumentParser) -> None:
    """--mcp-config and --strict-mcp-config."""
    parser.add_argument(
        "--mcp-config",
        dest="mcp_config",
        action="append",
        default=[],
        metavar="FILE_OR_JSON",
        help='MCP servers for this run: a file or JSON with {"mcpServers": {...}} (repeatable)',
    )
    parser.add_argument(
        "--strict-mcp-config",
        action="store_true",
        help="start only the --mcp-config servers, none from the configuration files",
    )


def session_options(args: argparse.Namespace, *, interactive: bool = False) -> Options:
    """The session the flags ask for, the same for `-p` and the interactive UI. `--resume`
    without an id is the latest session headless; the UI offers a picker instead."""
    from pathlib import Path

    from codeloop.options import Options

    refuse_unsupported(args)
    return Options(
        model=args.model,
        effort=args.effort,
        compact_profile=args.compact_profile,
        thinking="adaptive" if args.thinking == "enabled" else args.thinking,
        betas=[b.strip() for b in (args.betas or "").split(",") if b.strip()],
        cwd=Path.cwd(),
        add_dirs=args.add_dirs,
        permission_mode=(
            "bypassPermissions" if args.dangerously_skip_permissions else args.permission_mode
        ),
        setting_sources=setting_sources(args.setting_sources),
        agents=args.agents,
        plugin_dirs=args.plugin_dirs,
        agent=args.agent,
        allowed_tools=args.allowed_tools,
        disallowed_tools=args.disallowed_tools,
        system_prompt=(
            _text_of(args.system_prompt_file, "--system-prompt-file")
            if args.system_prompt_file
            else args.system_prompt
        ),
        append_system_prompt=_appended(args),
        max_turns=args.max_turns,
        settings=args.settings,
        sandbox=args.sandbox,
        max_budget_usd=args.max_budget_usd,
        fallback_model=args.fallback_model,
        token_budget=args.token_budget,
        task_budget=task_budget(args.task_budget),
        record=args.record,
        replay=args.replay,
        session_id=args.session_id,
        continue_conversation=args.continue_conversation or (args.resume == "" and not interactive),
        resume=args.resume or None,
        fork_session=args.fork_session,
        mcp_config=args.mcp_config,
        strict_mcp_config=args.strict_mcp_config,
        env=(
            {**os.environ, "MAX_THINKING_TOKENS": str(args.max_thinking_tokens)}
            if args.max_thinking_tokens
            else None
        ),
    )


def task_budget(raw: str | None) -> int | None:
    """--task-budget N: a positive whole number of tokens (exit 1 otherwise, as Claude Code)."""
    from codeloop.errors import ConfigError

    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ConfigError(f"--task-budget {raw!r}: must be a positive integer")
    return value


def _appended(args: argparse.Namespace) -> str | None:
    parts = [args.append_system_prompt or ""]
    if args.append_system_prompt_file:
        parts.append(_text_of(args.append_system_prompt_file, "--append-system-prompt-file"))
    return "\n\n".join(p for p in parts if p) or None


def _text_of(path: str, flag: str) -> str:
    from pathlib import Path

    from codeloop.errors import UsageError

    try:
        return Path(path).expanduser().read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot read it ({exc.strerror})") from None


def setting_sources(raw: str | None) -> list[str] | None:
    """`--setting-sources=user,project` (empty: none of the files)."""
    from codeloop.errors import UsageError

    if raw is None:
        return None
    names = [part.strip() for part in raw.split(",") if part.strip()]
    unknown = [n for n in names if n not in ("user", "project", "local")]
    if unknown:
        raise UsageError(f"--setting-sources: {', '.join(unknown)}: use user, project, local")
    return names


def add_sdk_flags(parser: argparse.ArgumentParser) -> None:
    """What the Agent SDKs pass (and Claude Code's streaming input mode): stdin carries the
    prompts and the control protocol (cli/sdk_protocol/)."""
    parser.add_argument(
        "--input-format",
        choices=("text", "stream-json"),
        default="text",
        help="stream-json: read prompts and control requests as JSON lines on stdin, for the "
        "Claude Agent SDKs (needs --output-format stream-json)",
    )
    parser.add_argument(
        "--include-partial-messages",
        action="store_true",
        help="stream-json: also each model stream's events as they arrive (stream_event lines)",
    )
    parser.add_argument(
        "--replay-user-messages",
        action="store_true",
        help="stream-json input: echo each prompt read from stdin as a user line",
    )
    parser.add_argument(
        "--permission-prompt-tool",
        metavar="NAME",
        help="who answers permission prompts: stdio (the SDK driving codeloop, through "
        "can_use_tool requests)",
    )
    parser.add_argument(
        "--json-schema",
        metavar="SCHEMA",
        help="make the final answer JSON valid for this JSON Schema (the result's "
        "structured_output)",
    )
    parser.add_argument(
        "--tools",
        metavar="TOOLS",
        help='the built-in tools offered: "default" (all), "" (none) or a list, e.g. "Read,Grep"',
    )
    parser.add_argument(
        "--system-prompt-file", metavar="FILE", help="replace the system prompt with FILE's text"
    )
    parser.add_argument(
        "--append-system-prompt-file", metavar="FILE", help="add FILE's text to the system prompt"
    )
    parser.add_argument(
        "--task-budget",
        metavar="TOKENS",
        help="tokens the whole task may take, told to the model in every request (Anthropic's "
        "task budget; refused for other providers)",
    )
    parser.add_argument(
        "--max-thinking-tokens",
        type=positive_int,
        metavar="TOKENS",
        help="thinking budget (as MAX_THINKING_TOKENS)",
    )
    parser.add_argument(
        "--thinking",
        choices=("adaptive", "enabled", "disabled"),
        help="adaptive (or enabled): the model thinks as much as it sees fit; disabled: it "
        "never thinks, whatever --effort, the settings or the prompt ask",
    )
    parser.add_argument(
        "--betas",
        metavar="BETAS",
        help="Anthropic beta features every request asks for, comma-separated (the "
        "anthropic-beta header; refused for other providers)",
    )
    # Claude Code flags the Agent SDKs pass when asked to, which codeloop refuses by name
    # rather than run without (hidden: they do nothing here but say so).
    for flag in UNSUPPORTED_SDK_FLAGS:
        parser.add_argument(flag, dest=_dest(flag), help=argparse.SUPPRESS)
    for flag in UNSUPPORTED_SDK_SWITCHES:
        parser.add_argument(flag, dest=_dest(flag), action="store_true", help=argparse.SUPPRESS)


# Taking a value / a switch, with what to do instead.
UNSUPPORTED_SDK_FLAGS = {
    "--thinking-display": "thinking is shown as the model sends it",
    "--resume-session-at": "resume the whole session, then `codeloop rewind` it",
    "--resume-drops-turn": "resume the whole session, then `codeloop rewind` it",
}
UNSUPPORTED_SDK_SWITCHES = {
    "--include-hook-events": "hooks' output is in the transcript, not streamed",
    "--session-mirror": "the transcript is in codeloop's own store (`codeloop sessions`)",
}


def _dest(flag: str) -> str:
    return "unsupported_" + flag.lstrip("-").replace("-", "_")


def refuse_unsupported(args: argparse.Namespace) -> None:
    """A Claude Code flag codeloop cannot honour ends the run, saying so (never ignored)."""
    from codeloop.errors import UsageError

    for flag, instead in (UNSUPPORTED_SDK_FLAGS | UNSUPPORTED_SDK_SWITCHES).items():
        if getattr(args, _dest(flag), None) not in (None, False):
            raise UsageError(f"{flag} is not supported by codeloop: {instead}")
