"""Read, Write and Edit on real files: output formats, every refusal, read-before-write."""

from __future__ import annotations

import base64
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from codeloop.tools.base import (
    AnyTool,
    ToolContext,
    ToolInputError,
    ToolResult,
    Workspace,
)
from codeloop.tools.files_read import INLINE_READ_BYTES, MAX_IMAGE_BYTES, ReadTool
from codeloop.tools.files_write import EditTool, WriteTool
from codeloop.types import ImageBlock, TextBlock
from codeloop.workspace.file_stamp import stamp_of
from codeloop.workspace.tool_workspace import ResultLimits

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(13)
JPEG = b"\xff\xd8\xff\xe0" + bytes(20)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(Workspace(cwd=tmp_path))


async def run(tool: AnyTool, ctx: ToolContext, **raw: Any) -> ToolResult:
    return await tool.call(tool.parse(raw), ctx)


def text_of(result: ToolResult) -> str:
    assert isinstance(result.content, str)
    return result.content


async def read(ctx: ToolContext, path: Path | str, **raw: Any) -> ToolResult:
    return await run(ReadTool(), ctx, file_path=str(path), **raw)


async def edit(ctx: ToolContext, path: Path, old: str, new: str, **raw: Any) -> ToolResult:
    return await run(EditTool(), ctx, file_path=str(path), old_string=old, new_string=new, **raw)


def bump_mtime(path: Path) -> None:
    """Change the file behind the session's back, with a surely different mtime."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


# --- schemas ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "name", "fields", "required"),
    [
        (ReadTool(), "Read", ["file_path", "offset", "limit"], ["file_path"]),
        (WriteTool(), "Write", ["file_path", "content"], ["file_path", "content"]),
        (
            EditTool(),
            "Edit",
            ["file_path", "old_string", "new_string", "replace_all"],
            ["file_path", "old_string", "new_string"],
        ),
    ],
)
def test_schema_matches_claude_code(
    tool: AnyTool, name: str, fields: list[str], required: list[str]
) -> None:
    spec = tool.spec()
    assert spec.name == name
    assert list(spec.input_schema["properties"]) == fields
    assert spec.input_schema["required"] == required
    assert spec.input_schema["additionalProperties"] is False
    assert all(p["description"] for p in spec.input_schema["properties"].values())
    assert spec.description


def test_types_and_read_only() -> None:
    props = ReadTool().spec().input_schema["properties"]
    assert props["offset"]["type"] == props["limit"]["type"] == "integer"
    edit_props = EditTool().spec().input_schema["properties"]
    assert edit_props["replace_all"]["type"] == "boolean"
    read_args = ReadTool().parse({"file_path": "a"})
    assert ReadTool().is_read_only(read_args) and ReadTool().is_concurrency_safe(read_args)
    assert not WriteTool().is_read_only(WriteTool().parse({"file_path": "a", "content": ""}))
    edit_args = EditTool().parse({"file_path": "a", "old_string": "x", "new_string": "y"})
    assert not EditTool().is_read_only(edit_args)


def test_null_means_omitted_and_unknown_fields_are_refused() -> None:
    args = ReadTool().parse({"file_path": "a", "offset": None, "limit": None})
    assert (args.offset, args.limit) == (1, 2000)
    assert args == ReadTool().parse({"file_path": "a"})
    edit_args = EditTool().parse(
        {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": None}
    )
    assert edit_args.replace_all is False
    with pytest.raises(ToolInputError, match="file_path"):
        ReadTool().parse({"file_path": None})
    with pytest.raises(ToolInputError, match="path"):
        ReadTool().parse({"path": "a"})
    with pytest.raises(ToolInputError, match="limit"):
        ReadTool().parse({"file_path": "a", "limit": 0})


# --- Read ----------------------------------------------------------------------------------------


async def test_read_numbers_lines_like_cat_n_and_records_the_read(
    ctx: ToolContext, tmp_path: Path
) -> None:
    f = tmp_path / "a.py"
    f.write_text("one\n\ttwo\n\nfour")
    result = await read(ctx, "a.py")  # relative to the workspace cwd
    assert not result.is_error
    assert text_of(result) == "     1\tone\n     2\t\ttwo\n     3\t\n     4\tfour"
    assert ctx.workspace.read_files == {f: stamp_of(f.read_bytes(), f.stat().st_mtime_ns)}


async def test_read_strips_crlf_and_replaces_bad_utf8(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "w.txt"
    f.write_bytes(b"caf\xe9\r\nok\r\n")
    assert text_of(await read(ctx, f)) == "     1\tcaf\ufffd\n     2\tok"


async def test_read_range_says_how_to_read_on(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "ten.txt"
    f.write_text("".join(f"line {i}\n" for i in range(1, 11)))
    out = text_of(await read(ctx, f, offset=3, limit=2))
    assert out == (
        "     3\tline 3\n     4\tline 4\n\n(Showing lines 3-4 of 10. Use offset=5 limit=2 to read "
        "more.)"
    )
    assert f in ctx.workspace.read_files  # a partial read still permits an edit
    tail = text_of(await read(ctx, f, offset=9, limit=5))
    assert tail == "     9\tline 9\n    10\tline 10"
    assert text_of(await read(ctx, f, offset=0, limit=1)).startswith("     1\tline 1\n")


async def test_read_counts_a_last_line_without_newline(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "t.txt"
    f.write_text("a\nb\nc")
    assert "(Showing lines 1-1 of 3. Use offset=2" in text_of(await read(ctx, f, limit=1))


async def test_read_offset_past_the_end(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "short.txt"
    f.write_text("a\nb\n")
    result = await read(ctx, f, offset=50)
    assert not result.is_error
    assert "shorter than the provided offset (50)" in text_of(result)
    assert "has 2 lines" in text_of(result)


async def test_read_default_limit_is_2000_lines(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "many.txt"
    f.write_text("x\n" * 2500)
    out = text_of(await read(ctx, f))
    assert out.count("\n") == 1999 + 2
    assert "  2000\tx\n\n(Showing lines 1-2000 of 2500. Use offset=2001 limit=2000 to read" in out


async def test_read_cuts_long_lines_with_a_marker(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "min.js"
    f.write_text("a" * 5000 + "\nshort\n")
    first, second = text_of(await read(ctx, f)).split("\n")
    assert first == "     1\t" + "a" * 2000 + "... [line cut: 3000 more characters]"
    assert second == "     2\tshort"


async def test_read_empty_file(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "empty.txt"
    f.touch()
    result = await read(ctx, f)
    assert not result.is_error
    assert "<system-reminder>" in text_of(result) and "empty" in text_of(result)
    assert f in ctx.workspace.read_files


async def test_read_missing_file_suggests_similar_names(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("a: 1\n")
    result = await read(ctx, "config.yml")
    assert result.is_error
    message = text_of(result)
    assert f"File does not exist: {tmp_path / 'config.yml'}" in message
    assert f"Did you mean {tmp_path / 'config.yaml'}?" in message
    assert f"Current working directory: {tmp_path}" in message
    assert not ctx.workspace.read_files
    nowhere = text_of(await read(ctx, "no/such/dir/x.py"))
    assert "does not exist either" in nowhere


async def test_read_directory_points_to_ls_and_glob(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    result = await read(ctx, "pkg")
    assert result.is_error
    assert "directory" in text_of(result) and "ls" in text_of(result)
    assert "Glob" in text_of(result)


async def test_read_refuses_binary_files(ctx: ToolContext, tmp_path: Path) -> None:
    blob = tmp_path / "data.dat"
    blob.write_bytes(b"header\x00\x01\x02" + b"x" * 100)
    result = await read(ctx, blob)
    assert result.is_error
    assert "binary" in text_of(result) and "109 bytes" in text_of(result)
    pdf = tmp_path / "doc.pdf"
    pdf.write_text("%PDF-1.4 looks like text")
    assert "binary" in text_of(await read(ctx, pdf))
    assert not ctx.workspace.read_files


async def test_read_image_returns_an_image_block(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "shot.png"
    f.write_bytes(PNG)
    result = await read(ctx, f)
    assert not result.is_error
    assert isinstance(result.content, tuple)
    image, note = result.content
    assert isinstance(image, ImageBlock) and isinstance(note, TextBlock)
    assert image.media_type == "image/png"
    assert base64.b64decode(image.data) == PNG
    assert str(f) in note.text
    assert f in ctx.workspace.read_files


async def test_read_image_type_comes_from_the_bytes(ctx: ToolContext, tmp_path: Path) -> None:
    mislabelled = tmp_path / "photo.png"
    mislabelled.write_bytes(JPEG)
    content = (await read(ctx, mislabelled)).content
    assert isinstance(content, tuple) and isinstance(content[0], ImageBlock)
    assert content[0].media_type == "image/jpeg"
    fake = tmp_path / "fake.webp"
    fake.write_text("not an image")
    result = await read(ctx, fake)
    assert result.is_error and "not a PNG, JPEG, GIF or WebP" in text_of(result)


async def test_read_refuses_images_over_the_cap(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "huge.png"
    with f.open("wb") as out:
        out.write(PNG)
        out.truncate(MAX_IMAGE_BYTES + 1)
    result = await read(ctx, f)
    assert result.is_error and "3.75 MB" in text_of(result)


async def test_a_big_file_comes_as_its_first_page(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "big.log"
    f.write_text("".join(f"entry {i:07d}\n" for i in range(30_000)))  # 420 KB
    first = text_of(await read(ctx, f))
    assert first.startswith("     1\tentry 0000000\n")
    cap = ctx.workspace.result_limits.result_tokens
    assert len(first) <= cap * 4
    assert first.endswith(
        "(Showing lines 1-2000 of 30000. Use offset=2001 limit=2000 to read more.)"
    )
    assert f in ctx.workspace.read_files  # a page is a read too
    part = text_of(await read(ctx, f, offset=29_999, limit=10))
    assert part == " 29999\tentry 0029998\n 30000\tentry 0029999"


async def test_read_output_stays_under_the_result_cap(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "wide.txt"
    f.write_text("".join(f"{i:04d}" + "y" * 996 + "\n" for i in range(1, 301)))  # 300 KB
    out = text_of(await read(ctx, f, offset=1))
    assert len(out) <= ctx.workspace.result_limits.result_tokens * 4
    shown = out.split("\n\n(Showing lines 1-")[1]
    last = int(shown.split(" ")[0])
    assert 50 < last < 300 and "of 300: more would pass" in out
    assert f"Use offset={last + 1} limit={last} to read more" in out
    more = text_of(await read(ctx, f, offset=last + 1, limit=1))
    assert more.startswith(f"{last + 1:>6}\t{last + 1:04d}y")


async def test_a_small_window_gets_smaller_pages(tmp_path: Path) -> None:
    f = tmp_path / "mod.py"
    f.write_text("".join(f"value_{i} = compute({i})\n" for i in range(2_000)))
    small = ToolContext(Workspace(cwd=tmp_path, result_limits=ResultLimits(2_000, 4_000)))
    out = text_of(await read(small, f))
    assert len(out) <= 2_000 * 4 and "Use offset=" in out
    whole = ToolContext(Workspace(cwd=tmp_path))
    assert "Use offset=" not in text_of(await read(whole, f))


async def test_a_file_with_wide_characters_is_measured_in_tokens(tmp_path: Path) -> None:
    f = tmp_path / "zh.txt"
    f.write_text("上下文管理很重要\n" * 3_000)
    small = ToolContext(Workspace(cwd=tmp_path, result_limits=ResultLimits(2_000, 4_000)))
    out = text_of(await read(small, f))
    from codeloop.text import estimate_text

    assert estimate_text(out) <= 2_000 and "Use offset=" in out


async def test_small_and_big_files_page_alike(ctx: ToolContext, tmp_path: Path) -> None:
    """A small file is read on the event loop, a big one in a thread: the same pages."""
    line = "x" * 99 + "\n"
    pages = []
    for size in (INLINE_READ_BYTES // 2, INLINE_READ_BYTES * 2):
        f = tmp_path / f"{size}.txt"
        f.write_text(line * (size // len(line)))
        pages.append(text_of(await read(ctx, f, offset=1000, limit=3)))
    lines = size // len(line)
    assert pages[0].replace(f"of {INLINE_READ_BYTES // 2 // 100}", f"of {lines}") == pages[1]
    assert pages[1].startswith(f"  1000\t{line}") and f"1000-1002 of {lines}" in pages[1]


@pytest.mark.parametrize("block", [1, 10, 64 * 1024])
async def test_lines_decoded_by_the_block_read_as_line_by_line(
    ctx: ToolContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    """Invalid or cut UTF-8 at a line's end, CRLF, wide characters, a lone CR: each line as
    its own decode would give it, whatever the block boundaries, and a range starts where
    asked."""
    monkeypatch.setattr("codeloop.tools.files_read.READ_BLOCK_BYTES", block)
    raw = [
        b"caf\xe9",
        b"\xe2\x82",
        "\u4e2d\u6587 \U0001f600".encode(),
        b"a\rb",
        b"",
        b"\xf0\x9f",
        b"end",
    ]
    f = tmp_path / "mixed.txt"
    f.write_bytes(b"\r\n".join(raw) + b"\n")
    shown = [line.decode("utf-8", "replace") for line in raw]
    expected = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(shown, 1))
    assert text_of(await read(ctx, f)) == expected
    page = text_of(await read(ctx, f, offset=2, limit=3))
    assert page.startswith("\n".join(expected.split("\n")[1:4]) + "\n\n(Showing lines 2-4 of 7.")


# --- Write ---------------------------------------------------------------------------------------


async def test_write_creates_a_file_and_its_directories(ctx: ToolContext, tmp_path: Path) -> None:
    result = await run(WriteTool(), ctx, file_path="src/new/mod.py", content="a = 1\nb = 2\n")
    f = tmp_path / "src/new/mod.py"
    assert not result.is_error and text_of(result).startswith(f"Created {f}")
    assert "2 lines" in text_of(result)
    assert f.read_text() == "a = 1\nb = 2\n"
    assert ctx.workspace.read_files[f] == stamp_of(f.read_bytes(), f.stat().st_mtime_ns)
    assert os.listdir(f.parent) == ["mod.py"]  # no temp file left


async def test_write_new_file_gets_umask_permissions(ctx: ToolContext, tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        await run(WriteTool(), ctx, file_path="x.txt", content="x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "x.txt").stat().st_mode) == 0o640


async def test_write_over_an_unread_file_is_refused(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "keep.txt"
    f.write_text("precious\n")
    result = await run(WriteTool(), ctx, file_path=str(f), content="gone\n")
    assert result.is_error and "has not been read" in text_of(result)
    assert "Read it first" in text_of(result)
    assert f.read_text() == "precious\n"


async def test_write_after_read_updates_and_keeps_the_mode(
    ctx: ToolContext, tmp_path: Path
) -> None:
    f = tmp_path / "run.sh"
    f.write_text("echo old\n")
    f.chmod(0o751)
    await read(ctx, f)
    result = await run(WriteTool(), ctx, file_path=str(f), content="echo new\r\n")
    assert not result.is_error and text_of(result).startswith(f"Updated {f}")
    assert f.read_bytes() == b"echo new\r\n"  # written exactly as given
    assert stat.S_IMODE(f.stat().st_mode) == 0o751
    again = await run(WriteTool(), ctx, file_path=str(f), content="echo third\n")
    assert not again.is_error  # its own write counts as the latest read


async def test_write_over_a_file_changed_since_read(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("v1\n")
    await read(ctx, f)
    f.write_text("v2 by the user\n")
    bump_mtime(f)
    result = await run(WriteTool(), ctx, file_path=str(f), content="v3\n")
    assert result.is_error and "changed on disk since you last read it" in text_of(result)
    assert f.read_text() == "v2 by the user\n"


async def test_write_to_a_directory_is_refused(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    result = await run(WriteTool(), ctx, file_path="d", content="x")
    assert result.is_error and "is a directory" in text_of(result)


async def test_write_through_a_symlink_keeps_the_link(ctx: ToolContext, tmp_path: Path) -> None:
    target = tmp_path / "real.txt"
    target.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    await read(ctx, link)
    assert not (await run(WriteTool(), ctx, file_path=str(link), content="new\n")).is_error
    assert link.is_symlink() and target.read_text() == "new\n"


async def test_failed_write_leaves_the_original_whole(
    ctx: ToolContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "a.txt"
    f.write_text("original\n")
    await read(ctx, f)

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    result = await run(WriteTool(), ctx, file_path=str(f), content="new\n" * 1000)
    assert result.is_error and "No space left on device" in text_of(result)
    assert f.read_text() == "original\n"
    assert os.listdir(tmp_path) == ["a.txt"]  # the temp file is gone


# --- Edit ----------------------------------------------------------------------------------------


async def test_edit_replaces_once_and_shows_the_region(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("".join(f"line{i}\n" for i in range(1, 11)))
    await read(ctx, f)
    result = await edit(ctx, f, "line5\n", "five\nfive and a half\n")
    assert not result.is_error
    assert f.read_text().splitlines()[3:7] == ["line4", "five", "five and a half", "line6"]
    out = text_of(result)
    assert out.startswith(f"Edited {f} (1 replacement).")
    assert "     5\tfive\n     6\tfive and a half\n" in out
    assert "     2\tline2" in out and "     1\t" not in out  # three lines of context
    assert ctx.workspace.read_files[f] == stamp_of(f.read_bytes(), f.stat().st_mtime_ns)
    assert not (await edit(ctx, f, "line9", "nine")).is_error  # no re-read needed


async def test_edit_unread_file_is_refused(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("x = 1\n")
    result = await edit(ctx, f, "1", "2")
    assert result.is_error and "Read it first" in text_of(result)
    assert f.read_text() == "x = 1\n"


async def test_edit_file_changed_since_read(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("x = 1\n")
    await read(ctx, f)
    f.write_text("x = 1  # formatted\n")
    bump_mtime(f)
    result = await edit(ctx, f, "x = 1", "x = 2")
    assert result.is_error and "Read it again" in text_of(result)
    assert f.read_text() == "x = 1  # formatted\n"


async def test_edit_not_found_hints_at_whitespace(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.py"
    f.write_text("def f():\n\tif x:\n\t\treturn 1\n")
    await read(ctx, f)
    result = await edit(ctx, f, "    if x:\n        return 1", "    return 2")
    message = text_of(result)
    assert result.is_error and "old_string was not found" in message
    assert "Ignoring whitespace, it matches lines 2-3" in message
    assert "     2\t\tif x:\n     3\t\t\treturn 1" in message
    plain = text_of(await edit(ctx, f, "return 3", "return 4"))
    assert "not found" in plain and "Ignoring whitespace" not in plain


async def test_edit_not_found_hints_at_line_number_prefixes(
    ctx: ToolContext, tmp_path: Path
) -> None:
    f = tmp_path / "a.py"
    f.write_text("a = 1\nb = 2\n")
    await read(ctx, f)
    result = await edit(ctx, f, "     1\ta = 1\n     2\tb = 2", "c = 3")
    assert result.is_error and "line-number prefixes" in text_of(result)


async def test_edit_several_matches_need_replace_all(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.py"
    f.write_text("x = 1\ny = x\nz = x + x\n")
    await read(ctx, f)
    result = await edit(ctx, f, "x", "w")
    message = text_of(result)
    assert result.is_error
    assert "occurs 4 times" in message and "lines 1, 2, 3, 3" in message
    assert "replace_all" in message
    assert f.read_text() == "x = 1\ny = x\nz = x + x\n"
    done = await edit(ctx, f, "x", "w", replace_all=True)
    assert not done.is_error and "(4 replacements)" in text_of(done)
    assert f.read_text() == "w = 1\ny = w\nz = w + w\n"


async def test_edit_same_strings_is_refused(ctx: ToolContext, tmp_path: Path) -> None:
    result = await edit(ctx, tmp_path / "any.txt", "a", "a")
    assert result.is_error and "the same" in text_of(result)


async def test_edit_missing_file(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "utils.py").write_text("")
    result = await edit(ctx, tmp_path / "util.py", "a", "b")
    assert result.is_error and "does not exist" in text_of(result)
    assert "Did you mean" in text_of(result) and "utils.py" in text_of(result)


async def test_edit_with_empty_old_string_creates_a_file(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "pkg" / "new.py"
    result = await edit(ctx, f, "", "print('hi')\n")
    assert not result.is_error and "Created" in text_of(result)
    assert f.read_text() == "print('hi')\n"
    assert not (await edit(ctx, f, "hi", "hello")).is_error  # creating counts as reading


async def test_edit_empty_old_string_on_existing_file(ctx: ToolContext, tmp_path: Path) -> None:
    full = tmp_path / "full.txt"
    full.write_text("content\n")
    await read(ctx, full)
    result = await edit(ctx, full, "", "more")
    assert result.is_error and "already has content" in text_of(result)
    empty = tmp_path / "empty.txt"
    empty.touch()
    await read(ctx, empty)
    assert not (await edit(ctx, empty, "", "filled\n")).is_error
    assert empty.read_text() == "filled\n"


async def test_edit_refuses_binary_files(ctx: ToolContext, tmp_path: Path) -> None:
    blob = tmp_path / "blob.txt"
    blob.write_bytes(b"abc\x00def")
    ctx.workspace.read_files[blob] = stamp_of(blob.read_bytes(), blob.stat().st_mtime_ns)
    result = await edit(ctx, blob, "abc", "xyz")
    assert result.is_error and "binary" in text_of(result)
    assert blob.read_bytes() == b"abc\x00def"
    image = tmp_path / "a.png"
    image.write_bytes(PNG)
    assert "binary" in text_of(await edit(ctx, image, "PNG", "GIF"))


async def test_edit_keeps_crlf_line_endings(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "win.txt"
    f.write_bytes(b"alpha\r\nbeta\r\ngamma\r\n")
    await read(ctx, f)
    assert not (await edit(ctx, f, "alpha\nbeta", "one\ntwo\nthree")).is_error
    assert f.read_bytes() == b"one\r\ntwo\r\nthree\r\ngamma\r\n"
    assert not (await edit(ctx, f, "gamma", "gamma\ndelta")).is_error
    assert f.read_bytes() == b"one\r\ntwo\r\nthree\r\ngamma\r\ndelta\r\n"


async def test_edit_leaves_lf_files_and_foreign_bytes_alone(
    ctx: ToolContext, tmp_path: Path
) -> None:
    f = tmp_path / "latin1.txt"
    f.write_bytes(b"caf\xe9\nx = 1\n")
    f.chmod(0o640)
    await read(ctx, f)
    assert not (await edit(ctx, f, "x = 1\n", "x = 2\ny = 3\n")).is_error
    assert f.read_bytes() == b"caf\xe9\nx = 2\ny = 3\n"
    assert stat.S_IMODE(f.stat().st_mode) == 0o640


async def test_edit_can_delete_text(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("keep\ndrop\nkeep too\n")
    await read(ctx, f)
    result = await edit(ctx, f, "drop\n", "")
    assert not result.is_error
    assert f.read_text() == "keep\nkeep too\n"
    assert "     2\tkeep too" in text_of(result)


async def test_edit_snippet_of_a_big_insertion_is_bounded(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("start\nend\n")
    await read(ctx, f)
    result = await edit(ctx, f, "start\n", "start\n" + "".join(f"n{i}\n" for i in range(500)))
    out = text_of(result)
    assert "Lines 1-40 now read:" in out and out.endswith("\n   ...")
    assert f.read_text().count("\n") == 502
