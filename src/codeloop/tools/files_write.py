"""Write and Edit: change files only as the model last saw them, and never leave one half-written.

An existing file may be changed only after this session Read it and while its content (size and
hash, file_stamp.py) still matches that read or the session's own last write: otherwise the
model would overwrite edits made by the user or a formatter that it has never seen. The bytes
checked are the bytes changed: each writer reads the file once, for both. Every change goes to a
temporary file in the same directory, then `os.replace`s the original, so a crash leaves the old
content or the new, never a mix.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import stat
from pathlib import Path
from typing import Annotated

from codeloop.system.valueclass import valueclass
from codeloop.text import (
    BINARY_EXTENSIONS,
    IMAGE_TYPES,
    binary_message,
    looks_binary,
    missing_file_message,
    number_line,
)
from codeloop.tools.base import Tool, ToolContext, ToolResult, Workspace
from codeloop.tools.input import Arg, ToolInput
from codeloop.tools.patch import change_data
from codeloop.workspace.file_stamp import FileStamp, stamp_of

# Lines of unchanged context shown around an edit, and the most lines an edit snippet shows.
SNIPPET_CONTEXT = 3
SNIPPET_MAX_LINES = 40


class WriteInput(ToolInput):
    file_path: Annotated[
        str, Arg("Path of the file to write, absolute or relative to the working directory.")
    ]
    content: Annotated[str, Arg("The complete new content of the file.")]


class EditInput(ToolInput):
    file_path: Annotated[
        str, Arg("Path of the file to edit, absolute or relative to the working directory.")
    ]
    old_string: Annotated[str, Arg("The exact text to replace.")]
    new_string: Annotated[str, Arg("The text to put in its place (must differ).")]
    replace_all: Annotated[bool, Arg("Replace every occurrence of old_string (default false).")] = (
        False
    )


class WriteTool(Tool[WriteInput]):
    name = "Write"
    description = (
        "Write a file, replacing it if it exists; missing parent directories are created.\n"
        "- If the file exists you must have Read it in this conversation, and it must not have "
        "changed since, or the write is refused.\n"
        "- To change part of an existing file prefer Edit: it sends only the change.\n"
        "- The content is written exactly as given, as UTF-8."
    )
    input_model = WriteInput

    async def call(self, args: WriteInput, ctx: ToolContext) -> ToolResult:
        path = ctx.workspace.resolve(args.file_path)
        try:
            st: os.stat_result | None = path.stat()
        except FileNotFoundError:
            st = None
        except OSError as exc:
            return ToolResult.error(f"Cannot access {path}: {exc.strerror or exc}")
        before: str | None = None
        if st is not None:
            current = await read_to_change(path, st, ctx.workspace, "write to")
            if isinstance(current, str):
                return ToolResult.error(current)
            before = _old_text(current)
        try:
            data = args.content.encode("utf-8")
        except UnicodeEncodeError:
            return ToolResult.error("content is not valid Unicode text (lone surrogates).")
        mode = None if st is None else stat.S_IMODE(st.st_mode)
        try:
            ctx.workspace.read_files[path] = await write_file(path, data, mode, ctx.workspace)
        except OSError as exc:
            return ToolResult.error(f"Could not write {path}: {exc.strerror or exc}")
        lines = args.content.count("\n") + (not args.content.endswith("\n") and args.content != "")
        verb = "Created" if st is None else "Updated"
        change = change_data(path, before, args.content)
        return ToolResult(f"{verb} {path} ({lines} lines, {len(data)} bytes).", data=change)


class EditTool(Tool[EditInput]):
    name = "Edit"
    description = (
        "Replace exact text in a file.\n"
        "- You must have Read the file in this conversation, and it must not have changed since.\n"
        "- old_string must match the file exactly, indentation and whitespace included: copy it "
        "from the Read output without the line-number prefix (the spaces, number and tab before "
        "each line).\n"
        "- old_string must occur exactly once; include more surrounding lines to make it unique, "
        "or set replace_all to change every occurrence (for example to rename a variable).\n"
        "- An empty old_string on a file that does not exist creates it with new_string.\n"
        "- Files with CRLF line endings keep them; write old_string and new_string with plain "
        "newlines."
    )
    input_model = EditInput

    async def call(self, args: EditInput, ctx: ToolContext) -> ToolResult:
        if args.old_string == args.new_string:
            return ToolResult.error(
                "old_string and new_string are the same, so there is nothing to change."
            )
        path = ctx.workspace.resolve(args.file_path)
        try:
            st = path.stat()
        except FileNotFoundError:
            if args.old_string == "":
                return await _create(path, args.new_string, ctx.workspace)
            return ToolResult.error(
                missing_file_message(path, ctx.workspace.cwd)
                + " To create a new file, use Write (or Edit with an empty old_string)."
            )
        except OSError as exc:
            return ToolResult.error(f"Cannot access {path}: {exc.strerror or exc}")
        suffix = path.suffix.lower()
        if stat.S_ISREG(st.st_mode) and (suffix in BINARY_EXTENSIONS or suffix in IMAGE_TYPES):
            return ToolResult.error(binary_message(path, st.st_size) + " Edit changes text only.")
        raw = await read_to_change(path, st, ctx.workspace, "edit")
        if isinstance(raw, str):
            return ToolResult.error(raw)
        if looks_binary(raw):
            return ToolResult.error(binary_message(path, len(raw)) + " Edit changes text only.")
        # surrogateescape: bytes that are not UTF-8 go back to disk exactly as they were.
        text = raw.decode("utf-8", "surrogateescape")
        if args.old_string == "" and text:
            return ToolResult.error(
                f"old_string is empty but {path} already has content. Give the exact text to "
                "replace, or use Write to replace the whole file."
            )
        outcome = apply_edit(text, args.old_string, args.new_string, args.replace_all)
        if isinstance(outcome, str):
            return ToolResult.error(f"{outcome} File: {path}")
        try:
            data = outcome.text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return ToolResult.error("new_string is not valid Unicode text (lone surrogates).")
        try:
            ctx.workspace.read_files[path] = await write_file(
                path, data, stat.S_IMODE(st.st_mode), ctx.workspace
            )
        except OSError as exc:
            return ToolResult.error(f"Could not write {path}: {exc.strerror or exc}")
        replaced = "1 replacement" if outcome.count == 1 else f"{outcome.count} replacements"
        change = change_data(path, _display(text), _display(outcome.text))
        return ToolResult(f"Edited {path} ({replaced}). {_snippet(outcome)}", data=change)


async def _create(path: Path, content: str, workspace: Workspace) -> ToolResult:
    try:
        data = content.encode("utf-8")
        workspace.read_files[path] = await write_file(path, data, None, workspace)
    except UnicodeEncodeError:
        return ToolResult.error("new_string is not valid Unicode text (lone surrogates).")
    except OSError as exc:
        return ToolResult.error(f"Could not create {path}: {exc.strerror or exc}")
    created = change_data(path, None, content)
    return ToolResult(f"Created {path} ({len(data)} bytes).", data=created)


def _old_text(raw: bytes) -> str | None:
    """The text a Write replaces, for its diff (None: not text)."""
    return None if looks_binary(raw) else _display(raw.decode("utf-8", "replace"))


def _display(text: str) -> str:
    """Text as a diff shows it: lone surrogates (bytes that were not UTF-8) as U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


async def read_to_change(
    path: Path, st: os.stat_result, workspace: Workspace, verb: str, *, editor: bool = True
) -> bytes | str:
    """The bytes of an existing file (`st` its stat) that the session may change now, as it
    last read or wrote them; or why it may not change them (a message for the model).
    `editor`: the editor's buffer of it counts, when an editor serves it (text files)."""
    if stat.S_ISDIR(st.st_mode):
        return f"{path} is a directory, not a file."
    if not stat.S_ISREG(st.st_mode):
        return f"{path} is not a regular file (a device, FIFO or socket)."
    seen = workspace.read_files.get(path)
    if seen is None:
        # After a resume or a rewind the model may see its Read in the history: say why that
        # one does not count, or it is told something it can see is false.
        return (
            f"{path} has not been read since this session started or was resumed or rewound, "
            f"so what it holds now is unknown. Read it first, then {verb} it."
        )
    try:
        buffer = await workspace.files.read_text(path) if editor and workspace.files else None
        raw = buffer.encode("utf-8") if buffer is not None else await _disk_bytes(path)
    except OSError as exc:
        return f"Cannot read {path}: {exc.strerror or exc}"
    change = seen.change(raw, st.st_mtime_ns)
    if change:
        return (
            f"{path} has changed on disk since you last read it ({change}): the user, a "
            f"formatter or a command modified it. Read it again, then {verb} it."
        )
    return raw


async def _disk_bytes(path: Path) -> bytes:
    return await asyncio.to_thread(path.read_bytes)


async def write_file(path: Path, data: bytes, mode: int | None, workspace: Workspace) -> FileStamp:
    """Write the file's new content: into the editor's buffer when an editor serves the file
    (it saves it when the user says so), else to disk in one step (atomic_write)."""
    files = workspace.files
    if files is not None and await files.write_text(path, data.decode("utf-8", "replace")):
        return stamp_of(data, 0)
    return await asyncio.to_thread(atomic_write, path, data, mode)


def atomic_write(path: Path, data: bytes, mode: int | None) -> FileStamp:
    """Replace the file's content in one step; return the stamp of what it now holds.

    `mode` is the existing file's permission bits, None for a new file (which then gets the
    default permissions the umask allows). A symlink is written through, not replaced.
    """
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_name(f".{target.name}.{os.urandom(4).hex()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            if mode is not None:
                os.fchmod(f.fileno(), mode)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    return stamp_of(data, target.stat().st_mtime_ns)


# --- matching ----------------------------------------------------------------------------------


@valueclass(slots=True)
class Edited:
    text: str
    count: int
    start: int  # where the first replacement begins in `text`
    end: int  # and where it ends


def apply_edit(text: str, old: str, new: str, replace_all: bool) -> Edited | str:
    """The edited text, or why the edit cannot be made (a message for the model).

    In a CRLF file, old and new are taken with CRLF endings, so the model can write plain
    newlines and the rest of the file keeps its bytes.
    """
    if _uses_crlf(text):
        old, new = _to_crlf(old), _to_crlf(new)
    if old == "":  # only reaches here for an empty file
        return Edited(new, 1, 0, len(new))
    count = text.count(old)
    if count == 0:
        return _not_found(text, old)
    if count > 1 and not replace_all:
        lines = _match_lines(text, old)
        where = ", ".join(map(str, lines[:10])) + (", ..." if len(lines) > 10 else "")
        return (
            f"old_string occurs {count} times (starting at lines {where}), but replace_all is "
            "false. Include more surrounding lines in old_string to pick one occurrence, or set "
            "replace_all to true to replace them all."
        )
    start = text.index(old)
    edited = text.replace(old, new, -1 if replace_all else 1)
    return Edited(edited, count if replace_all else 1, start, start + len(new))


def _uses_crlf(text: str) -> bool:
    crlf = text.count("\r\n")
    return crlf > 0 and crlf >= text.count("\n") - crlf


def _to_crlf(s: str) -> str:
    return s.replace("\r\n", "\n").replace("\n", "\r\n")


def _match_lines(text: str, old: str) -> list[int]:
    lines: list[int] = []
    at = text.find(old)
    while at != -1:
        lines.append(text.count("\n", 0, at) + 1)
        at = text.find(old, at + len(old))
    return lines


_READ_PREFIX = re.compile(r"^ *\d+\t")


def _not_found(text: str, old: str) -> str:
    """Not-found, with the likely cause when it is cheap to tell."""
    message = "old_string was not found in the file."
    old_lines = old.replace("\r\n", "\n").split("\n")
    nonblank = [line for line in old_lines if line.strip()]
    if nonblank and all(_READ_PREFIX.match(line) for line in nonblank):
        return (
            f"{message} It seems to include the line-number prefixes of the Read output; leave "
            "out the spaces, number and tab before each line."
        )
    near = _whitespace_match(text, old_lines)
    if near is not None:
        first, found = near
        shown = "\n".join(number_line(first + i, line) for i, line in enumerate(found[:20]))
        return (
            f"{message} Ignoring whitespace, it matches lines {first}-{first + len(found) - 1}, "
            f"which read:\n{shown}\nCopy old_string from these lines exactly, indentation "
            "(tabs or spaces) included."
        )
    return f"{message} Read the file again and copy the text exactly, whitespace included."


def _whitespace_match(text: str, old_lines: list[str]) -> tuple[int, list[str]] | None:
    """The first run of file lines equal to old_lines when all whitespace runs are collapsed."""
    wanted = [" ".join(line.split()) for line in old_lines]
    while wanted and not wanted[0]:
        wanted.pop(0)
    while wanted and not wanted[-1]:
        wanted.pop()
    if not wanted:
        return None
    lines = text.replace("\r\n", "\n").split("\n")
    squeezed = [" ".join(line.split()) for line in lines]
    for i in range(len(lines) - len(wanted) + 1):
        if squeezed[i : i + len(wanted)] == wanted:
            return i + 1, lines[i : i + len(wanted)]
    return None


def _snippet(edit: Edited) -> str:
    """The edited region with a little context, numbered like Read output."""
    first = edit.text.count("\n", 0, edit.start) + 1
    last = edit.text.count("\n", 0, max(edit.end - 1, edit.start)) + 1
    lines = edit.text.split("\n")
    begin = max(first - SNIPPET_CONTEXT, 1)
    stop = min(last + SNIPPET_CONTEXT, len(lines), begin + SNIPPET_MAX_LINES - 1)
    shown = "\n".join(
        number_line(n, lines[n - 1].removesuffix("\r")) for n in range(begin, stop + 1)
    )
    more = "\n   ..." if stop < min(last + SNIPPET_CONTEXT, len(lines)) else ""
    return f"Lines {begin}-{stop} now read:\n{shown}{more}"
