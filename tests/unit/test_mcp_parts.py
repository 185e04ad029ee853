"""The MCP pieces that need no server: result conversion, tool search, prompt arguments."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from mcp import types
from pydantic import AnyUrl

from codeloop.mcp.prompts import PromptError, _arguments, is_command
from codeloop.mcp.tool_search import SearchMode, ToolSearchTool, find, one_line, search_mode
from codeloop.mcp.tools import convert_result
from codeloop.models.base import ToolSpec
from codeloop.tools.base import ToolContext, ToolInputError, Workspace
from codeloop.types import ImageBlock, TextBlock

PNG = base64.b64encode(b"\x89PNG fake").decode()


def test_text_results_stay_text_and_errors_stay_errors() -> None:
    content = [types.TextContent(type="text", text="a"), types.TextContent(type="text", text="b")]
    result = convert_result(content, None, True, "t")
    assert result.content == "a\nb" and result.is_error


def test_images_and_embedded_resources_reach_the_model() -> None:
    content = [
        types.TextContent(type="text", text="look"),
        types.ImageContent(type="image", data=PNG, mimeType="image/png"),
        types.EmbeddedResource(
            type="resource",
            resource=types.TextResourceContents(
                uri=AnyUrl("file:///a.txt"), text="inside", mimeType=None
            ),
        ),
        types.EmbeddedResource(
            type="resource",
            resource=types.BlobResourceContents(
                uri=AnyUrl("file:///b.bin"), blob=base64.b64encode(b"12345").decode(), mimeType=None
            ),
        ),
        types.ResourceLink(type="resource_link", uri=AnyUrl("file:///c.md"), name="c.md"),
    ]
    result = convert_result(content, None, False, "t")
    assert isinstance(result.content, tuple)
    kinds = [type(b) for b in result.content]
    assert kinds == [TextBlock, ImageBlock, TextBlock, TextBlock, TextBlock]
    texts = [b.text for b in result.content if isinstance(b, TextBlock)]
    assert texts[1] == "[resource file:///a.txt]\ninside"
    assert "5 bytes of binary data" in texts[2]
    assert "file:///c.md" in texts[3] and "ReadMcpResourceTool" in texts[3]


def test_structured_only_and_empty_results() -> None:
    assert convert_result([], {"temp": 21}, False, "t").content == '{\n  "temp": 21\n}'
    assert convert_result([], None, False, "mcp__s__t").content == "mcp__s__t returned no content."


def spec(name: str, description: str) -> ToolSpec:
    return ToolSpec(name, description, {"type": "object", "properties": {"q": {"type": "string"}}})


SPECS = [
    spec("mcp__gh__create_issue", "Create an issue in a GitHub repository"),
    spec("mcp__gh__list_pulls", "List pull requests"),
    spec("mcp__db__query", "Run a read-only SQL query against the issue tracker database"),
]


def test_find_by_words_ranks_names_first() -> None:
    assert [s.name for s in find(SPECS, "issue", 5)] == [
        "mcp__gh__create_issue",
        "mcp__db__query",
    ]
    assert find(SPECS, "nothing matches", 5) == []
    assert [s.name for s in find(SPECS, "issue", 1)] == ["mcp__gh__create_issue"]


def test_find_by_selection_takes_full_or_short_names() -> None:
    picked = find(SPECS, "select:query, mcp__gh__list_pulls, missing", 5)
    assert [s.name for s in picked] == ["mcp__db__query", "mcp__gh__list_pulls"]


async def test_the_search_tool_loads_what_it_finds() -> None:
    loaded: list[str] = []
    tool = ToolSearchTool(lambda: SPECS, loaded.extend)
    assert "- mcp__gh__list_pulls: List pull requests" in tool.spec().description
    with pytest.raises(ToolInputError):
        tool.parse({"query": " "})
    result = await tool.call(tool.parse({"query": "pull"}), ToolContext(Workspace(Path("."))))
    assert loaded == ["mcp__gh__list_pulls"] and '"input_schema"' in str(result.content)


def test_search_modes_and_the_threshold() -> None:
    assert search_mode({}) == SearchMode(0.10)
    assert search_mode({"ENABLE_TOOL_SEARCH": "auto:5"}) == SearchMode(0.05)
    assert search_mode({"ENABLE_TOOL_SEARCH": "true"}).share == 0.0
    assert search_mode({"ENABLE_TOOL_SEARCH": "false"}).share is None
    warnings: list[str] = []
    assert search_mode({"ENABLE_TOOL_SEARCH": "sometimes"}, warnings) == SearchMode()
    assert warnings and "ENABLE_TOOL_SEARCH" in warnings[0]
    many = [spec(f"mcp__s__t{i}", "x" * 400) for i in range(100)]  # ~11K tokens
    assert SearchMode(0.10).defers(many, 100_000) and not SearchMode(0.10).defers(many, 200_000)
    assert not SearchMode(None).defers(many, 1_000) and not SearchMode(0.0).defers([], 1_000)


def test_one_line_descriptions() -> None:
    assert one_line("\n  First line.\nSecond.") == "First line."
    assert len(one_line("w" * 500)) == 120


def prompt(*args: tuple[str, bool]) -> types.Prompt:
    return types.Prompt(
        name="review",
        arguments=[types.PromptArgument(name=n, required=r) for n, r in args],
    )


def test_prompt_arguments_fill_in_order_with_quotes() -> None:
    p = prompt(("file", True), ("focus", False))
    assert _arguments("c", p, '"my file.py" security') == {
        "file": "my file.py",
        "focus": "security",
    }
    assert _arguments("c", p, "a.py") == {"file": "a.py"}
    with pytest.raises(PromptError, match=r"needs file: /c file \[focus\]"):
        _arguments("c", p, "")
    with pytest.raises(PromptError, match="takes file focus; got 3"):
        _arguments("c", p, "a b c")
    with pytest.raises(PromptError, match="No closing quotation"):
        _arguments("c", p, '"open')


def test_what_counts_as_a_prompt_command() -> None:
    assert is_command("/mcp__srv__review a b") and is_command("  /mcp__my-srv__p\n")
    assert not is_command("please run /mcp__srv__review") and not is_command("/help")
