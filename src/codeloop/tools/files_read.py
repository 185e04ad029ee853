"""Read: show a file to the model the way Claude Code does, and remember that it was read.

The output is `cat -n` style (number right-aligned to 6 columns, a tab, the line) because models
trained on Claude Code quote from it when they Edit. Every refusal says what to do instead. A
successful read, whole or partial, records the file's size and content hash in the workspace
(file_stamp.py): Write and Edit only touch files the model has seen in their current state.

A partial read (offset and limit, or a page) hashes the whole file too: a write replaces the
whole file and an Edit may match anywhere in it, so a change the page did not show must count;
and Read passes over the rest anyway to count its lines, so the hash is all it adds. Measured:
~25 µs of CPU more on a 30 KB Read (~0.5 ms), ~0.3 s on a 10-line page of a 200 MB file (~0.12 s
before): worth it for the rare huge file, as hashing part of it would let a write through over
changes no one saw.

Read sizes its own output to the model's window (`Workspace.result_limits`, and what this
turn's other results left of the turn's share): a file that does not fit comes back as its
first page, with the exact offset and limit of the next. The model sees what it asked for, in
full or in pages, and never a pointer to a saved copy it would have to read again.

The helpers it shares with files_write and context management live in text.py.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import io
import stat
from bisect import bisect_right
from itertools import accumulate
from pathlib import Path
from typing import Annotated, BinaryIO

from codeloop.system.valueclass import valueclass
from codeloop.text import (
    BINARY_EXTENSIONS,
    BINARY_SNIFF_BYTES,
    CHARS_PER_TOKEN,
    IMAGE_TYPES,
    MAX_LINE_CHARS,
    binary_message,
    human_size,
    looks_binary,
    missing_file_message,
    number_line,
    token_weight,
)
from codeloop.tools.base import Tool, ToolContext, ToolResult
from codeloop.tools.input import Arg, ToolInput
from codeloop.types import ImageBlock, TextBlock
from codeloop.workspace.file_stamp import ContentHash

DEFAULT_LIMIT = 2000
READ_BLOCK_BYTES = 64 * 1024  # a file's lines are decoded this many at once
# What the note after a page takes, kept out of the page's share.
NOTE_TOKENS = 80
# 3.75 MB raw is 5 MB once base64-encoded: the Messages API's per-image ceiling.
# A text file this small is read on the event loop: handing it to a thread and back costs
# more (two wake-ups, each a CPU slice on a busy machine) than reading it, and the stat that
# comes first would block the loop on a hung file system all the same.
INLINE_READ_BYTES = 256 * 1024
MAX_IMAGE_BYTES = 3_932_160


class ReadInput(ToolInput):
    file_path: Annotated[
        str, Arg("Path of the file to read, absolute or relative to the working directory.")
    ]
    offset: Annotated[
        int,
        Arg(
            "1-based line number to start reading at. Use it for files too big to read at once.",
            minimum=0,
        ),
    ] = 1
    limit: Annotated[int, Arg(f"Number of lines to read (default {DEFAULT_LIMIT}).", minimum=1)] = (
        DEFAULT_LIMIT
    )


class ReadTool(Tool[ReadInput]):
    name = "Read"
    description = (
        "Read a file from the local filesystem. file_path may be absolute or relative to the "
        "working directory.\n"
        f"- Returns up to {DEFAULT_LIMIT} lines from line `offset` (1-based) in `cat -n` form: "
        f"line number, a tab, then the line. Lines over {MAX_LINE_CHARS} characters are cut.\n"
        "- A file too long for one result (its size depends on the model's context window) "
        "comes back as its first page, ending with the offset and limit that read the next; "
        "or search it with Grep.\n"
        "- Shows PNG, JPEG, GIF and WebP images, and Jupyter notebooks cell by cell with "
        "their outputs; other binary files are refused.\n"
        "- You must Read a file before you Edit it or Write over it. When you copy text from "
        "the output into Edit, leave out the line-number prefix.\n"
        "- It reads files, not directories: list a directory with Bash `ls` or Glob.\n"
        "- Reading several files in parallel in one response is fine."
    )
    input_model = ReadInput

    def is_read_only(self, args: ReadInput) -> bool:
        return True

    async def call(self, args: ReadInput, ctx: ToolContext) -> ToolResult:
        path = ctx.workspace.resolve(args.file_path)
        try:
            st = path.stat()
        except FileNotFoundError:
            return ToolResult.error(missing_file_message(path, ctx.workspace.cwd))
        except OSError as exc:
            return ToolResult.error(f"Cannot access {path}: {exc.strerror or exc}")
        if stat.S_ISDIR(st.st_mode):
            return ToolResult.error(
                f"{path} is a directory, not a file. List it with Bash `ls` or with Glob."
            )
        if not stat.S_ISREG(st.st_mode):
            return ToolResult.error(f"{path} is not a regular file (a device, FIFO or socket).")

        suffix = path.suffix.lower()
        content = ContentHash()  # each reader feeds it every byte it reads
        try:
            if suffix in IMAGE_TYPES:
                result = await _read_image(path, st.st_size, content)
            elif suffix == ".ipynb":
                from codeloop.tools.notebook import read_notebook

                result = await asyncio.to_thread(
                    read_notebook, path, self.max_result_chars, MAX_IMAGE_BYTES, content
                )
            elif suffix in BINARY_EXTENSIONS:
                result = ToolResult.error(binary_message(path, st.st_size))
            else:
                result = await _read_text(path, st.st_size, args, ctx, content)
        except OSError as exc:
            return ToolResult.error(f"Cannot read {path}: {exc.strerror or exc}")
        if not result.is_error:
            # The hash of the bytes the model was shown: a change racing the read leaves the
            # record unlike the file, which errs on the safe side (the next Edit asks for a
            # fresh Read).
            ctx.workspace.read_files[path] = content.stamp(st.st_mtime_ns)
        return result


async def _read_image(path: Path, size: int, content: ContentHash) -> ToolResult:
    if size > MAX_IMAGE_BYTES:
        return ToolResult.error(
            f"{path} is an image of {human_size(size)}; images over "
            f"{human_size(MAX_IMAGE_BYTES)} cannot be shown. Make a smaller copy (for example "
            "with ImageMagick through Bash) and read that."
        )
    data = await asyncio.to_thread(path.read_bytes)
    content.update(data)
    media_type = _sniff_image(data[:12])
    if media_type is None:
        return ToolResult.error(
            f"{path} has an image extension but is not a PNG, JPEG, GIF or WebP image."
        )
    encoded = base64.b64encode(data).decode("ascii")
    note = f"Image {path} ({media_type}, {human_size(size)})."
    return ToolResult((ImageBlock(media_type, encoded), TextBlock(note)))


def _sniff_image(head: bytes) -> str | None:
    """The media type the bytes really are: the API rejects an image whose type is mislabelled."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "image/webp"
    return None


@valueclass(slots=True)
class _Slice:
    numbered: list[str]
    weights: list[int]  # each line's token weight (text.token_weight), its newline included
    last: int  # number of the last line shown
    total: int  # lines in the whole file

    @property
    def tokens(self) -> int:
        return (sum(self.weights) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN

    def cut(self, tokens: int) -> _Slice:
        """The lines that fit in `tokens`."""
        kept, used = 0, 0
        for weight in self.weights:
            if used + weight > tokens * CHARS_PER_TOKEN:
                break
            kept, used = kept + 1, used + weight
        cut = len(self.numbered) - kept
        return _Slice(self.numbered[:kept], self.weights[:kept], self.last - cut, self.total)


async def _read_text(
    path: Path, size: int, args: ReadInput, ctx: ToolContext, content: ContentHash
) -> ToolResult:
    start = max(args.offset, 1)
    limits, room = ctx.workspace.result_limits, ctx.room
    cap = min(limits.result_tokens, room.left) - NOTE_TOKENS
    files = ctx.workspace.files
    buffer = await files.read_text(path) if files is not None else None
    if buffer is not None:  # the editor's text, saved or not
        lines_of = functools.partial(_read_lines, io.BytesIO(buffer.encode("utf-8")))
    else:
        lines_of = functools.partial(_read_file_lines, path)
    read = functools.partial(lines_of, start, args.limit, cap * CHARS_PER_TOKEN, content)
    part = read() if size <= INLINE_READ_BYTES else await asyncio.to_thread(read)
    if part is None:
        return ToolResult.error(binary_message(path, size))
    if part.total == 0:
        return ToolResult(
            "<system-reminder>Warning: the file exists but its contents are empty."
            "</system-reminder>"
        )
    if not part.numbered and part.total < start:
        return ToolResult(
            f"<system-reminder>Warning: the file exists but is shorter than the provided offset "
            f"({start}). The file has {part.total} lines.</system-reminder>"
        )
    # The turn's other calls ran meanwhile: what they took is not this page's any more.
    granted = room.take(part.tokens + NOTE_TOKENS) - NOTE_TOKENS
    if granted < part.tokens:
        part = part.cut(granted)
        cap = granted
    if not part.numbered:
        return ToolResult.error(_no_room(path))
    text = "\n".join(part.numbered)
    if part.last < part.total:
        shown = part.last - start + 1
        if shown < args.limit:  # cut by size, not by the limit asked for
            text += (
                f"\n\n(Showing lines {start}-{part.last} of {part.total}: more would pass the "
                f"{max(cap, 0) + NOTE_TOKENS:,} tokens this result may take in the model's context "
                f"window. Use offset={part.last + 1} limit={shown} to read more, or Grep to "
                "find what you need.)"
            )
        else:
            text += (
                f"\n\n(Showing lines {start}-{part.last} of {part.total}. "
                f"Use offset={part.last + 1} limit={args.limit} to read more.)"
            )
    return ToolResult(text, sized=True)


def _no_room(path: Path) -> str:
    return (
        f"{path} was not read: this turn's answer and its other results already take the "
        "room one turn may have in this model's context window. Read it again in your next "
        "turn (with offset and limit for a part)."
    )


def _read_file_lines(
    path: Path, start: int, limit: int, max_weight: int, content: ContentHash
) -> _Slice | None:
    with path.open("rb") as f:
        return _read_lines(f, start, limit, max_weight, content)


def _read_lines(
    f: BinaryIO, start: int, limit: int, max_weight: int, content: ContentHash
) -> _Slice | None:
    """Lines `start`.. of the file `f`, numbered, within `limit` lines and `max_weight` (the first
    line always, cut as it is to MAX_LINE_CHARS); None if binary. Every byte of the file goes
    to `content`, the lines not shown too.

    Streams the file a block of lines at a time, so a range of a huge file costs one pass and
    no more memory than the range; each block is decoded and weighed at once (a line at a time
    cost ~0.8 ms for a 30 KB file, every Read).
    """
    numbered: list[str] = []
    weights: list[int] = []
    used = 0
    number = 0  # lines read so far
    if looks_binary(f.read(BINARY_SNIFF_BYTES)):
        return None
    f.seek(0)
    while block := f.readlines(READ_BLOCK_BYTES):
        raw = b"".join(block)
        content.update(raw)
        first = max(start - number - 1, 0)  # index in the block of the first line shown
        number += len(block)
        if first >= len(block):
            continue
        texts = _decoded(raw if first == 0 else b"".join(block[first:]))
        base = number - len(block) + first + 1
        lines = [number_line(base + i, text) for i, text in enumerate(texts)]
        ascii_only = all(text.isascii() for text in texts)
        block_weights = [(len(x) if ascii_only else token_weight(x)) + 1 for x in lines]
        # How many of them fit: `used` grows with each line (every weight is at least 1).
        fit = bisect_right(list(accumulate(block_weights, initial=used)), max_weight) - 1
        fit = min(max(fit, 0 if numbered else 1), limit - len(numbered), len(lines))
        numbered += lines[:fit]
        weights += block_weights[:fit]
        used += sum(block_weights[:fit])
        if fit < len(lines):
            # The lines not shown are counted, and everything after them.
            rest = _count_lines(f, content)
            return _Slice(numbered, weights, base + fit - 1, number + rest)
    return _Slice(numbered, weights, number, number)


def _decoded(raw: bytes) -> list[str]:
    """Whole lines read in binary as text, their line ends dropped: one decode for all (a
    newline is never part of a UTF-8 sequence, so an invalid one is replaced as it would be
    line by line)."""
    texts = raw.decode("utf-8", "replace").split("\n")
    if raw.endswith(b"\n"):
        texts.pop()
    return [text.removesuffix("\r") for text in texts]


def _count_lines(f: BinaryIO, content: ContentHash) -> int:
    """Lines left in a binary file object, a last line without a newline included; the bytes
    go to `content`."""
    count = 0
    last = b"\n"
    while chunk := f.read(1 << 20):
        content.update(chunk)
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")
