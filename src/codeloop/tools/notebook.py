"""Jupyter notebooks: Read shows them cell by cell with their outputs; NotebookEdit replaces,
inserts or deletes one cell, in Claude Code's schema.

Both go through nbformat (imported on the first notebook), so a notebook of any 4.x minor
version is read as it is, and an edit is validated against the notebook format's schema
before it is written: a change that would leave the file invalid is refused, never saved.
"""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from codeloop.tools.base import Tool, ToolContext, ToolResult, Workspace
from codeloop.tools.files_write import atomic_write, read_to_change
from codeloop.tools.input import Arg, ToolInput
from codeloop.types import ImageBlock, TextBlock
from codeloop.workspace.file_stamp import ContentHash

if TYPE_CHECKING:
    from nbformat import NotebookNode

# An output longer than this is cut: a notebook's log can be huge, its gist is at both ends.
MAX_OUTPUT_CHARS = 10_000
_IMAGES = {"image/png": "image/png", "image/jpeg": "image/jpeg", "image/gif": "image/gif"}


class NotebookEditInput(ToolInput):
    notebook_path: Annotated[str, Arg("Path of the .ipynb file, absolute or relative.")]
    cell_id: Annotated[
        str | None,
        Arg(
            "The id of the cell to edit (as Read shows it; `cell-N` or N, 0-based, "
            "for cells without one). With edit_mode insert, the new cell goes after it (first "
            "when omitted)."
        ),
    ] = None
    new_source: Annotated[str, Arg("The cell's new source (ignored for delete).")]
    cell_type: Annotated[
        Literal["code", "markdown"] | None, Arg("The cell's type; required for insert.")
    ] = None
    edit_mode: Annotated[
        Literal["replace", "insert", "delete"], Arg("replace (default), insert or delete.")
    ] = "replace"


DESCRIPTION = """\
Replace, insert or delete one cell of a Jupyter notebook (.ipynb).

- Read the notebook first (an edit is refused otherwise, or when it changed since): it shows \
each cell with its id, type, source and outputs.
- replace: the cell gets new_source (and cell_type, if given); a code cell's outputs are \
cleared. insert: a new cell after cell_id (at the top without one); cell_type is required. \
delete: removes cell_id.
- Use this, not Edit or Write, for notebooks: the file stays a valid notebook."""


def read_notebook(
    path: Path, max_chars: int, max_image_bytes: int, content: ContentHash
) -> ToolResult:
    """A notebook as Read shows it: each cell with its id and type, its source, its outputs
    (text, errors, images as images), cells in order until `max_chars` of text or
    `max_image_bytes` of images (Read's limit for one image) are shown. The file's bytes go
    to `content`."""
    data = path.read_bytes()
    content.update(data)
    nb = _parsed(path, data)
    if isinstance(nb, ToolResult):
        return nb
    language = nb.metadata.get("language_info", {}).get("name") or nb.metadata.get(
        "kernelspec", {}
    ).get("language", "")
    head = f"Notebook {path} ({len(nb.cells)} cells, language: {language or 'unknown'})"
    parts: list[TextBlock | ImageBlock] = [TextBlock(head)]
    chars, image_bytes = len(head), 0
    for index, cell in enumerate(nb.cells):
        name = cell.get("id") or f"cell-{index}"
        lines = [f'<cell id="{name}" type="{cell.cell_type}">', _source(cell)]
        if cell.cell_type == "code" and cell.get("execution_count") is not None:
            lines[0] = lines[0][:-1] + f' execution_count="{cell.execution_count}">'
        images: list[ImageBlock] = []
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            text, found = _output(output)
            for image in found:
                size = len(image.data) * 3 // 4
                if image_bytes + size > max_image_bytes:
                    text += f"\n[an {image.media_type} output, not shown: images over budget]"
                else:
                    image_bytes += size
                    images.append(image)
            if text.strip():
                lines.append(f"<output>\n{text.strip()}\n</output>")
        lines.append("</cell>")
        block = "\n".join(lines)
        if chars + len(block) > max_chars and index > 0:
            parts.append(
                TextBlock(
                    f"[cells {index} to {len(nb.cells) - 1} not shown: the notebook is longer "
                    f"than {max_chars:,} characters. Read them with Bash, e.g. "
                    f"`jq '.cells[{index}]' {path.name}`.]"
                )
            )
            break
        chars += len(block)
        parts.append(TextBlock(block))
        parts += images
    if all(isinstance(p, TextBlock) for p in parts):
        return ToolResult("\n\n".join(p.text for p in parts if isinstance(p, TextBlock)))
    return ToolResult(tuple(parts))


def _source(cell: Any) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _output(output: Any) -> tuple[str, list[ImageBlock]]:
    kind = output.get("output_type")
    if kind == "stream":
        return _cut(_joined(output.get("text", ""))), []
    if kind == "error":
        trace = "\n".join(output.get("traceback", []))
        return _cut(f"{output.get('ename')}: {output.get('evalue')}\n{trace}"), []
    data = output.get("data", {})
    images = [
        ImageBlock(media, _joined(data[key]).replace("\n", ""))
        for key, media in _IMAGES.items()
        if key in data
    ]
    text = _joined(data.get("text/plain", "")) if "text/plain" in data else ""
    if not text and not images and data:
        text = f"[output of type {', '.join(data)}]"
    return _cut(text), images


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _cut(text: str) -> str:
    from codeloop.text import truncate_middle

    return truncate_middle(text.rstrip("\n"), MAX_OUTPUT_CHARS, what="the output")


class NotebookEditTool(Tool[NotebookEditInput]):
    name: ClassVar[str] = "NotebookEdit"
    description: ClassVar[str] = DESCRIPTION
    input_model = NotebookEditInput

    async def call(self, args: NotebookEditInput, ctx: ToolContext) -> ToolResult:
        path = ctx.workspace.resolve(args.notebook_path)
        if path.suffix.lower() != ".ipynb":
            return ToolResult.error(f"{path} is not a notebook (.ipynb): use Edit for it.")
        try:
            st = path.stat()
        except FileNotFoundError:
            return ToolResult.error(f"{path} does not exist. Create notebooks with Write.")
        except OSError as exc:
            return ToolResult.error(f"Cannot access {path}: {exc.strerror or exc}")
        # As for Edit: the cell ids and sources the model works from must be the file's own.
        raw = await read_to_change(path, st, ctx.workspace, "edit", editor=False)
        if isinstance(raw, str):
            return ToolResult.error(raw)
        return await asyncio.to_thread(_edit_file, path, raw, st, args, ctx.workspace)


def _parsed(path: Path, data: bytes) -> NotebookNode | ToolResult:
    """The notebook in `data` as it is (no conversion), or the error Read and NotebookEdit
    give for a file that is not one."""
    import nbformat

    try:
        nb: NotebookNode = nbformat.reads(data.decode("utf-8"), as_version=nbformat.NO_CONVERT)
    except Exception as exc:  # nbformat raises several kinds for a file that is not JSON
        return ToolResult.error(f"{path} is not a readable notebook: {exc}")
    return nb


def _edit_file(
    path: Path, raw: bytes, st: os.stat_result, args: NotebookEditInput, workspace: Workspace
) -> ToolResult:
    import nbformat

    nb = _parsed(path, raw)
    if isinstance(nb, ToolResult):
        return nb
    if nb.nbformat < 4:
        return ToolResult.error(
            f"{path} is in notebook format {nb.nbformat}; open and save it in Jupyter to "
            "upgrade it to format 4 first."
        )
    try:
        done = _edit(nb, args)
    except _EditError as exc:
        return ToolResult.error(str(exc))
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as exc:
        return ToolResult.error(f"The edit would make the notebook invalid ({exc.message}).")
    data = nbformat.writes(nb).encode("utf-8")
    try:
        workspace.read_files[path] = atomic_write(path, data, stat.S_IMODE(st.st_mode))
    except OSError as exc:
        return ToolResult.error(f"Could not write {path}: {exc.strerror or exc}")
    return ToolResult(f"{done} in {path}.")


class _EditError(Exception):
    pass


def _find(nb: NotebookNode, cell_id: str) -> int:
    for index, cell in enumerate(nb.cells):
        if cell.get("id") == cell_id:
            return index
    number = cell_id.removeprefix("cell-")
    if number.isdigit() and int(number) < len(nb.cells):
        return int(number)
    known = ", ".join(c.get("id") or f"cell-{i}" for i, c in enumerate(nb.cells)) or "none"
    raise _EditError(f"No cell {cell_id!r} in the notebook (cells: {known}).")


def _new_cell(kind: str, source: str, *, has_ids: bool, cell_id: str | None = None) -> NotebookNode:
    """A fresh cell: with `cell_id` (or a new id), or with none in a format before 4.5."""
    from nbformat import v4

    cell: NotebookNode = (
        v4.new_code_cell(source) if kind == "code" else v4.new_markdown_cell(source)
    )
    if not has_ids:
        cell.pop("id", None)
    elif cell_id:
        cell["id"] = cell_id
    return cell


def _edit(nb: NotebookNode, args: NotebookEditInput) -> str:
    has_ids = (nb.nbformat, nb.nbformat_minor) >= (4, 5)
    if args.edit_mode == "insert":
        if args.cell_type is None:
            raise _EditError("edit_mode insert needs cell_type (code or markdown).")
        at = _find(nb, args.cell_id) + 1 if args.cell_id else 0
        nb.cells.insert(at, _new_cell(args.cell_type, args.new_source, has_ids=has_ids))
        return f"Inserted a {args.cell_type} cell at position {at}"
    if not args.cell_id:
        raise _EditError(f"edit_mode {args.edit_mode} needs the cell_id of the cell.")
    index = _find(nb, args.cell_id)
    if args.edit_mode == "delete":
        del nb.cells[index]
        return f"Deleted cell {args.cell_id}"
    cell = nb.cells[index]
    kind = args.cell_type or cell.cell_type
    if kind != cell.cell_type:  # a new cell of the other type, under the same id
        nb.cells[index] = _new_cell(kind, args.new_source, has_ids=has_ids, cell_id=cell.get("id"))
    else:
        cell.source = args.new_source
        if kind == "code":  # what it printed belonged to the old source
            cell.outputs = []
            cell.execution_count = None
    return f"Replaced the source of cell {args.cell_id}"
