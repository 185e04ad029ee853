"""A review posted on a pull request once per head: one `POST .../pulls/{n}/reviews` with
event COMMENT, the head sha from the event, an inline comment for each finding on a line the
pull request adds or changes and the other findings in the body. The body carries a marker
naming the head; a run that finds its own review of this head (in the paginated list) updates
its body with `PUT .../reviews/{id}`, or skips when nothing changed: never a second review."""

from __future__ import annotations

from typing import Literal

from codeloop.review.actions import PullRequest
from codeloop.review.findings import Finding, Review
from codeloop.review.github import GitHub, GitHubError
from codeloop.system.valueclass import valueclass

MARKER = "<!-- codeloop-review"
MAX_BODY = 60_000  # GitHub refuses a review body over 65,536 characters


@valueclass
class Posted:
    action: Literal["posted", "updated", "skipped"]
    review_id: int
    url: str
    inline: int  # findings posted as inline comments


def marker(head_sha: str) -> str:
    return f"{MARKER} head={head_sha} -->"


def split(review: Review, touched: dict[str, set[int]]) -> tuple[list[Finding], list[Finding]]:
    """The findings GitHub takes inline (on a line the diff adds or changes), and the rest."""
    inline = [f for f in review.findings if f.line in touched.get(f.path, ())]
    return inline, [f for f in review.findings if f not in inline]


def body(review: Review, elsewhere: list[Finding], head_sha: str, *, inline: int) -> str:
    parts = [f"## codeloop review\n\n{review.summary.strip()}"]
    if elsewhere:
        title = "Findings outside the changed lines" if inline else "Findings"
        listed = "\n".join(
            f"- **{f.severity}** `{f.path}:{f.line}` **{f.title}**: {f.body.strip()}"
            for f in elsewhere
        )
        parts.append(f"### {title}\n\n{listed}")
    if not review.findings:
        parts.append("No findings.")
    text = "\n\n".join(parts)
    if len(text) > MAX_BODY:
        text = (
            text[:MAX_BODY] + "\n\n… (cut: GitHub takes 65,536 characters; the run's log has all)"
        )
    return f"{text}\n\n{marker(head_sha)}"


def comment(finding: Finding) -> dict[str, object]:
    text = f"**[{finding.severity}] {finding.title}**\n\n{finding.body.strip()}"
    return {"path": finding.path, "line": finding.line, "side": "RIGHT", "body": text}


def post_review(
    github: GitHub, pr: PullRequest, review: Review, touched: dict[str, set[int]]
) -> Posted:
    """Post the review, or update (or keep) this head's earlier one."""
    reviews = f"/pulls/{pr.number}/reviews"
    earlier = next(
        (r for r in github.pages(reviews) if marker(pr.head_sha) in str(r.get("body") or "")),
        None,
    )
    inline, elsewhere = split(review, touched)
    if earlier is not None:  # inline comments cannot be changed: the body lists every finding
        text = body(review, list(review.findings), pr.head_sha, inline=0)
        if earlier.get("body") == text:
            return Posted("skipped", int(earlier["id"]), str(earlier.get("html_url", "")), 0)
        updated = github.call("PUT", f"{reviews}/{earlier['id']}", {"body": text})
        return Posted("updated", int(updated["id"]), str(updated.get("html_url", "")), 0)
    request = {
        "commit_id": pr.head_sha,
        "event": "COMMENT",
        "body": body(review, elsewhere, pr.head_sha, inline=len(inline)),
        "comments": [comment(f) for f in inline],
    }
    try:
        posted = github.call("POST", reviews, request)
    except GitHubError as exc:
        if exc.status != 422 or not inline:
            raise
        # GitHub placed a line outside the diff differently than git did: one more try, with
        # every finding in the body (a 422 creates no review, so this is still the only one)
        print_warning(f"{exc}; posting every finding in the review's body instead")
        request["body"] = body(review, list(review.findings), pr.head_sha, inline=0)
        request["comments"] = []
        posted = github.call("POST", reviews, request)
        inline = []
    return Posted("posted", int(posted["id"]), str(posted.get("html_url", "")), len(inline))


def print_warning(text: str) -> None:
    import sys

    print(f"codeloop: warning: {text}", file=sys.stderr)
