"""The session builder: one async step that gathers the prompt context (git state, memory)
before the Session exists, so the session starts with the system prompt it keeps."""

from __future__ import annotations

import asyncio
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


async def test_a_build_that_fails_leaves_no_git_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The git state is asked for first, while the session is assembled: a build that fails
    meanwhile stops the probe (its processes are killed with it) rather than leave it behind
    in the caller's event loop. This git answers only after the build has failed."""
    repo = project(tmp_path)
    env = environment(tmp_path, "http://127.0.0.1:9")
    slow = tmp_path / "bin"
    slow.mkdir()
    (slow / "git").write_text("#!/bin/sh\nexec sleep 60\n")
    (slow / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{slow}{os.pathsep}{os.environ['PATH']}")  # the probe's git
    options = Options(model="claude-sonnet-4-5", cwd=repo, env=env, allowed_tools=["NoSuchTool"])
    with pytest.raises(UsageError, match="unknown tool 'NoSuchTool'"):
        await build_session(options)
    asked = [task for task in asyncio.all_tasks() if task.get_name().startswith("git ")]
    await asyncio.gather(*asked, return_exceptions=True)
    assert sorted(task.get_name() for task in asked if task.cancelled()) == [
        "git branch",
        "git log",
        "git status",
    ]


@pytest.mark.parametrize(
    ("provider", "stop_field"), [("anthropic", "stop_sequences"), ("openai", "stop")]
)
async def test_sampling_options_reach_every_request_in_the_providers_words(
    tmp_path: Path, provider: str, stop_field: str
) -> None:
    repo = project(tmp_path)
    with FakeModelServer([turn("ok"), turn("again")]) as server:
        env = environment(tmp_path, server.anthropic_base_url)
        model = "claude-sonnet-4-5"
        if provider == "openai":
            env |= {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.openai_base_url}
            model = "openai:gpt-6.2-sol"
        options = Options(model=model, cwd=repo, env=env, temperature=0.25, stop_sequences=["END"])
        session = await build_session(options)
        try:
            for prompt in ("hi", "and again"):
                assert [event async for event in session.submit(prompt)]
        finally:
            await session.aclose()
        sent = [request.body for request in server.requests]
    assert [(body["temperature"], body[stop_field]) for body in sent] == [(0.25, ["END"])] * 2


async def test_no_sampling_options_send_none(tmp_path: Path) -> None:
    repo = project(tmp_path)
    with FakeModelServer([turn("ok")]) as server:
        env = environment(tmp_path, server.anthropic_base_url)
        session = await build_session(Options(model="claude-sonnet-4-5", cwd=repo, env=env))
        try:
            assert [event async for event in session.submit("hi")]
        finally:
            await session.aclose()
        sent = server.requests[0].body
    assert "temperature" not in sent and "stop_sequences" not in sent


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"temperature": 1.5}, "temperature must be a number from 0 to 1 for anthropic"),
        ({"temperature": -0.1}, "temperature must be a number from 0 to 1"),
        ({"stop_sequences": "END"}, "stop_sequences must be a list of non-empty strings"),
        ({"stop_sequences": [""]}, "stop_sequences must be a list of non-empty strings"),
    ],
)
async def test_bad_sampling_options_are_usage_errors(
    tmp_path: Path, changes: dict[str, object], message: str
) -> None:
    repo = project(tmp_path)
    options = Options(
        model="claude-sonnet-4-5", cwd=repo, env=environment(tmp_path, "http://127.0.0.1:9")
    )
    with pytest.raises(UsageError, match=message):
        await build_session(dataclasses.replace(options, **changes))  # type: ignore[arg-type]
