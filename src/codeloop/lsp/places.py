"""Places as the model reads them: paths relative to the workspace, columns in characters.
The protocol counts a line's columns in UTF-16 units (the encoding codeloop asks for)."""

from __future__ import annotations

from pathlib import Path


def utf16_units(text: str) -> int:
    """How many UTF-16 units `text` takes: the protocol's column after it."""
    return len(text.encode("utf-16-le")) // 2


def characters(line: str, units: int) -> int:
    """How many characters of `line` its first `units` UTF-16 units hold."""
    return len(line.encode("utf-16-le")[: units * 2].decode("utf-16-le", errors="ignore"))


def relative(path: Path, root: Path) -> str:
    """`path` relative to `root` when it is inside, else absolute."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def read_text(path: Path) -> str | None:
    """The file's text as a server is sent it (None: it cannot be read)."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
