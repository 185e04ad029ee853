"""Staleness by content: Write, Edit and NotebookEdit refuse a file that changed after the
session read it whatever its mtime says (`os.utime`, `touch -r`, `cp -p` keep it), and say
what changed; an unchanged file, and a file the session wrote itself, go through."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat import v4

from codeloop.tools.base import ToolContext, ToolResult, Workspace
from codeloop.tools.files_read import INLINE_READ_BYTES, READ_BLOCK_BYTES, ReadTool
from codeloop.tools.files_write import EditTool, WriteTool
from codeloop.tools.notebook import NotebookEditTool
from codeloop.workspace.file_stamp import stamp_of
from codeloop.workspace.tool_workspace import ResultLimits

ORIGINAL = b"x = 1\ny = 2\n"
SAME_SIZE = b"x = 9\ny = 2\n"  # the user's change, byte for byte as long
LONGER = b"x = 1  # the user's\ny = 2\n"


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(Workspace(cwd=tmp_path))


def text_of(result: ToolResult) -> str:
    assert isinstance(result.content, str)
    return result.content


async def run(tool: Any, ctx: ToolContext, **raw: Any) -> ToolResult:
    result: ToolResult = await tool.call(tool.parse(raw), ctx)
    return result


async def read(ctx: ToolContext, path: Path, **raw: Any) -> ToolResult:
    result = await run(ReadTool(), ctx, file_path=str(path), **raw)
    assert not result.is_error, result.content
    return result


async def write(ctx: ToolContext, path: Path) -> ToolResult:
    return await run(WriteTool(), ctx, file_path=str(path), content="y = 3\n")


async def edit(ctx: ToolContext, path: Path) -> ToolResult:
    return await run(EditTool(), ctx, file_path=str(path), old_string="y = 2", new_string="y = 3")


Writer = Callable[[ToolContext, Path], Awaitable[ToolResult]]
WRITERS = [pytest.param(write, id="Write"), pytest.param(edit, id="Edit")]


# How users and their tools change a file and keep its mtime.


def utime_kept(path: Path, data: bytes) -> None:
    """Rewritten, then its stamps put back with os.utime (sync tools, some editors)."""
    st = path.stat()
    path.write_bytes(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def touch_r(path: Path, data: bytes) -> None:
    """Rewritten, then `touch -r` from a file stamped like it before."""
    reference = path.with_name(path.name + ".stamp")
    subprocess.run(["touch", "-r", str(path), str(reference)], check=True)
    path.write_bytes(data)
    subprocess.run(["touch", "-r", str(reference), str(path)], check=True)


def cp_p(path: Path, data: bytes) -> None:
    """Replaced by `cp -p` from a copy that bears the original's mtime (a restored backup)."""
    copy = path.with_name(path.name + ".copy")
    copy.write_bytes(data)
    subprocess.run(["touch", "-r", str(path), str(copy)], check=True)
    subprocess.run(["cp", "-p", str(copy), str(path)], check=True)


CHANGERS = [utime_kept, touch_r, cp_p]


def change_keeping_mtime(change: Callable[[Path, bytes], None], path: Path, data: bytes) -> None:
    before = path.stat().st_mtime_ns
    change(path, data)
    assert path.stat().st_mtime_ns == before and path.read_bytes() == data


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("change", CHANGERS)
@pytest.mark.parametrize(
    ("new", "named"),
    [
        (SAME_SIZE, "content changed, mtime unchanged"),
        (LONGER, f"size {len(ORIGINAL)} → {len(LONGER)} bytes"),
    ],
    ids=["same size", "longer"],
)
async def test_a_change_that_kept_the_mtime_is_refused_and_named(
    ctx: ToolContext,
    tmp_path: Path,
    writer: Writer,
    change: Callable[[Path, bytes], None],
    new: bytes,
    named: str,
) -> None:
    f = tmp_path / "a.py"
    f.write_bytes(ORIGINAL)
    await read(ctx, f)
    change_keeping_mtime(change, f, new)
    result = await writer(ctx, f)
    assert result.is_error
    assert f"has changed on disk since you last read it ({named})" in text_of(result)
    assert "Read it again" in text_of(result)
    assert f.read_bytes() == new  # the user's change is still there
    await read(ctx, f)  # seen now: the change goes through
    assert not (await writer(ctx, f)).is_error
    assert b"y = 3" in f.read_bytes()


@pytest.mark.parametrize("writer", WRITERS)
async def test_a_change_with_a_new_mtime_at_the_same_size_is_named(
    ctx: ToolContext, tmp_path: Path, writer: Writer
) -> None:
    f = tmp_path / "a.py"
    f.write_bytes(ORIGINAL)
    await read(ctx, f)
    st = f.stat()
    f.write_bytes(SAME_SIZE)
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    result = await writer(ctx, f)
    assert result.is_error and "(content changed, same size)" in text_of(result)
    assert f.read_bytes() == SAME_SIZE


@pytest.mark.parametrize("writer", WRITERS)
async def test_an_unchanged_file_is_written_whatever_its_mtime(
    ctx: ToolContext, tmp_path: Path, writer: Writer
) -> None:
    """The content is what the model saw, so nothing unseen is lost: a `touch` (or a tool that
    rewrote the same bytes) needs no new Read."""
    f = tmp_path / "a.py"
    f.write_bytes(ORIGINAL)
    await read(ctx, f)
    assert not (await writer(ctx, f)).is_error
    untouched = tmp_path / "b.py"
    untouched.write_bytes(ORIGINAL)
    await read(ctx, untouched)
    st = untouched.stat()
    os.utime(untouched, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    assert not (await writer(ctx, untouched)).is_error
    assert b"y = 3" in untouched.read_bytes()


async def test_the_sessions_own_writes_need_no_new_read(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.py"
    created = await run(WriteTool(), ctx, file_path=str(f), content="y = 2\n")
    assert not created.is_error
    assert not (await edit(ctx, f)).is_error  # after its own Write
    again = await run(EditTool(), ctx, file_path=str(f), old_string="3", new_string="4")
    assert not again.is_error  # after its own Edit
    assert not (await write(ctx, f)).is_error
    assert ctx.workspace.read_files[f] == stamp_of(b"y = 3\n", f.stat().st_mtime_ns)
    new = tmp_path / "b.py"
    made = await run(EditTool(), ctx, file_path=str(new), old_string="", new_string="y = 2\n")
    assert not made.is_error and not (await write(ctx, new)).is_error


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize(
    ("read_as", "change_as"),
    [("link.py", "a.py"), ("a.py", "link.py"), ("dir/a.py", "a.py")],
    ids=["link then file", "file then link", "linked folder then file"],
)
async def test_one_file_is_one_record_whatever_name_it_was_read_by(
    ctx: ToolContext, tmp_path: Path, writer: Writer, read_as: str, change_as: str
) -> None:
    """The model read the file, by a symlink, a linked folder or the file's own name: changing
    it by another of its names is not refused as unread, and a change made meanwhile still is."""
    f = tmp_path / "a.py"
    f.write_bytes(ORIGINAL)
    (tmp_path / "link.py").symlink_to(f)
    (tmp_path / "dir").symlink_to(tmp_path)
    await read(ctx, tmp_path / read_as)
    written = await writer(ctx, tmp_path / change_as)
    assert not written.is_error, written.content
    change_keeping_mtime(utime_kept, f, LONGER)
    refused = await writer(ctx, tmp_path / read_as)
    assert refused.is_error and "has changed on disk since you last read it" in text_of(refused)
    assert f.read_bytes() == LONGER


@pytest.mark.parametrize("change", CHANGERS)
async def test_a_change_after_the_sessions_own_write_is_refused(
    ctx: ToolContext, tmp_path: Path, change: Callable[[Path, bytes], None]
) -> None:
    f = tmp_path / "a.py"
    await run(WriteTool(), ctx, file_path=str(f), content=ORIGINAL.decode())
    change_keeping_mtime(change, f, SAME_SIZE)
    result = await edit(ctx, f)
    assert result.is_error and "content changed, mtime unchanged" in text_of(result)
    assert f.read_bytes() == SAME_SIZE


def numbered_lines(count: int) -> bytes:
    return b"".join(b"line %06d of the file\n" % n for n in range(1, count + 1))


@pytest.mark.parametrize(
    ("size", "part"),
    [
        (30_000, {}),
        (30_000, {"limit": 5}),
        (30_000, {"offset": 700, "limit": 5}),
        (30_000, {"offset": 5_000}),  # past the end: a warning, and a read all the same
        (3 * READ_BLOCK_BYTES, {"offset": 2, "limit": 3}),
        (INLINE_READ_BYTES + 50_000, {"offset": 10_000, "limit": 10}),  # read in a thread
    ],
)
async def test_a_partial_read_stamps_the_whole_file(
    ctx: ToolContext, tmp_path: Path, size: int, part: dict[str, int]
) -> None:
    """What a write replaces is the whole file, so the part Read did not show counts too."""
    f = tmp_path / "big.txt"
    data = numbered_lines(size // len(b"line 000001 of the file\n"))
    f.write_bytes(data)
    await read(ctx, f, **part)
    assert ctx.workspace.read_files[f] == stamp_of(data, f.stat().st_mtime_ns)
    # The last line changes, the page shown stays as it was.
    utime_kept(f, data[:-4] + b"EOF\n")
    result = await write(ctx, f)
    assert result.is_error and "content changed, mtime unchanged" in text_of(result)


async def test_a_page_cut_to_the_window_stamps_the_whole_file(tmp_path: Path) -> None:
    ctx = ToolContext(Workspace(cwd=tmp_path, result_limits=ResultLimits(result_tokens=500)))
    f = tmp_path / "long.txt"
    data = numbered_lines(2_000)
    f.write_bytes(data)
    page = await read(ctx, f)
    assert "more would pass" in text_of(page)
    assert ctx.workspace.read_files[f] == stamp_of(data, f.stat().st_mtime_ns)


async def test_an_image_changed_with_its_mtime_kept_is_not_overwritten(
    ctx: ToolContext, tmp_path: Path
) -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(13)
    image = tmp_path / "a.png"
    image.write_bytes(png)
    await read(ctx, image)
    changed = png[:-1] + b"\x01"
    change_keeping_mtime(utime_kept, image, changed)
    result = await run(WriteTool(), ctx, file_path=str(image), content="not an image")
    assert result.is_error and "content changed, mtime unchanged" in text_of(result)
    assert image.read_bytes() == changed


def notebook(path: Path, title: str) -> Path:
    nb = v4.new_notebook()
    nb.cells = [v4.new_markdown_cell(title), v4.new_code_cell("1 + 1")]
    nbformat.write(nb, str(path))
    return path


@pytest.mark.parametrize("change", CHANGERS)
async def test_notebook_edit_refuses_a_notebook_changed_with_its_mtime_kept(
    ctx: ToolContext, tmp_path: Path, change: Callable[[Path, bytes], None]
) -> None:
    path = notebook(tmp_path / "n.ipynb", "# Title")
    await read(ctx, path)
    changed = notebook(tmp_path / "other.ipynb", "# Tilde").read_bytes()
    assert len(changed) == path.stat().st_size  # only the title differs, at the same size
    change_keeping_mtime(change, path, changed)
    tool = NotebookEditTool()
    stale = await run(tool, ctx, notebook_path=str(path), cell_id="cell-1", new_source="2 + 2")
    assert stale.is_error and "content changed, mtime unchanged" in text_of(stale)
    assert path.read_bytes() == changed
    await read(ctx, path)
    fresh = await run(tool, ctx, notebook_path=str(path), cell_id="cell-1", new_source="2 + 2")
    assert not fresh.is_error, fresh.content
    again = await run(tool, ctx, notebook_path=str(path), cell_id="cell-1", new_source="3 + 3")
    assert not again.is_error, again.content  # its own edit is known
