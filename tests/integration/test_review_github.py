"""The GitHub side of a review against the fake REST API on 127.0.0.1: what each API error
becomes (named, the token never in it), the fallback when GitHub places a line outside the
diff, rate limits waited out or reported, a rerun that changes nothing, and the reply to an
`@codeloop` comment."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from codeloop.review.actions import ActionsRun, PullRequest, actions_run
from codeloop.review.findings import Finding, Review
from codeloop.review.github import GitHub, GitHubError
from codeloop.review.posting import post_review
from codeloop.review.reply import post_reply
from codeloop.testing.github_server import Answer, FakeGitHub

TOKEN = "ghs_token-that-must-not-leak"
HEAD = "a" * 40
PR = PullRequest(7, HEAD, "b" * 40, "main")
ON_DIFF = Finding("src/app.py", 4, "high", "Off by one", "Use <=.")
OFF_DIFF = Finding("src/util.py", 2, "low", "Unchecked", "Check b.")
REVIEW = Review("Two things.", (ON_DIFF, OFF_DIFF))
TOUCHED = {"src/app.py": {3, 4}}


def run_for(github: FakeGitHub, token: str = TOKEN) -> ActionsRun:
    return ActionsRun(token, github.url, "octo", "app", {})


def test_posted_with_the_inline_comment_and_the_rest_in_the_body() -> None:
    with FakeGitHub(TOKEN, HEAD, TOUCHED) as fake, GitHub(run_for(fake)) as github:
        posted = post_review(github, PR, REVIEW, TOUCHED)
    assert (posted.action, posted.inline) == ("posted", 1)
    (request,) = fake.made("POST")
    assert [c["line"] for c in request.body["comments"]] == [4]
    assert "src/util.py:2" in request.body["body"]
    assert "src/app.py:4" not in request.body["body"]


def test_a_rerun_with_the_same_review_skips_and_a_changed_one_updates() -> None:
    with FakeGitHub(TOKEN, HEAD, TOUCHED) as fake, GitHub(run_for(fake)) as github:
        post_review(github, PR, REVIEW, TOUCHED)
        updated = post_review(github, PR, REVIEW, TOUCHED)
        skipped = post_review(github, PR, REVIEW, TOUCHED)
        changed = post_review(github, PR, Review("Changed my mind.", ()), TOUCHED)
        fake.head_sha = "c" * 40  # a new push: its review is a new one
        other = post_review(github, PullRequest(7, "c" * 40, PR.base_sha, "main"), REVIEW, {})
    assert [updated.action, skipped.action, changed.action] == ["updated", "skipped", "updated"]
    assert other.action == "posted"
    assert len(fake.made("PUT")) == 2
    assert len(fake.made("POST")) == 2


def test_unauthorized_is_named_without_the_token() -> None:
    with (
        FakeGitHub(TOKEN, HEAD, TOUCHED) as fake,
        GitHub(run_for(fake, "ghs_wrong")) as github,
        pytest.raises(GitHubError) as caught,
    ):
        post_review(github, PR, REVIEW, TOUCHED)
    assert caught.value.status == 401
    assert "refused the token" in str(caught.value) and "Bad credentials" in str(caught.value)
    assert "ghs_wrong" not in str(caught.value) and TOKEN not in repr(run_for(fake))


def test_forbidden_names_the_permission_it_needs() -> None:
    with FakeGitHub(TOKEN, HEAD, TOUCHED) as fake, GitHub(run_for(fake)) as github:
        fake.fail_next.append(Answer(403, {"message": "Resource not accessible by integration"}))
        with pytest.raises(GitHubError) as caught:
            post_review(github, PR, REVIEW, TOUCHED)
    assert caught.value.status == 403
    assert "pull-requests: write" in str(caught.value)
    assert "Resource not accessible by integration" in str(caught.value)
    assert fake.made("POST") == []  # it failed listing the reviews, before posting any


def test_a_line_github_places_outside_the_diff_goes_into_the_body(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with FakeGitHub(TOKEN, HEAD, {"src/app.py": {3}}) as fake, GitHub(run_for(fake)) as github:
        posted = post_review(github, PR, REVIEW, TOUCHED)  # we think line 4 is on the diff
    assert (posted.action, posted.inline) == ("posted", 0)
    failed, accepted = fake.made("POST")
    assert failed.body["comments"] and accepted.body["comments"] == []
    assert "src/app.py:4" in accepted.body["body"] and "src/util.py:2" in accepted.body["body"]
    assert len(fake.reviews) == 1  # a 422 creates nothing: still one review
    assert "HTTP 422" in capsys.readouterr().err


def test_a_short_rate_limit_is_waited_out() -> None:
    with FakeGitHub(TOKEN, HEAD, TOUCHED) as fake, GitHub(run_for(fake)) as github:
        fake.fail_next.append(
            Answer(429, {"message": "secondary rate limit"}, {"Retry-After": "1"})
        )
        started = time.monotonic()
        posted = post_review(github, PR, REVIEW, TOUCHED)
        waited = time.monotonic() - started
    assert posted.action == "posted"
    assert waited >= 1.0  # it honoured retry-after before asking again
    assert [r.method for r in fake.requests] == ["GET", "GET", "POST"]


def test_a_long_rate_limit_is_reported_with_when_it_lifts() -> None:
    reset = str(int(time.time()) + 3600)
    with FakeGitHub(TOKEN, HEAD, TOUCHED) as fake, GitHub(run_for(fake)) as github:
        fake.fail_next.append(
            Answer(
                403,
                {"message": "API rate limit exceeded"},
                {"x-ratelimit-remaining": "0", "x-ratelimit-reset": reset},
            )
        )
        with pytest.raises(GitHubError) as caught:
            post_review(github, PR, REVIEW, TOUCHED)
    assert "rate limit" in str(caught.value) and "lifts in" in str(caught.value)
    assert len(fake.requests) == 1  # not hammered


def test_unreachable_api_is_named() -> None:
    run = ActionsRun(TOKEN, "http://127.0.0.1:9", "octo", "app", {})
    with GitHub(run, timeout=5) as github, pytest.raises(GitHubError) as caught:
        github.call("GET", "/pulls/7/reviews")
    assert "could not be reached" in str(caught.value)


def test_reply_posts_the_answer_on_the_issue(tmp_path: Path) -> None:
    event = {"action": "created", "issue": {"number": 12}, "comment": {"body": "@codeloop hi"}}
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    with FakeGitHub(TOKEN, HEAD, {}) as fake:
        env = {
            "GITHUB_TOKEN": TOKEN,
            "GITHUB_REPOSITORY": "octo/app",
            "GITHUB_EVENT_PATH": str(path),
            "GITHUB_API_URL": fake.url,
            "GITHUB_RUN_ID": "99",
        }
        url = post_reply("Hello there.\n", env)
    (request,) = fake.requests
    assert request.path == "/repos/octo/app/issues/12/comments"
    assert request.body["body"].startswith("Hello there.")
    assert "/octo/app/actions/runs/99" in request.body["body"]
    assert url.endswith("/c/500")
    assert actions_run(env).issue_number == 12


def test_a_secondary_rate_limit_without_a_time_is_named() -> None:
    """GitHub asks for a minute's wait: more than this client may wait, so it says so."""
    with FakeGitHub(TOKEN, HEAD, TOUCHED) as fake, GitHub(run_for(fake), max_wait=5) as github:
        fake.fail_next.append(Answer(403, {"message": "You have exceeded a secondary rate limit."}))
        with pytest.raises(GitHubError) as caught:
            post_review(github, PR, REVIEW, TOUCHED)
    assert "rate limit" in str(caught.value) and "lifts in 60 s" in str(caught.value)


def test_a_huge_review_is_cut_to_what_github_takes() -> None:
    many = tuple(Finding("src/x.py", n, "low", "T", "word " * 200) for n in range(1, 200))
    with FakeGitHub(TOKEN, HEAD, TOUCHED) as fake, GitHub(run_for(fake)) as github:
        post_review(github, PR, Review("Lots.", many), TOUCHED)
    (post,) = fake.made("POST")
    assert len(post.body["body"]) < 65_536 and "(cut:" in post.body["body"]
    assert post.body["body"].endswith(f"head={HEAD} -->")  # the marker survives the cut


def test_no_credential_of_the_job_is_posted(tmp_path: Path) -> None:
    """A change can ask the model to print the environment into a finding: what is posted
    carries no token or key, whatever the model wrote."""
    key = "sk-ant-api03-very-secret"
    leaked = Finding("src/app.py", 4, "high", f"Key {key}", f"env: GITHUB_TOKEN={TOKEN} {key}")
    path = tmp_path / "event.json"
    path.write_text(json.dumps({"pull_request": {"number": 7}}))
    with FakeGitHub(TOKEN, HEAD, TOUCHED) as fake:
        env = {
            "GITHUB_TOKEN": TOKEN,
            "GITHUB_REPOSITORY": "octo/app",
            "GITHUB_EVENT_PATH": str(path),
            "GITHUB_API_URL": fake.url,
            "ANTHROPIC_API_KEY": key,
        }
        with GitHub(actions_run(env)) as github:
            post_review(github, PR, Review(f"Summary {key}", (leaked, OFF_DIFF)), TOUCHED)
    (post,) = fake.made("POST")
    sent = json.dumps(post.body)
    assert key not in sent and TOKEN not in sent
    assert "GITHUB_TOKEN=***" in sent and "Key ***" in sent
