"""GitHub's REST API through httpx, as a review needs it: every failure becomes a
`GitHubError` that names what happened (401 a refused token, 403 a missing permission, 422 a
request GitHub would not take, a rate limit and when it lifts), never a traceback and never
the token. A rate limit that lifts within `MAX_WAIT` seconds is waited out (GitHub's
`retry-after`, else `x-ratelimit-reset`), at most `MAX_TRIES` times."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from codeloop.review.changes import ReviewError

if TYPE_CHECKING:
    import httpx

    from codeloop.review.actions import ActionsRun

MAX_WAIT = 60.0
MAX_TRIES = 3
PAGE_SIZE = 100


class GitHubError(ReviewError):
    """A GitHub API call failed; `status` is its HTTP status (0: no answer)."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class GitHub:
    """One repository's API, authenticated with the run's token."""

    def __init__(
        self, run: ActionsRun, *, timeout: float = 30.0, max_wait: float = MAX_WAIT
    ) -> None:
        import httpx

        self.max_wait = max_wait
        self.secrets = tuple(s for s in {run.token, *run.secrets} if len(s) >= 8)
        self.prefix = f"/repos/{run.owner}/{run.repo}"
        self.http = httpx.Client(
            base_url=run.api_url,
            headers={
                "Authorization": f"Bearer {run.token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": "codeloop",
            },
            timeout=timeout,
        )

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> GitHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """`path` below the repository (`/pulls/7/reviews`); the answer's JSON."""
        return self._send(method, self.prefix + path, body).json()

    def pages(self, path: str) -> Iterator[dict[str, Any]]:
        """Every item of a paginated list, following the `Link: rel="next"` pages."""
        url: str | None = f"{self.prefix}{path}?per_page={PAGE_SIZE}"
        while url is not None:
            response = self._send("GET", url, None)
            items = response.json()
            if not isinstance(items, list):
                raise GitHubError(f"GET {path}: GitHub answered with no list", response.status_code)
            yield from (item for item in items if isinstance(item, dict))
            url = response.links.get("next", {}).get("url") or None

    def _send(self, method: str, url: str, body: dict[str, Any] | None) -> httpx.Response:
        import httpx

        what = f"{method} {url.split('?')[0]}"
        body = _redacted(body, self.secrets)
        for attempt in range(1, MAX_TRIES + 1):
            try:
                response = self.http.request(method, url, json=body)
            except httpx.HTTPError as exc:
                reason = type(exc).__name__
                raise GitHubError(f"{what}: GitHub could not be reached ({reason})") from None
            wait = _rate_limit_wait(response)
            if wait is None:
                break
            if wait > self.max_wait or attempt == MAX_TRIES:
                raise GitHubError(
                    f"{what}: GitHub's rate limit (HTTP {response.status_code}); it lifts in "
                    f"{wait:.0f} s, try again then",
                    response.status_code,
                )
            print(f"codeloop: GitHub's rate limit: waiting {wait:.0f} s", file=sys.stderr)
            time.sleep(wait)
        if response.is_success:
            return response
        raise GitHubError(f"{what}: {_explain(response)}", response.status_code)


def _redacted(value: Any, secrets: tuple[str, ...]) -> Any:
    """`value` with every secret in its strings replaced by `***`."""
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, "***")
        return value
    if isinstance(value, dict):
        return {k: _redacted(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v, secrets) for v in value]
    return value


def _rate_limit_wait(response: httpx.Response) -> float | None:
    """Seconds until a rate limit lifts; None when the answer is no rate limit."""
    if response.status_code not in (403, 429):
        return None
    headers = response.headers
    if (after := headers.get("retry-after")) is not None:
        try:
            return max(0.0, float(after))
        except ValueError:
            try:
                return max(0.0, parsedate_to_datetime(after).timestamp() - time.time())
            except (TypeError, ValueError):
                return MAX_WAIT + 1
    if headers.get("x-ratelimit-remaining") == "0" and (reset := headers.get("x-ratelimit-reset")):
        try:
            return max(0.0, float(reset) - time.time())
        except ValueError:
            return MAX_WAIT + 1
    # a secondary rate limit without a time: GitHub asks for at least a minute
    secondary = response.status_code == 429 or "rate limit" in response.text.lower()
    return 60.0 if secondary else None


def _explain(response: httpx.Response) -> str:
    """An error answer in a sentence: its status, what it means here, and GitHub's message."""
    try:
        data = response.json()
    except ValueError:
        data = {}
    said = data.get("message", "") if isinstance(data, dict) else ""
    errors = data.get("errors") if isinstance(data, dict) else None
    if isinstance(errors, list) and errors:
        said = f"{said} ({'; '.join(str(e) for e in errors[:3])})"
    meaning = {
        401: "GitHub refused the token (is github_token set, and still valid?)",
        403: "the token may not do this (the workflow needs `permissions: pull-requests: "
        "write`; a pull request from a fork gets a read-only token)",
        404: "not found (the repository, the pull request, or the token cannot see them)",
        422: "GitHub would not take the request",
    }.get(response.status_code, "GitHub failed")
    return f"HTTP {response.status_code}: {meaning}" + (f": {said}" if said else "")
