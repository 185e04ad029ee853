"""The system prompt and the environment it describes, from real directories and real git."""

from __future__ import annotations

import datetime
import subprocess
from pathlib import Path

import pytest

from codeloop.context.environment import (
    STATUS_MAX_CHARS,
    basic_environment,
    gather_environment,
)
from codeloop.context.system_prompt import (
    STATIC_PROMPT,
    build_system_prompt,
    gather_prompt_context,
)

STATIC = STATIC_PROMPT.strip("\n")


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=T", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "trunk")
    (repo / "app.py").write_text("print('hi')\n")
    git(repo, "add", "app.py")
    git(repo, "commit", "-q", "-m", "First commit")
    (repo / "app.py").write_text("print('hello')\n")
    (repo / "new.txt").write_text("new\n")
    return repo


async def test_git_state_branch_status_and_commits(repo: Path) -> None:
    env = await gather_environment(repo / ".", "m")
    assert env.repo_root == repo
    assert env.git is not None
    assert env.git.branch == "trunk"
    assert env.git.status.splitlines() == [" M app.py", "?? new.txt"]
    assert env.git.recent_commits.endswith(" First commit")
    text = env.render()
    assert "Is directory a git repo: yes" in text
    assert "Current branch: trunk" in text and " M app.py" in text and "First commit" in text


async def test_an_empty_repository_and_a_subdirectory(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "sub").mkdir()
    env = await gather_environment(tmp_path / "sub", "m")
    assert env.repo_root == tmp_path
    assert env.git is not None
    assert env.git.branch == "main" and env.git.recent_commits == ""
    assert "Status:\n(clean)" in env.render()


async def test_outside_a_repository_no_git_section(tmp_path: Path) -> None:
    env = await gather_environment(tmp_path, "m")
    assert env.repo_root is None and env.git is None
    text = env.render()
    assert "Is directory a git repo: no" in text and "gitStatus" not in text


async def test_without_git_the_section_is_left_out(
    repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    env = await gather_environment(repo, "m")
    assert env.repo_root == repo and env.git is None


async def test_long_status_is_clipped(repo: Path) -> None:
    for i in range(300):
        (repo / f"untracked_file_number_{i:03}.txt").write_text("x")
    env = await gather_environment(repo, "m")
    assert env.git is not None
    assert len(env.git.status) < STATUS_MAX_CHARS + 200
    assert env.git.status.endswith("run `git status` with the Bash tool for the full list)")


def test_prompt_shape_static_boundary_environment_append(tmp_path: Path) -> None:
    env = basic_environment(tmp_path, "model-x", [tmp_path / "extra"])
    prompt = build_system_prompt(tmp_path, "model-x", append="Be terse.", environment=env)
    assert prompt.startswith(STATIC + "\n\n<env>\nWorking directory: ")
    dynamic = prompt[len(STATIC) :]
    assert f"Additional working directories: {tmp_path / 'extra'}" in dynamic
    assert f"Today's date: {datetime.date.today().isoformat()}" in dynamic
    assert "Model: model-x" in dynamic
    assert prompt.endswith("</env>\n\nBe terse.")


def test_system_prompt_flag_replaces_only_the_static_part(tmp_path: Path) -> None:
    prompt = build_system_prompt(tmp_path, "m", override="You are a reviewer.")
    assert prompt.startswith("You are a reviewer.\n\n<env>")
    assert "codeloop, a coding agent" not in prompt


def test_static_part_is_the_same_everywhere(tmp_path: Path, repo: Path) -> None:
    one = build_system_prompt(tmp_path, "m1")
    two = build_system_prompt(repo, "m2", append="x")
    assert one.startswith(STATIC + "\n\n<env>") and two.startswith(STATIC + "\n\n<env>")


async def test_prompt_context_gathers_memory_and_git_and_repeats_exactly(repo: Path) -> None:
    (repo / "CLAUDE.md").write_text("Use tabs.\n")
    env = {"HOME": str(repo.parent / "home")}
    first = await gather_prompt_context(repo, "m", append="extra", env=env)
    assert "Current branch: trunk" in first.system and first.system.endswith("extra")
    assert "Use tabs." not in first.system  # memory is a message, not part of the prompt
    assert first.user_context is not None and "Use tabs." in first.user_context.text
    again = await gather_prompt_context(repo, "m", append="extra", env=env)
    assert again.system == first.system
    assert again.user_context is not None
    assert again.user_context.text == first.user_context.text
