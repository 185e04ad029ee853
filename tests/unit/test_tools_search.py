"""Grep and Glob with the real ripgrep, on a real git repository with a .gitignore."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from codeloop.store.data_paths import VCS_DIRS
from codeloop.tools.base import AnyTool, ToolContext, ToolResult, Workspace
from codeloop.tools.search import GlobTool, GrepTool

FILES = {
    ".gitignore": "ignored/\n*.log\n",
    "src/app.py": "def hello():\n    return 'Hello World'\n",
    "src/util.py": "import os\n\n\ndef helper():\n    pass\n",
    "README.md": "hello readme\n",
    "letters.txt": "".join(f"{c}\n" for c in "abcdefghij"),
    "ignored/secret.py": "hello from an ignored dir\n",
    "debug.log": "hello from an ignored file\n",
    ".github/ci.yml": "hello: hidden\n",
    ".git/marker.py": "hello from git internals\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for i, (name, text) in enumerate(FILES.items()):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (1_000_000 + i, 1_000_000 + i))  # later in FILES = newer
    return root


@pytest.fixture
def ctx(repo: Path) -> ToolContext:
    return ToolContext(Workspace(cwd=repo))


async def run(tool: AnyTool, ctx: ToolContext, **raw: Any) -> ToolResult:
    return await tool.call(tool.parse(raw), ctx)


async def grep(ctx: ToolContext, pattern: str, **raw: Any) -> ToolResult:
    return await run(GrepTool(), ctx, pattern=pattern, **raw)


async def glob(ctx: ToolContext, pattern: str, **raw: Any) -> ToolResult:
    return await run(GlobTool(), ctx, pattern=pattern, **raw)


def lines_of(result: ToolResult) -> list[str]:
    assert isinstance(result.content, str)
    assert not result.is_error, result.content
    return result.content.split("\n")


def set_mtime(path: Path, seconds: int) -> None:
    os.utime(path, (seconds, seconds))


# --- schemas ------------------------------------------------------------------------------------


def test_grep_schema_has_claude_code_fields() -> None:
    schema = GrepTool().spec().input_schema
    assert set(schema["properties"]) == {
        "pattern",
        "path",
        "glob",
        "type",
        "output_mode",
        "-i",
        "-n",
        "-A",
        "-B",
        "-C",
        "head_limit",
        "offset",
        "multiline",
    }
    assert schema["required"] == ["pattern"]
    assert schema["properties"]["output_mode"]["enum"] == [
        "content",
        "files_with_matches",
        "count",
    ]
    assert schema["properties"]["output_mode"]["default"] == "files_with_matches"


def test_glob_schema_has_claude_code_fields() -> None:
    schema = GlobTool().spec().input_schema
    assert set(schema["properties"]) == {"pattern", "path"}
    assert schema["required"] == ["pattern"]


def test_dashed_fields_parse_and_search_tools_are_read_only() -> None:
    args = GrepTool().parse({"pattern": "x", "-i": True, "-n": False, "-A": 1, "-B": 2, "-C": 3})
    assert (args.ignore_case, args.line_numbers, args.after, args.before, args.context) == (
        True,
        False,
        1,
        2,
        3,
    )
    assert GrepTool().is_read_only(args)
    assert GlobTool().is_read_only(GlobTool().parse({"pattern": "*"}))


# --- Grep ---------------------------------------------------------------------------------------


async def test_files_with_matches_newest_first_and_gitignore(ctx: ToolContext) -> None:
    # Ignored files, ignored dirs and .git internals are skipped; hidden files are searched.
    assert lines_of(await grep(ctx, "hello")) == [
        "Found 3 files",
        ".github/ci.yml",
        "README.md",
        "src/app.py",
    ]


async def test_mtime_order_follows_the_files(ctx: ToolContext, repo: Path) -> None:
    set_mtime(repo / "src/app.py", 9_000_000)
    assert lines_of(await grep(ctx, "hello"))[1] == "src/app.py"


async def test_content_mode_with_and_without_line_numbers(ctx: ToolContext) -> None:
    result = await grep(ctx, "def ", output_mode="content")
    assert lines_of(result) == ["src/app.py:1:def hello():", "src/util.py:4:def helper():"]
    result = await grep(ctx, "def ", output_mode="content", **{"-n": False})
    assert lines_of(result) == ["src/app.py:def hello():", "src/util.py:def helper():"]


async def test_count_mode(ctx: ToolContext) -> None:
    assert lines_of(await grep(ctx, "e", output_mode="count", path="src")) == [
        "src/app.py:2",
        "src/util.py:1",
    ]


async def test_ignore_case(ctx: ToolContext) -> None:
    assert lines_of(await grep(ctx, "HELLO WORLD")) == ["No files found"]
    assert lines_of(await grep(ctx, "HELLO WORLD", **{"-i": True})) == [
        "Found 1 file",
        "src/app.py",
    ]


@pytest.mark.parametrize(
    ("context", "expected"),
    [
        ({"-A": 1}, ["5:e", "6-f"]),
        ({"-B": 1}, ["4-d", "5:e"]),
        ({"-C": 1}, ["4-d", "5:e", "6-f"]),
        ({"-C": 2, "-A": 0}, ["3-c", "4-d", "5:e"]),
    ],
)
async def test_context_lines(
    ctx: ToolContext, context: dict[str, int], expected: list[str]
) -> None:
    result = await grep(ctx, "^e$", path="letters.txt", output_mode="content", **context)
    assert lines_of(result) == expected


async def test_glob_and_type_filters(ctx: ToolContext) -> None:
    assert lines_of(await grep(ctx, "hello", glob="*.md")) == ["Found 1 file", "README.md"]
    assert lines_of(await grep(ctx, "hello", glob="*.md *.yml"))[0] == "Found 2 files"
    assert lines_of(await grep(ctx, "hello", glob="*.{md,yml}"))[0] == "Found 2 files"
    assert lines_of(await grep(ctx, "hello", type="py")) == ["Found 1 file", "src/app.py"]


async def test_unknown_type_is_an_error(ctx: ToolContext) -> None:
    result = await grep(ctx, "hello", type="no-such-type")
    assert result.is_error and "unrecognized file type" in str(result.content)


async def test_multiline(ctx: ToolContext) -> None:
    pattern = r"hello\(\):.*return"
    assert lines_of(await grep(ctx, pattern)) == ["No files found"]
    assert lines_of(await grep(ctx, pattern, multiline=True)) == ["Found 1 file", "src/app.py"]


async def test_head_limit_and_offset_page_through_lines(ctx: ToolContext) -> None:
    first = lines_of(await grep(ctx, ".", path="letters.txt", output_mode="content", head_limit=3))
    assert first == ["1:a", "2:b", "3:c", "[Showing 1-3 of 10; offset=3 for more]"]
    page = await grep(ctx, ".", path="letters.txt", output_mode="content", head_limit=3, offset=3)
    assert lines_of(page) == ["4:d", "5:e", "6:f", "[Showing 4-6 of 10; offset=6 for more]"]
    last = await grep(ctx, ".", path="letters.txt", output_mode="content", offset=8)
    assert lines_of(last) == ["9:i", "10:j", "[Showing 9-10 of 10]"]


async def test_offset_past_the_end(ctx: ToolContext) -> None:
    result = await grep(ctx, "hello", offset=5)
    assert lines_of(result) == ["Found 3 files", "(offset 5 is past the last of 3 entries)"]


async def test_head_limit_applies_to_files(ctx: ToolContext) -> None:
    assert lines_of(await grep(ctx, "hello", head_limit=1)) == [
        "Found 3 files",
        ".github/ci.yml",
        "[Showing 1-1 of 3; offset=1 for more]",
    ]


async def test_no_matches(ctx: ToolContext) -> None:
    assert lines_of(await grep(ctx, "nothing-like-this")) == ["No files found"]
    result = await grep(ctx, "nothing-like-this", output_mode="content")
    assert lines_of(result) == ["No matches found"]


async def test_bad_regex_quotes_ripgrep(ctx: ToolContext) -> None:
    result = await grep(ctx, "(unclosed")
    assert result.is_error
    assert "regex parse error" in str(result.content) and "unclosed group" in str(result.content)


async def test_pattern_starting_with_a_dash(ctx: ToolContext, repo: Path) -> None:
    (repo / "flags.txt").write_text("use --verbose here\n")
    assert lines_of(await grep(ctx, "--verbose")) == ["Found 1 file", "flags.txt"]


async def test_missing_path(ctx: ToolContext) -> None:
    result = await grep(ctx, "hello", path="no/such/dir")
    assert result.is_error and "does not exist" in str(result.content)


async def test_paths_outside_cwd_are_absolute(ctx: ToolContext, repo: Path) -> None:
    ctx.workspace.cwd = repo / "src"
    assert lines_of(await grep(ctx, "hello", path=str(repo / "README.md"))) == [
        "Found 1 file",
        str(repo / "README.md"),
    ]
    assert lines_of(await grep(ctx, "hello")) == ["Found 1 file", "app.py"]


async def test_abort_stops_the_search(ctx: ToolContext) -> None:
    aborted = ToolContext(ctx.workspace, abort=asyncio.Event())
    aborted.abort.set()
    result = await grep(aborted, "hello")
    assert result.is_error and "Interrupted" in str(result.content)


@pytest.mark.parametrize("folder", VCS_DIRS)
async def test_no_version_control_folder_is_searched(
    ctx: ToolContext, repo: Path, folder: str
) -> None:
    (repo / folder).mkdir(exist_ok=True)
    (repo / folder / "inside.py").write_text("hello from the VCS's own files\n")
    assert lines_of(await grep(ctx, "VCS's own")) == ["No files found"]
    assert str(repo / folder) not in str((await glob(ctx, "**/*.py")).content)


# --- Glob ---------------------------------------------------------------------------------------


async def test_glob_absolute_paths_newest_first_respecting_gitignore(
    ctx: ToolContext, repo: Path
) -> None:
    assert lines_of(await glob(ctx, "**/*.py")) == [
        str(repo / "src/util.py"),
        str(repo / "src/app.py"),
    ]
    set_mtime(repo / "src/app.py", 9_000_000)
    assert lines_of(await glob(ctx, "**/*.py"))[0] == str(repo / "src/app.py")


async def test_glob_patterns(ctx: ToolContext, repo: Path) -> None:
    assert lines_of(await glob(ctx, "src/app.*")) == [str(repo / "src/app.py")]
    assert lines_of(await glob(ctx, "*.{md,txt}")) == [
        str(repo / "letters.txt"),
        str(repo / "README.md"),
    ]
    assert lines_of(await glob(ctx, ".github/*")) == [str(repo / ".github/ci.yml")]


async def test_glob_with_path_and_absolute_pattern(ctx: ToolContext, repo: Path) -> None:
    assert lines_of(await glob(ctx, "*.py", path="src")) == [
        str(repo / "src/util.py"),
        str(repo / "src/app.py"),
    ]
    assert lines_of(await glob(ctx, str(repo / "src" / "app.py"))) == [str(repo / "src/app.py")]


async def test_glob_truncates_at_100_newest(ctx: ToolContext, repo: Path) -> None:
    many = repo / "many"
    many.mkdir()
    for i in range(105):
        (many / f"f{i:03}.txt").touch()
        set_mtime(many / f"f{i:03}.txt", 2_000_000 + i)
    lines = lines_of(await glob(ctx, "many/*.txt"))
    assert len(lines) == 101
    assert lines[0] == str(many / "f104.txt")
    assert lines[99] == str(many / "f005.txt")
    assert "truncated" in lines[100] and "105" in lines[100]


async def test_glob_no_match_and_missing_path(ctx: ToolContext) -> None:
    assert lines_of(await glob(ctx, "**/*.rs")) == ["No files found"]
    result = await glob(ctx, "*", path="nowhere")
    assert result.is_error and "does not exist" in str(result.content)


async def test_glob_matching_an_ignored_directory_still_respects_gitignore(
    ctx: ToolContext, repo: Path
) -> None:
    # `*` also matches the directory `ignored/`, and rg lets a --glob override .gitignore
    found = lines_of(await glob(ctx, "*"))
    assert str(repo / "ignored/secret.py") not in found
    assert str(repo / "debug.log") not in found
    assert str(repo / "src/app.py") in found
    assert lines_of(await glob(ctx, "ignored/*")) == ["No files found"]


@pytest.mark.parametrize("globs", ["*", "**", "{ignored,src}/*", "*.{py,log}", "!*.md"])
async def test_grep_globs_respect_gitignore_as_glob_does(ctx: ToolContext, globs: str) -> None:
    # a --glob matching `ignored/` (or *.log) would override .gitignore for it
    found = lines_of(await grep(ctx, "hello", glob=globs))
    assert "ignored/secret.py" not in found and "debug.log" not in found
    assert "src/app.py" in found
    assert lines_of(await grep(ctx, "hello", glob="ignored/*")) == ["No files found"]


async def test_grep_globs_combine_as_rg_globs_do(ctx: ToolContext) -> None:
    found = lines_of(await grep(ctx, "hello", glob="* !*.py", output_mode="count"))
    assert sorted(found) == [".github/ci.yml:1", "README.md:1"]
    assert lines_of(await grep(ctx, "hello", glob="src/** !src/app.py")) == ["No files found"]
