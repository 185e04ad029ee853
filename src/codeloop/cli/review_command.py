"""`codeloop review [--base REF] [--head REF] [--format text|json] [--post github]`: a
read-only session reviews the changes from base to head and answers through the
StructuredOutput tool with `{"summary", "findings"}` (review/findings.py); the review is
printed (json: one object on stdout, progress on stderr) and, with `--post github`, posted on
the pull request of the GitHub Actions run (review/posting.py).

Read-only whatever the settings: the session runs in plan mode, which refuses every call that
is not read-only (a writing Bash, Write, Edit, an MCP tool that writes) before any allow rule,
hook or mode is consulted, and offers only the tools that read; nothing can leave plan mode
(ExitPlanMode is not offered, sub-agents neither)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from codeloop.errors import UsageError

if TYPE_CHECKING:
    from codeloop.review.actions import ActionsRun, PullRequest
    from codeloop.review.changes import Changes
    from codeloop.review.findings import Review

# What a review may use: reading and looking around. Everything else is not offered.
REVIEW_TOOLS = ("Read", "Grep", "Glob", "Bash", "LSP", "StructuredOutput")
# The session flags of `codeloop` that make no sense for a review: refused, not ignored.
NOT_FOR_REVIEW = {
    "prompt": "-p",
    "words": "a prompt",
    "output_format": "--output-format (use --format)",
    "input_format": "--input-format",
    "json_schema": "--json-schema (the findings have their schema)",
    "continue_conversation": "--continue",
    "resume": "--resume",
    "fork_session": "--fork-session",
    "worktree": "--worktree",
    "init_only": "--init-only",
    "include_partial_messages": "--include-partial-messages",
    "replay_user_messages": "--replay-user-messages",
    "permission_prompt_tool": "--permission-prompt-tool",
}
MODE_FLAGS = ("permission_mode", "dangerously_skip_permissions")

DESCRIPTION = """\
Review the changes from BASE to HEAD in a read-only session: the model gets the diff and
may read the repository; it writes nothing, whatever the permission settings. The review
is a summary and findings, each {path, line, severity (high|medium|low), title, body}.

  codeloop review                          HEAD against its merge base with the default
                                           branch (origin/HEAD, else main, else master)
  codeloop review --base v1.2 --format json    one JSON object on stdout
  codeloop review --post github            in GitHub Actions (pull_request): post the review

Every session flag of codeloop applies too (--model, --settings, --allowedTools,
--append-system-prompt, --mcp-config, --max-turns, --max-budget-usd ...); the model comes
from --model, CODELOOP_MODEL, ANTHROPIC_MODEL or the settings, as in every mode.

--post github needs GITHUB_TOKEN, GITHUB_REPOSITORY and GITHUB_EVENT_PATH (a pull_request
event; GITHUB_API_URL for GitHub Enterprise). It posts one review (event COMMENT, on the
event's head sha): findings on lines the pull request adds or changes as inline comments,
the others in its body. Run again on the same head, it updates that review instead of
posting another (or leaves it when nothing changed).

Exit status: 0 when the review completed (and was posted), 1 when it could not be done
(one line on stderr says why), 2 on a usage error."""


def review_parser() -> argparse.ArgumentParser:
    from codeloop.frontdoor.flags import Parser

    parser = Parser(
        prog="codeloop review",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--base",
        metavar="REF",
        help="compare with the merge base of REF and the head (default: the default branch; in "
        "a pull_request event, the pull request's base)",
    )
    parser.add_argument("--head", metavar="REF", default="HEAD", help="the change's head (HEAD)")
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="text (default) or json"
    )
    parser.add_argument(
        "--post",
        choices=("github",),
        help="github: post the review on the pull request of this GitHub Actions run",
    )
    return parser


def run_review(argv: list[str], session_parser: argparse.ArgumentParser) -> int:
    """`session_parser`: codeloop's own (cli.main's), for the session flags a review takes
    like every mode."""
    own, rest = review_parser().parse_known_args(argv)
    session_parser.prog = "codeloop review"
    args = session_parser.parse_args(rest)
    defaults = session_parser.parse_args([])
    for dest, flag in NOT_FOR_REVIEW.items():
        if getattr(args, dest) != getattr(defaults, dest):
            raise UsageError(f"{flag} does not apply to a review (see codeloop review --help)")
    if any(getattr(args, dest) != getattr(defaults, dest) for dest in MODE_FLAGS):
        print(
            "codeloop: note: a review is read-only: the permission mode flags do not apply",
            file=sys.stderr,
        )
    return asyncio.run(_review(own, args))


async def _review(own: argparse.Namespace, args: argparse.Namespace) -> int:
    from codeloop.review.actions import actions_run, pull_request_of, read_event

    run = actions_run(os.environ) if own.post == "github" else None
    pr = run.pull_request if run is not None else pull_request_of(read_event(os.environ))
    if run is not None and pr is None:
        raise UsageError(
            "--post github: the GitHub event is not a pull request's (GITHUB_EVENT_PATH "
            "holds no pull_request)"
        )
    changes = await asyncio.to_thread(_changes, Path.cwd(), own.base, own.head, pr)
    if changes.empty:
        from codeloop.review.findings import Review

        review = Review(f"Nothing to review: no changes from {changes.base_label}.", ())
    else:
        summary = changes.stat.strip().splitlines()[-1].strip()
        print(
            f"codeloop: reviewing {changes.base_label} ({changes.base[:12]})..{own.head}: "
            f"{summary}",
            file=sys.stderr,
        )
        review = await _run_review(args, changes)
    _print(review, own.format)
    if run is not None and pr is not None and changes.empty:
        print("codeloop: the pull request changes nothing: no review posted", file=sys.stderr)
    elif run is not None and pr is not None:
        await asyncio.to_thread(_post, run, pr, review, changes)
    return 0


def _changes(cwd: Path, base: str | None, head: str, pr: PullRequest | None) -> Changes:
    from codeloop.review.changes import (
        collect,
        commit_of,
        default_branch,
        merge_base,
        repository_root,
    )

    root = repository_root(cwd)
    if base is None and pr is not None:  # the pull request's base, fetched or not
        known = commit_of(root, pr.base_sha) or commit_of(root, f"origin/{pr.base_ref}")
        base = known or pr.base_sha
        label = f"the pull request's base ({pr.base_ref})"
    else:
        base = base or default_branch(root)
        label = base
    return collect(root, merge_base(root, base, head), head, base_label=label)


async def _run_review(args: argparse.Namespace, changes: Changes) -> Review:
    from codeloop.cli.render.text_renderer import progress_line
    from codeloop.events import LoopEnd, ToolFinished
    from codeloop.frontdoor import Conversation
    from codeloop.frontdoor.session_flags import session_options
    from codeloop.protocol.run_report import StderrReport
    from codeloop.review.changes import ReviewError
    from codeloop.review.findings import SCHEMA, Review, review_prompt
    from codeloop.structured_output import StructuredOutput

    options = session_options(args)
    options.cwd = changes.root
    options.permission_mode = "plan"
    conversation = await Conversation.open(options)
    structured = StructuredOutput(SCHEMA)
    end: LoopEnd | None = None
    report = StderrReport()
    try:
        structured.attach(conversation.session)
        conversation.keep_tools(",".join(_offered(args.tools, conversation.session.builtin_tools)))
        await conversation.start_servers()
        prompt = review_prompt(changes, "review", "tool")
        async for event in conversation.prompt(prompt):
            if not report.event(event) and (line := progress_line(event)):
                report.line(line)
            if isinstance(event, ToolFinished) and event.decision == "reject":
                report.line(f"  ⎿ refused: {event.result.text.splitlines()[0][:160]}")
            if isinstance(event, LoopEnd):
                end = event
    finally:
        await conversation.close()
    if structured.value is None:
        why = structured.failed or (
            end.error if end is not None and end.error else f"the run ended ({end and end.reason})"
        )
        raise ReviewError(f"the review did not complete: {why}")
    return Review.from_output(structured.value, changes.root)


def _offered(spec: str | None, available: Iterable[str]) -> list[str]:
    """The reading tools a review offers: `REVIEW_TOOLS`, or those of them --tools names."""
    named = None if spec is None or spec.strip() == "default" else spec.replace(" ", ",").split(",")
    wanted = [t for t in REVIEW_TOOLS if named is None or t in named or t == "StructuredOutput"]
    return [t for t in wanted if t in available]


def _print(review: Review, fmt: str) -> None:
    from codeloop.review.findings import as_text, dumps

    sys.stdout.write(dumps(review) + "\n" if fmt == "json" else as_text(review))
    sys.stdout.flush()


def _post(run: ActionsRun, pr: PullRequest, review: Review, changes: Changes) -> None:
    from codeloop.review.github import GitHub
    from codeloop.review.posting import post_review

    with GitHub(run) as github:
        posted = post_review(github, pr, review, changes.touched)
    where = f" {posted.url}" if posted.url else ""
    said = {
        "posted": f"posted review {posted.review_id} ({posted.inline} inline comment(s))",
        "updated": f"updated review {posted.review_id} of this head (no new review)",
        "skipped": f"review {posted.review_id} of this head says this already: nothing posted",
    }[posted.action]
    print(f"codeloop: {said}{where}", file=sys.stderr)
