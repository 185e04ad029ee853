"""What the review tests share: a repository with a change on a branch, the review the
scripted model gives, and a pull_request event with the checkout GitHub Actions makes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.e2e.cli import PROVIDER_MODELS

MODEL = PROVIDER_MODELS["anthropic"]
TOKEN = "ghs_secret-token-never-printed"
APP = (
    "def total(items):\n    result = 0\n    for item in items:\n        result += item\n"
    "    return result\n"
)
UTIL = "def ratio(a, b):\n    return a / b\n"
# On the changed line 4 of src/app.py, and on line 2 of src/util.py, which the change leaves
CHANGED = {
    "path": "src/app.py",
    "line": 4,
    "severity": "high",
    "title": "Skips the first item",
    "body": "items[1:] drops the first item; iterate over items.",
}
ELSEWHERE = {
    "path": "src/util.py",
    "line": 2,
    "severity": "low",
    "title": "Division by zero",
    "body": "ratio(1, 0) raises; check b.",
}
REVIEW = {
    "summary": "One bug in total(); util.ratio needs a guard.",
    "findings": [CHANGED, ELSEWHERE],
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def make_repo(tmp_path: Path) -> Path:
    """main with src/app.py and src/util.py; branch `feature` changes line 3-4 of app.py."""
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "Dev")
    (repo / "src" / "app.py").write_text(APP)
    (repo / "src" / "util.py").write_text(UTIL)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "start")
    git(repo, "checkout", "-qb", "feature")
    changed = APP.replace("for item in items:", "for item in items[1:]:").replace(
        "result += item", "result += item  # add"
    )
    (repo / "src" / "app.py").write_text(changed)
    git(repo, "commit", "-qam", "skip the header row")
    return repo


def actions_env(repo: Path, tmp_path: Path, api_url: str) -> tuple[dict[str, str], str]:
    """A pull_request event for `feature` into `main`, checked out as Actions does: the
    detached merge commit (so git's HEAD is not the pull request's head)."""
    head = git(repo, "rev-parse", "feature")
    base = git(repo, "rev-parse", "main")
    git(repo, "checkout", "-q", "--detach", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge feature into main", "feature")
    assert git(repo, "rev-parse", "HEAD") != head
    event = {
        "action": "synchronize",
        "number": 7,
        "pull_request": {
            "number": 7,
            "head": {"sha": head, "ref": "feature", "repo": {"full_name": "octo/app"}},
            "base": {"sha": base, "ref": "main", "repo": {"full_name": "octo/app"}},
        },
        "repository": {"full_name": "octo/app"},
    }
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    env = {
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_REPOSITORY": "octo/app",
        "GITHUB_EVENT_PATH": str(path),
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_API_URL": api_url,
        "GITHUB_ACTIONS": "true",
    }
    return env, head
