"""The compact profile (tools/profile.py) and the overhead counted as each provider renders it
(models/prompt_size.py): built through the real builder, against the fake server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from codeloop.builder import build_session
from codeloop.context.tokens import Shares, context_limits
from codeloop.errors import UsageError
from codeloop.models.local import LocalModel, chat_messages
from codeloop.models.prompt_size import prompt_tokens, schema_prompt_tokens
from codeloop.models.shaping import RequestShape, ShapedClient
from codeloop.options import Options
from codeloop.session import Session
from codeloop.settings.settings_files import load_settings
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import turn
from codeloop.text import estimate_text
from codeloop.tools.base import AnyTool
from codeloop.tools.profile import CORE_TOOLS, compact_tools, required_only
from codeloop.tools.registry import default_tools
from codeloop.types import Message, ModelRequest, ToolSpec
from tests.unit.test_builder import environment, project
from tests.unit.test_session_store import git


def specs(tools: Mapping[str, AnyTool]) -> tuple[ToolSpec, ...]:
    return tuple(t.spec() for t in tools.values())


def test_core_tools_trimmed_to_first_lines_and_required_fields() -> None:
    full = default_tools()
    compact = compact_tools(full, lambda s: schema_prompt_tokens("", s))
    assert list(compact) == [*CORE_TOOLS, "TodoWrite"]
    read = compact["Read"].spec()
    assert "\n" not in read.description
    assert read.description == full["Read"].spec().description.strip().splitlines()[0]
    assert list(read.input_schema["properties"]) == ["file_path"] == read.input_schema["required"]
    assert schema_prompt_tokens("", specs(compact)) < schema_prompt_tokens("", specs(full)) / 4


def test_todowrite_only_when_it_fits() -> None:
    """A rendering that weighs more leaves TodoWrite out, never a core tool."""
    heavy = compact_tools(default_tools(), lambda s: 4 * schema_prompt_tokens("", s))
    assert list(heavy) == list(CORE_TOOLS)


def test_required_only_keeps_definitions_references_need() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}, "b": {"type": "string"}},
        "required": ["a"],
        "$defs": {"A": {"type": "integer"}},
    }
    assert required_only(schema) == {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/A"}},
        "required": ["a"],
        "$defs": {"A": {"type": "integer"}},
    }


def test_the_local_provider_counts_its_one_line_list(tmp_path: Path) -> None:
    """What the local model sends is its system message: the count is that message's."""
    model = LocalModel(tmp_path / "m.gguf")
    try:
        wrapped = ShapedClient(model, RequestShape())
        tools = specs(default_tools())
        request = ModelRequest("m", (Message.user("hi"),), system="You help.", tools=tools)
        system = chat_messages(request)[0]["content"]
        counted = prompt_tokens(wrapped, "You help.", tools)
        assert counted == estimate_text(system)
        assert counted < schema_prompt_tokens("You help.", tools) / 2
    finally:
        asyncio.run(model.aclose())


async def build(tmp_path: Path, **fields: object) -> tuple[Session, FakeModelServer]:
    repo = project(tmp_path)
    for n in range(30):  # a long git status: the compact profile shows its head
        (repo / f"untracked_{n}.txt").write_text("x")
    server = FakeModelServer([turn("ok")]).start()
    env = environment(tmp_path, server.anthropic_base_url) | fields.pop("env", {})  # type: ignore[operator]
    try:
        session = await build_session(
            Options(model="claude-sonnet-4-5", cwd=repo, env=env, **fields)  # type: ignore[arg-type]
        )
    except BaseException:
        server.close()
        raise
    return session, server


@pytest.mark.parametrize(
    ("window", "choice", "compact"),
    [
        ("16384", None, True),
        ("32768", None, True),
        ("65536", None, False),
        ("200000", "on", True),
        ("16384", "off", False),
    ],
)
async def test_the_profile_follows_the_window_and_the_choice(
    tmp_path: Path, window: str, choice: str | None, compact: bool
) -> None:
    session, server = await build(
        tmp_path, env={"CODELOOP_CONTEXT_WINDOW": window}, compact_profile=choice
    )
    try:
        offered = list(session.tools)
        system = session.config.system
    finally:
        await session.aclose()
        server.close()
    if compact:
        assert offered == [*CORE_TOOLS, "TodoWrite"]
        assert "untracked_29.txt" not in system and "more (git status shows them)" in system
        assert schema_prompt_tokens(system, specs(session.tools)) <= 1_500
    else:
        assert len(offered) > 10 and "untracked_29.txt" in system


async def test_the_setting_chooses_and_a_bad_value_is_refused(tmp_path: Path) -> None:
    (tmp_path / "home" / ".claude").mkdir(parents=True)
    settings = tmp_path / "home" / ".claude" / "settings.json"
    settings.write_text(json.dumps({"compactProfile": "on"}))
    session, server = await build(tmp_path)
    try:
        assert list(session.tools)[: len(CORE_TOOLS)] == list(CORE_TOOLS)
    finally:
        await session.aclose()
        server.close()
    (tmp_path / "again").mkdir()
    with pytest.raises(UsageError, match="on, off, auto"):
        await build(tmp_path / "again", compact_profile="small")


def test_the_compact_overhead_leaves_an_8k_window_room() -> None:
    """The bundled model's window with the local rendering of the compact profile."""
    tools = specs(compact_tools(default_tools(), lambda s: schema_prompt_tokens("", s)))
    model = LocalModel(Path("m.gguf"))
    try:
        overhead = prompt_tokens(model, "x" * 4_000, tools)  # a generous system prompt
    finally:
        asyncio.run(model.aclose())
    assert Shares(context_limits("smollm2-135m-instruct", {}), overhead).too_small() is None


__all__ = ["git"]


def test_a_bad_setting_is_named_and_dropped(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, cli=json.dumps({"compactProfile": "tiny"}), env={})
    assert settings.compact_profile is None
    (warning,) = settings.warnings
    assert "compactProfile" in warning and "on, off, auto" in warning
