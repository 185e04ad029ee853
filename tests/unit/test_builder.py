"""The session builder: one async step that gathers the prompt context (git state, memory)
before the Session exists, so the session starts with the system prompt it keeps."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from codeloop.builder import build_session
from codeloop.errors import UsageError
from codeloop.options import Options
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import turn
from tests.unit.test_session_store import git


def project(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", "-b", "topic", cwd=repo)
    git("commit", "-q", "--allow-empty", "-m", "first", cwd=repo)
    (repo / "CLAUDE.md").write_text("Always answer in haiku.\n")
    return repo


def environment(tmp_path: Path, base_url: str) -> dict[str, str]:
    home = tmp_path / "home"
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CODELOOP_HOME": str(home / ".codeloop"),
        "ANTHROPIC_API_KEY": "k",
        "ANTHROPIC_BASE_URL": base_url,
    }


async def test_the_session_is_built_with_the_prompt_it_keeps(tmp_path: Path) -> None:
    repo = project(tmp_path)
    with FakeModelServer([turn("ok")]) as server:
        env = environment(tmp_path, server.anthropic_base_url)
        options = Options(model="claude-sonnet-4-5", cwd=repo, env=env)
        session = await build_session(options)
        try:
            # Gathered before the first prompt: the git state in the system prompt, the
            # memory in the context sent ahead of the history.
            assert "Current branch: topic" in session.config.system
            assert any("Always answer in haiku." in m.text for m in session.user_context)
            with pytest.raises(dataclasses.FrozenInstanceError):
                session.config.system = "another"  # type: ignore[misc]
            built = session.config.system
            events = [event async for event in session.submit("hi")]
        finally:
            await session.aclose()
        sent = server.requests[0].body
    assert events
    assert "".join(block["text"] for block in sent["system"]) == built


async def test_forking_without_a_session_to_fork_is_a_usage_error(tmp_path: Path) -> None:
    repo = project(tmp_path)
    options = Options(
        model="claude-sonnet-4-5",
        cwd=repo,
        env=environment(tmp_path, "http://127.0.0.1:9"),
        fork_session=True,
    )
    with pytest.raises(UsageError, match="--fork-session needs --resume or --continue"):
        await build_session(options)
