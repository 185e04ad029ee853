"""action.yml: a composite action with the issue's inputs, installing codeloop from its own
checkout with pinned dependencies, whose steps are run here as the runner runs them (bash,
the step's `run:` text, its environment) against the fake model server and the fake GitHub
API: the pull-request step posts the review, the comment step posts the answer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.requirements import Requirement

from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.github_server import FakeGitHub
from codeloop.testing.scenario import tool_use, turn
from tests.e2e.cli import provider_env
from tests.e2e.review_checks import MODEL, REVIEW, TOKEN, actions_env, git, make_repo

ROOT = Path(__file__).resolve().parents[2]
INPUTS = {
    "model",
    "anthropic_api_key",
    "openai_api_key",
    "openai_base_url",
    "github_token",
    "prompt",
    "allowed_tools",
    "settings",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def action() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text())
    return loaded


def step(name_part: str) -> dict[str, Any]:
    (found,) = [s for s in action()["runs"]["steps"] if name_part in s.get("name", "")]
    return dict(found)


def test_a_composite_action_with_the_inputs() -> None:
    spec = action()
    assert spec["runs"]["using"] == "composite"
    assert set(spec["inputs"]) == INPUTS
    assert spec["inputs"]["github_token"]["default"] == "${{ github.token }}"
    review = step("Review the pull request")
    assert "pull_request" in review["if"]
    assert "codeloop review --post github" in review["run"]
    comment = step("Answer the comment")
    assert "issue_comment" in comment["if"] and "@codeloop" in comment["if"]
    assert "codeloop -p" in comment["run"] and "codeloop.review.reply" in comment["run"]
    # every input reaches the steps that run codeloop
    for ran in (review, comment):
        assert {k.removeprefix("INPUT_").lower() for k in ran["env"] if k.startswith("INPUT_")} == (
            INPUTS
        )


def test_installed_from_its_own_checkout_pinned_and_cached() -> None:
    install = step("Install codeloop")
    assert '"$ACTION_PATH"' in install["run"] and "--constraint" in install["run"]
    assert install["if"] == "steps.cache.outputs.cache-hit != 'true'"
    assert step("Set up Python")["with"]["update-environment"] is False  # the job's stays
    key = subprocess.run(
        [sys.executable, str(ROOT / "packaging/action/install_key.py"), str(ROOT)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert key.startswith("key=codeloop-") and key == key_again()
    cache = step("Restore the cached install")
    assert cache["uses"].startswith("actions/cache@")
    assert cache["with"]["key"] == "${{ steps.install.outputs.key }}"
    # the constraints pin every run-time dependency, at a version pyproject.toml accepts
    pins = dict(
        line.split("==")
        for line in (ROOT / "packaging/action/constraints.txt").read_text().splitlines()
        if line and not line.startswith("#")
    )
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for text in project["dependencies"]:
        requirement = Requirement(text)
        name = requirement.name.lower().replace("_", "-")
        assert name in pins, f"{name} is not pinned in packaging/action/constraints.txt"
        assert requirement.specifier.contains(pins[name]), (name, pins[name])


def key_again() -> str:
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("install_key", ROOT / "packaging/action/install_key.py")
    assert spec is not None and spec.loader is not None
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    return f"key={module.install_key(ROOT)}\n"


def run_step(
    found: dict[str, Any], env: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """The step's `run:` text in bash as a runner runs it (`bash -e -o pipefail`), with this
    venv as the install step's (CODELOOP_VENV): codeloop is on no PATH but the one the step
    makes."""
    full = env | {
        "CODELOOP_VENV": sys.prefix,
        "GITHUB_ACTION_PATH": str(ROOT),
        "RUNNER_TEMP": str(cwd.parent),
    }
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", found["run"]],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=180,
    )


def inputs_env() -> dict[str, str]:
    return {
        "INPUT_MODEL": MODEL,
        "INPUT_ANTHROPIC_API_KEY": "test-key",
        "INPUT_OPENAI_API_KEY": "",
        "INPUT_OPENAI_BASE_URL": "",
        "INPUT_GITHUB_TOKEN": TOKEN,
        "INPUT_PROMPT": "Mind the off-by-one errors.",
        "INPUT_ALLOWED_TOOLS": "",
        "INPUT_SETTINGS": "",
    }


def test_the_pull_request_step_posts_the_review(repo: Path, tmp_path: Path) -> None:
    turns = [turn(tool_use("StructuredOutput", REVIEW)), turn("Done.")]
    with FakeModelServer(turns) as server:
        head = git(repo, "rev-parse", "feature")
        with FakeGitHub(TOKEN, head, {"src/app.py": {3, 4}}) as github:
            env, head = actions_env(repo, tmp_path, github.url)
            base_env = provider_env(server, "anthropic", tmp_path)
            env = base_env | env | inputs_env() | {"BASE_SHA": git(repo, "rev-parse", "main")}
            del env["GITHUB_TOKEN"], env["ANTHROPIC_API_KEY"]  # the inputs bring them
            done = run_step(step("Review the pull request"), env, repo)
        first = server.requests[0].body
    assert done.returncode == 0, done.stderr
    (post,) = github.made("POST", "/reviews")
    assert post.body["commit_id"] == head
    assert [c["line"] for c in post.body["comments"]] == [4]
    assert "Mind the off-by-one errors." in json.dumps(first["system"])  # the prompt input
    assert TOKEN not in done.stdout + done.stderr


def test_the_comment_step_answers_on_the_issue(repo: Path, tmp_path: Path) -> None:
    comment = "@codeloop what does total() do?"
    event = {
        "action": "created",
        "issue": {"number": 12, "title": "How do totals work?"},
        "comment": {"body": comment, "author_association": "MEMBER"},
        "repository": {"full_name": "octo/app"},
    }
    path = tmp_path / "comment.json"
    path.write_text(json.dumps(event))
    with FakeModelServer([turn("It adds the items up.")]) as server:
        with FakeGitHub(TOKEN, "0" * 40, {}) as github:
            env = provider_env(server, "anthropic", tmp_path) | inputs_env()
            del env["ANTHROPIC_API_KEY"]
            env |= {
                "GITHUB_REPOSITORY": "octo/app",
                "GITHUB_EVENT_PATH": str(path),
                "GITHUB_API_URL": github.url,
                "COMMENT": comment,
                "NUMBER": "12",
            }
            done = run_step(step("Answer the comment"), env, repo)
        prompt = json.dumps(server.requests[0].body["messages"][0])
    assert done.returncode == 0, done.stderr
    assert "@codeloop what does total() do?" in prompt and "octo/app#12" in prompt
    (reply,) = github.made("POST", "/issues/12/comments")
    assert reply.body["body"].startswith("It adds the items up.")
