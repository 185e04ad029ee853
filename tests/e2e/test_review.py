"""`codeloop review`, `/review` and `/security-review` through the real CLI, against the fake
model server and (for --post github) the fake GitHub API, in real git repositories: the
acceptance points of issue 40."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.github_server import FakeGitHub
from codeloop.testing.scenario import Turn, tool_use, turn
from tests.e2e.cli import provider_env, run_cli
from tests.e2e.review_checks import MODEL, REVIEW, TOKEN, UTIL, actions_env, git, make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def hostile_settings(repo: Path) -> None:
    """Settings that would let every write through, were the review not read-only."""
    settings = {
        "permissions": {"defaultMode": "bypassPermissions", "allow": ["Write", "Edit", "Bash"]}
    }
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps(settings))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "settings")


def review_turns() -> list[Turn]:
    """Tries to write three ways, then answers with both findings."""
    return [
        turn(
            "Let me fix it while I am here.",
            tool_use("Write", {"file_path": "src/new.py", "content": "x = 1\n"}),
            tool_use("Edit", {"file_path": "src/app.py", "old_string": "[1:]", "new_string": ""}),
            tool_use("Bash", {"command": "echo pwned > pwned.txt"}),
        ),
        turn(tool_use("Read", {"file_path": "src/util.py"})),
        turn(tool_use("StructuredOutput", REVIEW)),
        turn("Review done."),
    ]


def status(repo: Path) -> str:
    return git(repo, "status", "--porcelain", "--untracked-files=all")


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        block
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def test_review_json_reports_both_findings_writes_nothing_and_sends_the_diff(
    repo: Path, tmp_path: Path
) -> None:
    hostile_settings(repo)
    with FakeModelServer(review_turns()) as server:
        env = provider_env(server, "anthropic", tmp_path)
        run = run_cli(
            ["review", "--base", "main", "--format", "json", "--model", MODEL], cwd=repo, env=env
        )
        requests = server.requests
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == REVIEW
    assert run.stdout.count("\n") == 1  # exactly one JSON object, nothing else
    # read-only whatever the settings: the three writes were refused, the tree is untouched
    assert status(repo) == ""
    refused = tool_results(requests[1].body)
    assert len(refused) == 3 and all(r.get("is_error") for r in refused), refused
    assert "refused: Permission to use Bash denied" in run.stderr
    # the first request carries the diff
    first = json.dumps(requests[0].body)
    assert "+    for item in items[1:]:" in first
    assert "-    for item in items:" in first
    assert "StructuredOutput" in [t["name"] for t in requests[0].body["tools"]]
    assert not {"Write", "Edit", "Agent"} & {t["name"] for t in requests[0].body["tools"]}
    assert "ExitPlanMode" not in first  # a review cannot leave read-only


def test_review_text_format_and_default_base(repo: Path, tmp_path: Path) -> None:
    """Without --base: the merge base with main (there is no origin)."""
    turns = [turn(tool_use("StructuredOutput", REVIEW)), turn("Done.")]
    with FakeModelServer(turns) as server:
        env = provider_env(server, "anthropic", tmp_path) | {"CODELOOP_MODEL": MODEL}
        run = run_cli(["review"], cwd=repo, env=env)
        first = json.dumps(server.requests[0].body)
    assert run.returncode == 0, run.stderr
    assert "[high] src/app.py:4  Skips the first item" in run.stdout
    assert "[low] src/util.py:2  Division by zero" in run.stdout
    assert "items[1:]" in first


def test_a_review_that_never_answers_fails_with_a_message(repo: Path, tmp_path: Path) -> None:
    turns = [turn("Looks fine to me.")] * 4  # never calls StructuredOutput
    with FakeModelServer(turns) as server:
        env = provider_env(server, "anthropic", tmp_path)
        run = run_cli(
            ["review", "--base", "main", "--format", "json", "--model", MODEL], cwd=repo, env=env
        )
    assert run.returncode == 1
    assert run.stdout == ""
    assert "the review did not complete" in run.stderr
    assert "Traceback" not in run.stderr


def test_review_refuses_what_does_not_apply(repo: Path, tmp_path: Path) -> None:
    env = provider_env(None, "anthropic", tmp_path)
    run = run_cli(["review", "--output-format", "json"], cwd=repo, env=env)
    assert run.returncode == 2 and "does not apply to a review" in run.stderr
    run = run_cli(["review", "--base", "no-such-ref", "--model", MODEL], cwd=repo, env=env)
    assert run.returncode == 1 and "no-such-ref" in run.stderr and "Traceback" not in run.stderr
    run = run_cli(["review", "--post", "github", "--model", MODEL], cwd=repo, env=env)
    assert run.returncode == 1 and "GITHUB_TOKEN" in run.stderr


def test_post_github_posts_one_review_and_a_second_run_no_duplicate(
    repo: Path, tmp_path: Path
) -> None:
    one_run = [turn(tool_use("StructuredOutput", REVIEW)), turn("Done.")]
    with FakeModelServer(one_run + one_run) as server:
        head = git(repo, "rev-parse", "feature")
        with FakeGitHub(TOKEN, head, {"src/app.py": {3, 4}}, page_size=2) as github:
            for n in range(3):  # reviews by others: the list takes pages
                github.add_review(f"LGTM {n}")
            env, head = actions_env(repo, tmp_path, github.url)
            env |= provider_env(server, "anthropic", tmp_path)
            args = ["review", "--post", "github", "--format", "json", "--model", MODEL]
            first = run_cli(args, cwd=repo, env=env)
            assert first.returncode == 0, first.stderr
            posts = github.made("POST", "/reviews")
            assert len(posts) == 1
            second = run_cli(args, cwd=repo, env=env)
            assert second.returncode == 0, second.stderr
    assert json.loads(first.stdout) == REVIEW
    (post,) = github.made("POST", "/reviews")  # one review across both runs
    assert post.path == "/repos/octo/app/pulls/7/reviews"
    assert post.headers["authorization"] == f"Bearer {TOKEN}"
    assert post.body["commit_id"] == head
    assert post.body["event"] == "COMMENT"
    (comment,) = post.body["comments"]
    assert {k: comment[k] for k in ("path", "line", "side")} == {
        "path": "src/app.py",
        "line": 4,
        "side": "RIGHT",
    }
    assert "Skips the first item" in comment["body"]
    assert "src/util.py:2" in post.body["body"] and "Division by zero" in post.body["body"]
    assert "One bug in total()" in post.body["body"]
    # each run read the list page by page (its review is the fourth, on page 2), and the
    # second found its review there and updated it in place
    pages = [r.query.get("page", ["1"])[0] for r in github.made("GET", "/reviews")]
    assert pages == ["1", "2"] * 2
    (put,) = github.made("PUT")
    assert put.path == f"/repos/octo/app/pulls/7/reviews/{github.reviews[-1]['id']}"
    assert len([r for r in github.reviews if "codeloop-review" in r["body"]]) == 1
    for run in (first, second):
        assert TOKEN not in run.stdout + run.stderr


@pytest.mark.parametrize("command", ["/review", "/security-review"])
def test_slash_review_commands_send_the_diff(repo: Path, tmp_path: Path, command: str) -> None:
    (repo / "src" / "util.py").write_text(UTIL + "\n\ndef unsaved():\n    pass\n")
    with FakeModelServer([turn("```json\n" + json.dumps(REVIEW) + "\n```")]) as server:
        env = provider_env(server, "anthropic", tmp_path)
        run = run_cli(["-p", command, "--model", MODEL], cwd=repo, env=env)
        (request,) = server.requests
    assert run.returncode == 0, run.stderr
    prompt = json.dumps(request.body["messages"][0])
    assert "+    for item in items[1:]:" in prompt  # committed on the branch
    assert "+def unsaved():" in prompt  # and not committed yet
    assert '\\"findings\\"' in prompt
    if command == "/security-review":
        for kind in ("injection", "deserialization", "path traversal", "SSRF", "secrets"):
            assert kind in prompt
    assert "Skips the first item" in run.stdout


def test_slash_review_in_the_interactive_ui(repo: Path, tmp_path: Path) -> None:
    """The terminal UI's face (plain lines without a terminal) runs the same command."""
    with FakeModelServer([turn("```json\n" + json.dumps(REVIEW) + "\n```")]) as server:
        env = provider_env(server, "anthropic", tmp_path)
        run = run_cli(["--model", MODEL], cwd=repo, env=env, stdin="/review main\n")
        (request,) = server.requests
    assert run.returncode == 0, run.stderr
    prompt = json.dumps(request.body["messages"][0])
    assert "+    for item in items[1:]:" in prompt and "from main" in prompt
    assert "Skips the first item" in run.stdout


def test_slash_review_with_nothing_to_review_says_so(repo: Path, tmp_path: Path) -> None:
    git(repo, "checkout", "-q", "main")
    with FakeModelServer([]) as server:
        env = provider_env(server, "anthropic", tmp_path)
        run = run_cli(["-p", "/review", "--model", MODEL], cwd=repo, env=env)
        assert server.requests == []
    assert run.returncode == 1
    assert "nothing to review" in run.stderr and "Traceback" not in run.stderr


def test_review_of_no_change_completes_without_the_model(repo: Path, tmp_path: Path) -> None:
    with FakeModelServer([]) as server:
        env = provider_env(server, "anthropic", tmp_path)
        run = run_cli(
            ["review", "--base", "feature", "--format", "json", "--model", MODEL], cwd=repo, env=env
        )
        assert server.requests == []
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {
        "summary": "Nothing to review: no changes from feature.",
        "findings": [],
    }
