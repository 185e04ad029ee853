"""The GitHub Actions run a review happens in: the variables every job has (GITHUB_TOKEN,
GITHUB_REPOSITORY, GITHUB_EVENT_PATH, GITHUB_API_URL) and the event that started it. In a
pull_request job the checkout is the merge commit, so the head a review is posted on is the
event's `pull_request.head.sha`, never git's HEAD."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from codeloop.review.changes import ReviewError
from codeloop.system.valueclass import valueclass

DEFAULT_API_URL = "https://api.github.com"
# Credentials a job holds that nothing posted to GitHub may carry: a change under review can
# ask the model to print its environment (a read-only command) into a finding.
SECRET_VARIABLES = (
    "GITHUB_TOKEN",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
)


@valueclass
class PullRequest:
    number: int
    head_sha: str
    base_sha: str
    base_ref: str


@valueclass
class ActionsRun:
    token: str
    api_url: str
    owner: str
    repo: str
    event: dict[str, Any]
    secrets: tuple[str, ...] = ()  # values to keep out of whatever is posted

    def __repr__(self) -> str:  # never the token, wherever the object is shown
        return f"ActionsRun({self.owner}/{self.repo}, api_url={self.api_url!r})"

    @property
    def pull_request(self) -> PullRequest | None:
        return pull_request_of(self.event)

    @property
    def issue_number(self) -> int | None:
        """The issue or pull request an issue_comment event was written on."""
        issue = self.event.get("issue")
        number = issue.get("number") if isinstance(issue, dict) else None
        return number if isinstance(number, int) else None


def job_secrets(env: Mapping[str, str]) -> tuple[str, ...]:
    """The credentials the job holds (`SECRET_VARIABLES`' values, long enough to be one)."""
    return tuple(v for n in SECRET_VARIABLES if len(v := env.get(n, "")) >= 8)


def redacted(value: Any, secrets: tuple[str, ...]) -> Any:
    """`value` with every secret in its strings replaced by `***`."""
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, "***")
        return value
    if isinstance(value, dict):
        return {k: redacted(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [redacted(v, secrets) for v in value]
    return value


def read_event(env: Mapping[str, str]) -> dict[str, Any] | None:
    """The event payload GITHUB_EVENT_PATH names; None outside Actions."""
    path = env.get("GITHUB_EVENT_PATH")
    if not path:
        return None
    try:
        event = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReviewError(f"GITHUB_EVENT_PATH {path}: cannot read the event: {exc}") from None
    if not isinstance(event, dict):
        raise ReviewError(f"GITHUB_EVENT_PATH {path}: the event is not a JSON object")
    return event


def pull_request_of(event: Mapping[str, Any] | None) -> PullRequest | None:
    """The pull request of a pull_request (or pull_request_target) event."""
    pr = event.get("pull_request") if event else None
    if not isinstance(pr, dict):
        return None
    try:
        return PullRequest(
            int(pr["number"]), str(pr["head"]["sha"]), str(pr["base"]["sha"]), pr["base"]["ref"]
        )
    except (KeyError, TypeError, ValueError):
        raise ReviewError(
            "the event's pull_request lacks its number, head.sha or base (sha, ref)"
        ) from None


def actions_run(env: Mapping[str, str]) -> ActionsRun:
    """Everything posting needs, or a ReviewError naming what is missing."""
    missing = [
        n for n in ("GITHUB_TOKEN", "GITHUB_REPOSITORY", "GITHUB_EVENT_PATH") if not env.get(n)
    ]
    if missing:
        raise ReviewError(
            f"--post github runs inside GitHub Actions: {', '.join(missing)} not set "
            "(the workflow passes the token as GITHUB_TOKEN)"
        )
    owner, _, repo = env["GITHUB_REPOSITORY"].partition("/")
    if not owner or not repo:
        raise ReviewError(f"GITHUB_REPOSITORY is {env['GITHUB_REPOSITORY']!r}, not OWNER/REPO")
    event = read_event(env) or {}
    api_url = (env.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/")
    return ActionsRun(env["GITHUB_TOKEN"], api_url, owner, repo, event, job_secrets(env))
