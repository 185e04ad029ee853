"""The answer to an `@codeloop` comment, posted as a comment on the same issue or pull
request: `python -m codeloop.review.reply ANSWER_FILE` in an issue_comment job (action.yml
runs it after `codeloop -p`). One line on stderr and exit 1 when it cannot be posted."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from codeloop.errors import CodeloopError
from codeloop.review.actions import actions_run
from codeloop.review.changes import ReviewError
from codeloop.review.github import GitHub


def post_reply(answer: str, env: Mapping[str, str]) -> str:
    """Post `answer` on the event's issue; the new comment's address."""
    run = actions_run(env)
    number = run.issue_number
    if number is None:
        raise ReviewError("the GitHub event is not an issue_comment's: no issue to reply on")
    if not answer.strip():
        raise ReviewError("the answer is empty: nothing to post")
    text = answer.strip()
    if run_id := env.get("GITHUB_RUN_ID"):
        server = env.get("GITHUB_SERVER_URL", "https://github.com")
        link = f"{server}/{run.owner}/{run.repo}/actions/runs/{run_id}"
        text += f"\n\n<sub>codeloop · [run]({link})</sub>"
    with GitHub(run) as github:
        posted = github.call("POST", f"/issues/{number}/comments", {"body": text})
    return str(posted.get("html_url", "")) if isinstance(posted, dict) else ""


def main(argv: Sequence[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m codeloop.review.reply ANSWER_FILE", file=sys.stderr)
        return 2
    try:
        answer = Path(argv[0]).read_text(encoding="utf-8", errors="replace")
        url = post_reply(answer, os.environ)
    except OSError as exc:
        print(f"codeloop: {argv[0]}: cannot read the answer ({exc.strerror})", file=sys.stderr)
        return 1
    except CodeloopError as exc:
        print(f"codeloop: {exc}", file=sys.stderr)
        return exc.exit_status
    print(f"codeloop: replied {url}".rstrip(), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
