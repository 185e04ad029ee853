"""What the session knows a file holds, so that Edit, Write and NotebookEdit change it only as
the model last saw it.

A file is judged by its content, its size and a SHA-256 of its bytes, never by its mtime
alone: `cp -p`, `touch -r`, `os.utime`, editors and sync tools keep the mtime while changing
the bytes, and a `touch` changes the mtime without them. It stays cheap because the bytes are
in hand each time: Read hashes them as it streams them, a write hashes what it wrote, and the
writers hash the bytes they read to change anyway. SHA-256 because OpenSSL's is the fastest
hashlib has on CPUs with SHA instructions (~1.5 GB/s, blake2b ~0.55): ~20 µs a 30 KB file.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, MutableMapping
from pathlib import Path

from codeloop.system.valueclass import valueclass

_HASH = hashlib.sha256


@valueclass(slots=True)
class FileStamp:
    """A file as the session last read or wrote it."""

    size: int
    digest: bytes
    # Not what a change is judged by: it tells whoever changed the file kept the mtime.
    mtime_ns: int

    def change(self, data: bytes, mtime_ns: int) -> str:
        """How the file, now `data` with `mtime_ns`, differs from this ("" when it does not)."""
        if len(data) != self.size:
            return f"size {self.size:,} → {len(data):,} bytes"
        if _HASH(data).digest() == self.digest:
            return ""
        if mtime_ns == self.mtime_ns:
            return "content changed, mtime unchanged"
        return "content changed, same size"


class ContentHash:
    """A file's stamp taken as its bytes go by, a block at a time (Read streams big files)."""

    def __init__(self) -> None:
        self._hash = _HASH()
        self._size = 0

    def update(self, data: bytes) -> None:
        self._hash.update(data)
        self._size += len(data)

    def stamp(self, mtime_ns: int) -> FileStamp:
        return FileStamp(self._size, self._hash.digest(), mtime_ns)


def stamp_of(data: bytes, mtime_ns: int) -> FileStamp:
    """The stamp of a file that holds `data` (what a write just wrote)."""
    return FileStamp(len(data), _HASH(data).digest(), mtime_ns)


class FileStamps(MutableMapping[Path, FileStamp]):
    """The session's stamps, one a file whatever name it is given: a file read by a symlink or
    through a linked folder and changed by its own name (or the other way round) is the file
    the model saw, not one it never read."""

    def __init__(self) -> None:
        self._stamps: dict[Path, FileStamp] = {}

    def __getitem__(self, path: Path) -> FileStamp:
        return self._stamps[_real(path)]

    def __setitem__(self, path: Path, stamp: FileStamp) -> None:
        self._stamps[_real(path)] = stamp

    def __delitem__(self, path: Path) -> None:
        del self._stamps[_real(path)]

    def __iter__(self) -> Iterator[Path]:
        return iter(self._stamps)

    def __len__(self) -> int:
        return len(self._stamps)


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))
