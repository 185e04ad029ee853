"""The context window a GGUF file was trained with, read from its header (no llama.cpp).

A GGUF file starts with key-value metadata: `general.architecture` names the model family,
and `<architecture>.context_length` its window. Only the header is read, and only until both
are found: the tokenizer's big arrays that follow are skipped, not loaded.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

_MAGIC = b"GGUF"
# Value types (gguf.h): their size in bytes, strings (8) and arrays (9) apart.
_FIXED_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_INTEGERS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 10: "<Q", 11: "<q"}
_STRING, _ARRAY = 8, 9


class _Truncated(Exception):
    """The file ended inside its header."""


def gguf_context_length(path: Path) -> int | None:
    """`<general.architecture>.context_length` of a GGUF file; None when the file is no GGUF
    (version 2 or later), cannot be read, or does not say."""
    try:
        with path.open("rb") as file:
            return _context_length(file)
    except (OSError, _Truncated, UnicodeDecodeError, struct.error):
        return None


def _context_length(file: BinaryIO) -> int | None:
    magic, version = _read(file, 4), _unpack(file, "<I")
    if magic != _MAGIC or version < 2:
        return None
    _unpack(file, "<Q")  # tensor count
    architecture: str | None = None
    lengths: dict[str, int] = {}
    for _ in range(_unpack(file, "<Q")):
        key = _string(file)
        kind = _unpack(file, "<I")
        if key == "general.architecture" and kind == _STRING:
            architecture = _string(file)
        elif key.endswith(".context_length") and kind in _INTEGERS:
            lengths[key] = _unpack(file, _INTEGERS[kind])
        else:
            _skip(file, kind)
        if architecture is not None and f"{architecture}.context_length" in lengths:
            return lengths[f"{architecture}.context_length"] or None
    return None


def _skip(file: BinaryIO, kind: int) -> None:
    if kind == _STRING:
        file.seek(_unpack(file, "<Q"), 1)
    elif kind == _ARRAY:
        item, count = _unpack(file, "<I"), _unpack(file, "<Q")
        if item in _FIXED_SIZES:
            file.seek(_FIXED_SIZES[item] * count, 1)
        else:
            for _ in range(count):
                _skip(file, item)
    elif kind in _FIXED_SIZES:
        file.seek(_FIXED_SIZES[kind], 1)
    else:
        raise _Truncated(f"unknown GGUF value type {kind}")


def _string(file: BinaryIO) -> str:
    return _read(file, _unpack(file, "<Q")).decode("utf-8")


def _unpack(file: BinaryIO, fmt: str) -> int:
    value: int = struct.unpack(fmt, _read(file, struct.calcsize(fmt)))[0]
    return value


def _read(file: BinaryIO, size: int) -> bytes:
    data = file.read(size)
    if len(data) != size:
        raise _Truncated
    return data
