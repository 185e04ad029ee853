"""Text helpers the tools and context management share: a leaf both layers import.

`cat -n` numbering, binary sniffing, sizes for people, "did you mean" for a missing file,
cutting an over-long text in the middle, the token estimate (Read sizes its pages with the
same count the context window is measured in), and regular expressions compiled on first use.
No pydantic here: context management imports this at start-up.
"""

from __future__ import annotations

import os
from itertools import islice
from pathlib import Path

MAX_LINE_CHARS = 2000
BINARY_SNIFF_BYTES = 8192
CHARS_PER_TOKEN = 4

IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
# Extensions refused without looking inside: their content is never useful as text.
# fmt: off
BINARY_EXTENSIONS = frozenset({
    ".7z", ".a", ".avi", ".bin", ".bmp", ".bz2", ".class", ".dll", ".dmg", ".doc", ".docx",
    ".dylib", ".exe", ".flac", ".gz", ".ico", ".iso", ".jar", ".lib", ".mkv", ".mov", ".mp3",
    ".mp4", ".npy", ".npz", ".o", ".obj", ".ogg", ".otf", ".parquet", ".pdf", ".pkl", ".ppt",
    ".pptx", ".psd", ".pyc", ".pyd", ".pyo", ".rar", ".so", ".sqlite", ".sqlite3", ".tar", ".tgz",
    ".tif", ".tiff", ".ttf", ".wasm", ".wav", ".webm", ".whl", ".woff", ".woff2", ".xls", ".xlsx",
    ".xz", ".zip", ".zst",
})
# fmt: on


def number_line(number: int, line: str) -> str:
    """One line in `cat -n` form, an over-long line cut with a marker saying so."""
    if len(line) > MAX_LINE_CHARS:
        cut = len(line) - MAX_LINE_CHARS
        line = f"{line[:MAX_LINE_CHARS]}... [line cut: {cut} more characters]"
    return str(number).rjust(6) + "\t" + line  # an f-string's format spec is ~2x slower


def looks_binary(head: bytes) -> bool:
    return b"\0" in head[:BINARY_SNIFF_BYTES]


def binary_message(path: Path, size: int) -> str:
    return (
        f"{path} is a binary file ({human_size(size)}); it cannot be shown as text. Read shows "
        "text files and PNG, JPEG, GIF and WebP images."
    )


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.2f} MB"


def missing_file_message(path: Path, cwd: Path) -> str:
    """A not-found error naming similarly spelled files next to it (the usual cause is a typo)."""
    message = f"File does not exist: {path}."
    if path.parent.is_dir():
        similar = _similar_names(path.parent, path.name)
        if similar:
            message += " Did you mean " + " or ".join(str(path.parent / n) for n in similar) + "?"
    else:
        message += f" Its directory {path.parent} does not exist either."
    return f"{message} Current working directory: {cwd}."


def _similar_names(directory: Path, name: str) -> list[str]:
    try:
        with os.scandir(directory) as entries:
            # Bounded, so a huge directory cannot make an error message slow.
            names = [entry.name for entry in islice(entries, 1000)]
    except OSError:
        return []
    import difflib  # "did you mean" only: not on start-up's path

    by_lower = {n.lower(): n for n in names}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=3, cutoff=0.6)
    return [by_lower[n] for n in close]


def truncate_middle(text: str, limit: int, *, what: str = "output") -> str:
    """Keep the head and the tail of an over-long text, saying how much was cut."""
    if len(text) <= limit:
        return text
    limit = max(limit, 0)
    head = limit * 2 // 3
    tail = limit - head
    cut = len(text) - head - tail
    ending = text[len(text) - tail :]  # not text[-tail:], which is all of it when tail is 0
    return f"{text[:head]}\n\n... [{cut} characters of {what} truncated] ...\n\n{ending}"


def token_weight(text: str) -> int:
    """A text's size in quarter tokens: its characters, each non-ASCII one (CJK, emoji) counted
    three times. Sums of weights round once, where summed estimates would round per part."""
    if text.isascii():
        return len(text)
    return len(text) + 2 * (len(text.encode("utf-8")) - len(text))


def estimate_text(text: str) -> int:
    """About four characters a token; each non-ASCII character counts about a token."""
    return (token_weight(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
