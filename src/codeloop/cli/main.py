"""`codeloop` command line: parse flags, then hand over to the frontend that fits.

Only argparse is imported up front; everything heavier loads once we know what to run, so
`codeloop --help` and a headless run both start fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from codeloop import __version__

OUTPUT_FORMATS = ("text", "json", "stream-json")
PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions")

DESCRIPTION = """\
codeloop: a coding agent for the terminal.

Headless use (scripts, CI):
  codeloop -p "fix the failing test"            answer printed on stdout
  git diff | codeloop -p "review this diff"     prompt (or extra input) on stdin
  codeloop -p "..." --output-format json        one JSON result object
  codeloop -p "..." --output-format stream-json one JSON object per line, as it happens

Models (--model, or CODELOOP_MODEL):
  anthropic:NAME  Anthropic Messages API      needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)
  openai:NAME     any OpenAI-compatible server needs OPENAI_API_KEY, or OPENAI_BASE_URL for a
                  local server (vLLM, llama.cpp, Ollama, LM Studio)
  A bare name picks the provider by its prefix: claude-* is Anthropic, gpt-* and o* are OpenAI.
"""

EPILOG = """\
Permissions: in headless runs the default mode lets read-only tools (Read, Grep, Glob,
read-only Bash) run and denies the rest, telling the model why; allow more with
--allowedTools "Bash Edit" or --permission-mode acceptEdits|bypassPermissions.

Exit status: 0 on success, 1 on an error (one line on stderr), 2 on a usage error.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
    parser.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        default="text",
        help="text (default), json, or stream-json",
    )
    parser.add_argument("--model", help="model to use, e.g. anthropic:claude-sonnet-4-5")
    parser.add_argument("--max-turns", type=_positive_int, help="stop after this many model turns")
    parser.add_argument(
        "--permission-mode", choices=PERMISSION_MODES, default="default", help="permission mode"
    )
    parser.add_argument(
        "--allowedTools",
        "--allowed-tools",
        dest="allowed_tools",
        action="append",
        default=[],
        metavar="TOOLS",
        help='tools allowed without asking, e.g. "Bash Edit" (repeatable)',
    )
    parser.add_argument(
        "--disallowedTools",
        "--disallowed-tools",
        dest="disallowed_tools",
        action="append",
        default=[],
        metavar="TOOLS",
        help="tools never allowed (repeatable)",
    )
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
        "--verbose", action="store_true", help="show tool calls and retries on stderr"
    )
    parser.add_argument("--version", action="version", version=f"codeloop {__version__}")
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.prompt is None:
        print(
            "codeloop: the interactive terminal UI is not built yet; run headless with "
            '-p "your prompt" (see codeloop --help).',
            file=sys.stderr,
        )
        return 2
    from codeloop.cli.headless import run_headless

    return run_headless(args)


if __name__ == "__main__":
    sys.exit(main())
