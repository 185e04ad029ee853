"""A content-addressed store for snapshots: one append-only pack file and its index.

Every object (a file's bytes, a symlink's target, a directory listing) is stored once, under the
SHA-256 of its bytes, zlib-compressed, appended to `objects.pack`; `objects.idx` has one line
`<id> <offset> <length>` per object. One file instead of one per object keeps a 10,000-file
workspace from costing 10,000 inodes and blocks, and makes a checkpoint durable with two fsyncs.

Crash safety: an object counts only once its index line is whole, and that line is written after
the object's bytes; a checkpoint refers to objects only after `flush`. A process killed mid-write
leaves a torn tail that reading ignores and the next writer writes past.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from pathlib import Path

PACK = "objects.pack"
INDEX = "objects.idx"
# Fast compression: a checkpoint runs before the agent's first write, so speed wins over size.
LEVEL = 1


class CorruptObject(Exception):
    """An object the index names cannot be read back as stored."""


def object_id(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class ObjectStore:
    """Opened by one process at a time (the checkpoint lock sees to that)."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        self._pack = os.open(directory / PACK, flags, 0o600)
        self._idx = os.open(directory / INDEX, flags, 0o600)
        self._size = os.fstat(self._pack).st_size
        self._where: dict[str, tuple[int, int]] = {}
        self._pending: list[bytes] = []
        self._load_index()

    def _load_index(self) -> None:
        size = os.fstat(self._idx).st_size
        data = os.pread(self._idx, size, 0) if size else b""
        lines = data.split(b"\n")
        for raw in lines[:-1]:  # the last piece has no newline: empty, or torn by a crash
            parts = raw.split()
            if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
                continue
            offset, length = int(parts[1]), int(parts[2])
            if offset + length <= self._size:
                self._where[parts[0].decode()] = (offset, length)
        if lines[-1]:
            os.write(self._idx, b"\n")  # a torn line stays on a line of its own

    def __contains__(self, oid: str) -> bool:
        return oid in self._where

    def __len__(self) -> int:
        return len(self._where)

    def put(self, data: bytes, oid: str | None = None) -> str:
        """Store `data` unless it is stored already; `oid` when the caller has hashed it."""
        oid = oid or object_id(data)
        if oid in self._where:
            return oid
        packed = zlib.compress(data, LEVEL)
        view = memoryview(packed)
        while view:
            view = view[os.write(self._pack, view) :]
        self._where[oid] = (self._size, len(packed))
        self._pending.append(f"{oid} {self._size} {len(packed)}\n".encode())
        self._size += len(packed)
        return oid

    def get(self, oid: str) -> bytes:
        where = self._where.get(oid)
        if where is None:
            raise CorruptObject(f"object {oid[:12]} is missing from the checkpoint store")
        offset, length = where
        try:
            data = zlib.decompress(os.pread(self._pack, length, offset))
        except zlib.error as exc:
            raise CorruptObject(f"object {oid[:12]} is damaged: {exc}") from None
        if object_id(data) != oid:
            raise CorruptObject(f"object {oid[:12]} is damaged: its content does not match")
        return data

    def flush(self) -> None:
        """Make every object put so far durable, pack first, then its index lines."""
        if not self._pending:
            return
        os.fsync(self._pack)
        data = memoryview(b"".join(self._pending))
        while data:
            data = data[os.write(self._idx, data) :]
        os.fsync(self._idx)
        self._pending.clear()

    @property
    def disk_bytes(self) -> int:
        return self._size

    def close(self) -> None:
        try:
            self.flush()
        finally:
            os.close(self._pack)
            os.close(self._idx)
