"""Notebooks through nbformat: Read shows cells with their outputs; NotebookEdit replaces,
inserts and deletes cells and leaves a notebook nbformat.validate accepts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat import v4

from codeloop.tools.base import ToolContext, ToolResult, Workspace
from codeloop.tools.files_read import ReadTool
from codeloop.tools.notebook import NotebookEditTool
from codeloop.types import ImageBlock, TextBlock

PIXEL = (  # a 1x1 PNG
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA"
    "60e6kgAAAABJRU5ErkJggg=="
)


def notebook(path: Path, minor: int = 5) -> Path:
    nb = v4.new_notebook()
    nb.nbformat_minor = minor
    nb.metadata["language_info"] = {"name": "python"}
    code = v4.new_code_cell("print('hi')\n1 + 1", execution_count=1)
    code.outputs = [
        v4.new_output("stream", name="stdout", text="hi\n"),
        v4.new_output("execute_result", data={"text/plain": "2"}, execution_count=1),
        v4.new_output("display_data", data={"image/png": PIXEL, "text/plain": "<Figure>"}),
    ]
    failing = v4.new_code_cell("1 / 0", execution_count=2)
    failing.outputs = [
        v4.new_output("error", ename="ZeroDivisionError", evalue="division by zero", traceback=[])
    ]
    nb.cells = [v4.new_markdown_cell("# Title"), code, failing]
    if minor < 5:
        for cell in nb.cells:
            cell.pop("id", None)
    nbformat.validate(nb)
    nbformat.write(nb, str(path))
    return path


async def call(tool: Any, workspace: Workspace, **raw: Any) -> ToolResult:
    result: ToolResult = await tool.call(tool.parse(raw), ToolContext(workspace))
    return result


async def read(workspace: Workspace, path: Path) -> ToolResult:
    """Read, as the model must before it edits."""
    return await call(ReadTool(), workspace, file_path=str(path))


def texts(result: ToolResult) -> str:
    if isinstance(result.content, str):
        return result.content
    return "\n".join(b.text for b in result.content if isinstance(b, TextBlock))


def reread(path: Path) -> Any:
    nb = nbformat.read(str(path), as_version=nbformat.NO_CONVERT)
    nbformat.validate(nb)
    return nb


async def test_read_shows_cells_with_their_outputs(tmp_path: Path) -> None:
    path = notebook(tmp_path / "n.ipynb")
    result = await read(Workspace(cwd=tmp_path), path)
    shown = texts(result)
    assert not result.is_error
    assert 'type="markdown"' in shown and "# Title" in shown
    assert "print('hi')" in shown and "<output>\nhi\n</output>" in shown and "2" in shown
    assert "ZeroDivisionError: division by zero" in shown
    assert isinstance(result.content, tuple)
    assert any(isinstance(b, ImageBlock) and b.media_type == "image/png" for b in result.content)


@pytest.mark.parametrize("minor", [4, 5])
async def test_edits_keep_the_notebook_valid(tmp_path: Path, minor: int) -> None:
    path = notebook(tmp_path / "n.ipynb", minor)
    tool, ws = NotebookEditTool(), Workspace(cwd=tmp_path)
    await read(ws, path)
    first_code = reread(path).cells[1].get("id") or "cell-1"
    replaced = await call(tool, ws, notebook_path=str(path), cell_id=first_code, new_source="x = 3")
    assert not replaced.is_error, texts(replaced)
    nb = reread(path)
    assert nb.cells[1].source == "x = 3" and nb.cells[1].outputs == []
    inserted = await call(
        tool,
        ws,
        notebook_path=str(path),
        cell_id=first_code,
        new_source="## Notes",
        cell_type="markdown",
        edit_mode="insert",
    )
    assert not inserted.is_error, texts(inserted)
    nb = reread(path)
    assert [c.cell_type for c in nb.cells] == ["markdown", "code", "markdown", "code"]
    assert nb.cells[2].source == "## Notes"
    top = await call(
        tool,
        ws,
        notebook_path=str(path),
        new_source="print(0)",
        cell_type="code",
        edit_mode="insert",
    )
    assert not top.is_error and reread(path).cells[0].source == "print(0)"
    deleted = await call(
        tool, ws, notebook_path=str(path), cell_id="cell-4", new_source="", edit_mode="delete"
    )
    assert not deleted.is_error, texts(deleted)
    nb = reread(path)
    assert len(nb.cells) == 4 and nb.nbformat_minor == minor
    retyped = await call(
        tool,
        ws,
        notebook_path=str(path),
        cell_id="cell-1",
        new_source="text now",
        cell_type="markdown",
    )
    assert not retyped.is_error and reread(path).cells[1].cell_type == "markdown"


async def test_mistakes_are_refused_and_the_file_is_left_alone(tmp_path: Path) -> None:
    path = notebook(tmp_path / "n.ipynb")
    before = path.read_bytes()
    tool, ws = NotebookEditTool(), Workspace(cwd=tmp_path)
    unread = await call(tool, ws, notebook_path=str(path), cell_id="cell-0", new_source="x")
    assert unread.is_error and "has not been read" in texts(unread)
    await read(ws, path)
    missing = await call(tool, ws, notebook_path=str(path), cell_id="nope", new_source="x")
    assert missing.is_error and "No cell 'nope'" in texts(missing)
    untyped = await call(tool, ws, notebook_path=str(path), new_source="x", edit_mode="insert")
    assert untyped.is_error and "cell_type" in texts(untyped)
    plain = tmp_path / "a.py"
    plain.write_text("x = 1\n")
    assert (await call(tool, ws, notebook_path=str(plain), new_source="y")).is_error
    broken = tmp_path / "b.ipynb"
    broken.write_text("{not json")
    await read(ws, broken)
    assert (
        await call(tool, ws, notebook_path=str(broken), cell_id="cell-0", new_source="y")
    ).is_error
    assert path.read_bytes() == before


async def test_an_edit_after_the_file_changed_is_refused(tmp_path: Path) -> None:
    path = notebook(tmp_path / "n.ipynb")
    tool, ws = NotebookEditTool(), Workspace(cwd=tmp_path)
    await read(ws, path)
    nb = reread(path)
    nb.cells[0].source = "# Changed in Jupyter"
    nbformat.write(nb, str(path))
    changed = path.read_bytes()
    stale = await call(tool, ws, notebook_path=str(path), cell_id="cell-0", new_source="x")
    assert stale.is_error and "changed on disk" in texts(stale)
    assert path.read_bytes() == changed
    await read(ws, path)
    fresh = await call(tool, ws, notebook_path=str(path), cell_id="cell-0", new_source="# New")
    assert not fresh.is_error and reread(path).cells[0].source == "# New"
    # Its own edit is known: a second edit needs no new Read.
    again = await call(tool, ws, notebook_path=str(path), cell_id="cell-0", new_source="# Again")
    assert not again.is_error, texts(again)


async def test_a_large_notebook_is_shown_up_to_the_limits(tmp_path: Path) -> None:
    nb = v4.new_notebook()
    nb.cells = [v4.new_code_cell(f"value_{i} = {'x' * 1_000!r}") for i in range(300)]
    big_png = "A" * 3_000_000  # about 2.2 MB decoded: one fits the budget, two do not
    nb.cells[0].outputs = [v4.new_output("display_data", data={"image/png": big_png})] * 2
    path = tmp_path / "big.ipynb"
    nbformat.write(nb, str(path))
    result = await read(Workspace(cwd=tmp_path), path)
    assert isinstance(result.content, tuple)
    shown = texts(result)
    assert sum(isinstance(b, ImageBlock) for b in result.content) == 1
    assert "not shown: images over budget" in shown
    assert "value_0 =" in shown and "value_299" not in shown
    assert "not shown: the notebook is longer than 100,000 characters" in shown
    assert len(shown) < 110_000
