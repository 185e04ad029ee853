"""A fake of the part of GitHub's REST API a review uses, on 127.0.0.1: pull request reviews
(listed a page at a time with `Link` headers, created, updated) and issue comments. It
records every request and answers as GitHub does: 401 for another token, 422 for an inline
comment on a line outside the pull request's diff or a commit that is not its head, and
whatever answers a test queues (`fail_next`: a 403, a rate limit with `retry-after`).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from codeloop.system.valueclass import valueclass
from codeloop.testing.loopback_http import LoopbackHttp

_REVIEWS = re.compile(r"^/repos/([^/]+)/([^/]+)/pulls/(\d+)/reviews(?:/(\d+))?$")
_COMMENTS = re.compile(r"^/repos/([^/]+)/([^/]+)/issues/(\d+)/comments$")


@valueclass(frozen=False)
class GitHubRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # names lower-cased
    body: Any


@valueclass(frozen=False)
class Answer:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


class FakeGitHub:
    """`with FakeGitHub(token, head_sha, diff_lines) as gh:` then GITHUB_API_URL=gh.url.

    `diff_lines`: {path: lines on the head side the pull request's diff touches}."""

    def __init__(
        self,
        token: str,
        head_sha: str,
        diff_lines: dict[str, set[int]],
        *,
        page_size: int = 2,
    ) -> None:
        self.token = token
        self.head_sha = head_sha
        self.diff_lines = diff_lines
        self.page_size = page_size
        self.requests: list[GitHubRequest] = []
        self.reviews: list[dict[str, Any]] = []
        self.comments: list[dict[str, Any]] = []
        self.fail_next: list[Answer] = []
        self._lock = threading.Lock()
        self._server = LoopbackHttp(_Handler, self)

    @property
    def url(self) -> str:
        return self._server.url

    def __enter__(self) -> FakeGitHub:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    def add_review(self, body: str, user: str = "someone") -> dict[str, Any]:
        """A review someone else (or an earlier run) wrote."""
        review = {
            "id": 1000 + len(self.reviews),
            "body": body,
            "user": {"login": user},
            "commit_id": self.head_sha,
            "state": "COMMENTED",
            "comments": [],
        }
        self.reviews.append(review)
        return review

    def made(self, method: str, suffix: str = "") -> list[GitHubRequest]:
        return [r for r in self.requests if r.method == method and r.path.endswith(suffix)]

    def answer(self, request: GitHubRequest) -> Answer:
        with self._lock:
            self.requests.append(request)
            if request.headers.get("authorization") != f"Bearer {self.token}":
                return Answer(401, {"message": "Bad credentials", "status": "401"})
            if self.fail_next:
                return self.fail_next.pop(0)
            if match := _REVIEWS.match(request.path):
                return self._reviews(request, match.group(4))
            if _COMMENTS.match(request.path) and request.method == "POST":
                comment = {"id": 500 + len(self.comments), "body": request.body["body"]}
                self.comments.append(comment)
                return Answer(201, comment | {"html_url": f"https://github.test/c/{comment['id']}"})
            return Answer(404, {"message": "Not Found"})

    def _reviews(self, request: GitHubRequest, review_id: str | None) -> Answer:
        if request.method == "GET" and review_id is None:
            page = int(request.query.get("page", ["1"])[0])
            size = min(int(request.query.get("per_page", ["30"])[0]), self.page_size)
            items = self.reviews[(page - 1) * size : page * size]
            headers = {}
            if page * size < len(self.reviews):
                path = request.path
                headers["Link"] = (
                    f'<{self.url}{path}?per_page={size}&page={page + 1}>; rel="next", '
                    f'<{self.url}{path}?per_page={size}&page={page}>; rel="self"'
                )
            return Answer(200, items, headers)
        if request.method == "POST" and review_id is None:
            body = request.body
            if body.get("commit_id") != self.head_sha:
                return Answer(422, {"message": "Unprocessable Entity", "errors": ["commit_id"]})
            for comment in body.get("comments", []):
                if comment.get("line") not in self.diff_lines.get(comment.get("path"), ()):
                    return Answer(
                        422,
                        {
                            "message": "Unprocessable Entity",
                            "errors": ["Line could not be resolved"],
                        },
                    )
            review = self.add_review(body.get("body", ""), user="github-actions[bot]")
            review["comments"] = body.get("comments", [])
            review["commit_id"] = body["commit_id"]
            return Answer(200, review | {"html_url": f"https://github.test/r/{review['id']}"})
        if request.method == "PUT" and review_id is not None:
            found = next((r for r in self.reviews if r["id"] == int(review_id)), None)
            if found is None:
                return Answer(404, {"message": "Not Found"})
            found["body"] = request.body["body"]
            return Answer(200, found)
        return Answer(404, {"message": "Not Found"})


class _Handler(BaseHTTPRequestHandler):
    server: Any

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_GET(self) -> None:
        self._exchange()

    def do_POST(self) -> None:
        self._exchange()

    def do_PUT(self) -> None:
        self._exchange()

    def _exchange(self) -> None:
        size = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(size) if size else b""
        parts = urlsplit(self.path)
        request = GitHubRequest(
            self.command,
            parts.path,
            parse_qs(parts.query),
            {k.lower(): v for k, v in self.headers.items()},
            json.loads(raw) if raw else None,
        )
        answer: Answer = self.server.owner.answer(request)
        data = json.dumps(answer.body).encode()
        self.send_response(answer.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
