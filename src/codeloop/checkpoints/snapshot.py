"""Snapshots: a folder as it is on disk, turned into trees of entries in the object store.

A tree lists one directory: for each name its kind (file, symlink, directory, or skipped: not
stored), its permission bits, the id of its content (a file's bytes, a link's target, a
subdirectory's tree) and the stat fields that tell, next time, whether it may have changed.
Trees are content-addressed like the blobs, so a snapshot after a small change stores the
changed files and the trees on their paths, nothing else.

Everything counts: tracked, untracked and git-ignored files alike. Only `.git` (the user's
repository, never ours to touch) and the folders named in `exclude` (codeloop's own data) are
left out. A file bigger than the limit, or past the file-count limit, is recorded as skipped,
never stored, and a rewind names it instead of changing it.

Incremental: a file whose lstat matches the previous snapshot's is not read again, unless it
changed so close to that snapshot that a second change might share its timestamp (the "racy"
case git knows; filesystems with 2-second timestamps are covered).
"""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from codeloop.checkpoints.limits import Limits
from codeloop.checkpoints.objects import ObjectStore, object_id
from codeloop.checkpoints.watch import Watcher
from codeloop.system.valueclass import valueclass

FILE, LINK, DIR, SKIPPED = "f", "l", "d", "s"
# Never snapshotted nor restored: the user's repository metadata (a folder, or a worktree's file).
NEVER = frozenset({".git"})
# A change within this many ns of a snapshot may not show in the stat fields.
RACY_NS = 2_000_000_000
TOO_BIG = "bigger than the checkpoint size limit"
TOO_MANY = "past the checkpoint file-count limit"


class Stopped(Exception):
    """The snapshot was abandoned half-way (the session is closing): nothing refers to it."""


@valueclass(slots=True)
class Entry:
    """One name in a tree."""

    kind: str
    mode: int  # permission bits (st_mode & 0o7777); 0 for symlinks
    # A file's or link's blob id, a directory's tree id, or why a skipped entry was skipped.
    id: str
    size: int = 0
    mtime: int = 0
    ctime: int = 0
    ino: int = 0

    def same_content(self, other: Entry) -> bool:
        """Equal as a rewind sees it: what it holds and its mode, not its timestamps. A skipped
        entry's content is unknown: it is the same only while its stat fields are."""
        if self.kind != other.kind or self.mode != other.mode or self.id != other.id:
            return False
        if self.kind == SKIPPED:
            return (self.size, self.mtime, self.ino) == (other.size, other.mtime, other.ino)
        return True

    def to_json(self, name: str) -> list[object]:
        return [name, self.kind, self.mode, self.id, self.size, self.mtime, self.ctime, self.ino]


def encode_tree(entries: dict[str, Entry]) -> bytes:
    rows = [entries[name].to_json(name) for name in sorted(entries)]
    return json.dumps(rows, separators=(",", ":")).encode()


def decode_tree(data: bytes) -> dict[str, Entry]:
    return {row[0]: Entry(*row[1:]) for row in json.loads(data)}


# A file's lstat as far as telling a change goes: inode, size, mtime, ctime, type and mode.
StatKey = tuple[int, int, int, int, int]


def _name(item: os.DirEntry[str]) -> str:
    return item.name


def _with_parents(folders: set[str]) -> set[str]:
    """The folders and every folder above them: what a change below reaches."""
    out: set[str] = set()
    for folder in folders:
        while folder not in out:
            out.add(folder)
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    return out


@valueclass(frozen=False)
class ScanStats:
    """What one snapshot cost."""

    files: int = 0
    hashed: int = 0  # files read because they were new or changed
    hashed_bytes: int = 0
    skipped: int = 0
    listed: int = 0  # folders listed (with a watcher, only those something changed in)
    limited: bool = False  # the file-count limit was reached: later folders were skipped


@valueclass(frozen=False)
class _Scan:
    """One snapshot in progress."""

    stats: ScanStats
    dirty: set[str] | None  # folders the watcher saw change; None: list every folder
    touched: set[str]  # those and every folder above them


class Scanner:
    """Takes snapshots of folders, remembering each file's last entry to skip unchanged ones."""

    def __init__(
        self,
        store: ObjectStore,
        limits: Limits,
        exclude: frozenset[Path],
        watcher: Watcher | None = None,
        stop: threading.Event | None = None,
    ) -> None:
        self.store = store
        # Set when the session closes: a long snapshot then stops between folders.
        self._stop = stop or threading.Event()
        self.limits = limits
        self._exclude = {str(p) for p in exclude}
        self.watcher = watcher
        # Path -> (its lstat key, its entry, whether that key can be trusted next time).
        self._cache: dict[str, tuple[StatKey, Entry, bool]] = {}
        # Folder -> its entries, tree id and file count last time: an unchanged folder is not
        # encoded again, and with a watcher not even listed.
        self._dirs: dict[str, tuple[dict[str, Entry], str, int]] = {}
        self._trees: dict[str, dict[str, Entry]] = {}
        self._started = 0
        self._limited = False

    def remember(self, root: Path, tree_id: str, taken_ns: int) -> None:
        """Seed the cache from an earlier snapshot (a resumed session's last one)."""
        for rel, entry in self.flatten(tree_id):
            if entry.kind in (FILE, LINK):
                mode = (stat.S_IFLNK | 0o777) if entry.kind == LINK else stat.S_IFREG | entry.mode
                key = (entry.ino, entry.size, entry.mtime, entry.ctime, mode)
                trusted = max(entry.mtime, entry.ctime) + RACY_NS < taken_ns
                self._cache[os.path.join(root, rel)] = (key, entry, trusted)

    def scan(
        self, roots: list[Path], *, full: bool = False
    ) -> tuple[dict[str, str], ScanStats, int]:
        """Snapshot every root: {root: tree id}, what it cost, and when it started (ns).
        `full` lists every folder even where the watcher saw nothing change."""
        self._started = time.time_ns()
        dirty = self.watcher.drain() if self.watcher is not None else None
        if full or self._limited:
            dirty = None
        scan = _Scan(ScanStats(), dirty, _with_parents(dirty or set()))
        trees = {str(root): self._scan_dir(str(root), scan) for root in roots}
        self._limited = scan.stats.limited
        return trees, scan.stats, self._started

    def _scan_dir(self, path: str, scan: _Scan) -> str:
        """The tree id of one directory; OSError when it cannot be listed."""
        if self._stop.is_set():
            raise Stopped("the session closed before the snapshot was complete")
        stats = scan.stats
        watcher, last = self.watcher, self._dirs.get(path)
        known = last is not None and watcher is not None and watcher.watching(path)
        if known and scan.dirty is not None and path not in scan.touched:
            assert last is not None
            stats.files += last[2]  # nothing below changed: the tree stands
            return last[1]
        if watcher is not None and not watcher.watching(path):
            watcher.watch(path)  # before listing: a change from now on is reported
        counted = stats.files
        if known and scan.dirty is not None and path not in scan.dirty:
            assert last is not None  # its entries stand; something below changed
            entries = {
                name: self._subfolder(path, name, entry, scan) if entry.kind == DIR else entry
                for name, entry in last[0].items()
            }
            stats.files += sum(entry.kind != DIR for entry in entries.values())
        else:
            entries = self._list(path, scan)
        if last is not None and last[0] == entries:
            self._dirs[path] = (entries, last[1], stats.files - counted)
            return last[1]
        oid = self._put_tree(entries)
        self._dirs[path] = (entries, oid, stats.files - counted)
        return oid

    def _subfolder(self, path: str, name: str, entry: Entry, scan: _Scan) -> Entry:
        return Entry(DIR, entry.mode, self._scan_dir(os.path.join(path, name), scan))

    def _list(self, path: str, scan: _Scan) -> dict[str, Entry]:
        entries: dict[str, Entry] = {}
        scan.stats.listed += 1
        with os.scandir(path) as it:
            listing = sorted(it, key=_name)
        for item in listing:
            if item.name in NEVER or item.path in self._exclude:
                continue
            try:
                st = item.stat(follow_symlinks=False)
            except OSError:
                continue  # gone since the listing
            entry = self._entry(item.path, st, scan)
            if entry is not None:
                entries[item.name] = entry
        return entries

    def _entry(self, path: str, st: os.stat_result, scan: _Scan) -> Entry | None:
        stats, mode = scan.stats, st.st_mode
        if stats.files >= self.limits.max_files:
            stats.skipped += 1
            stats.limited = True
            return Entry(SKIPPED, stat.S_IMODE(mode), TOO_MANY, 0, st.st_mtime_ns, 0, st.st_ino)
        if stat.S_ISDIR(mode):
            try:
                return Entry(DIR, stat.S_IMODE(mode), self._scan_dir(path, scan))
            except OSError as exc:
                stats.skipped += 1
                why = f"unreadable: {exc.strerror}"
                return Entry(SKIPPED, stat.S_IMODE(mode), why, 0, st.st_mtime_ns, 0, st.st_ino)
        stats.files += 1
        key = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, mode)
        cached = self._cache.get(path)
        if cached is not None and cached[2] and cached[0] == key:
            return cached[1]
        entry = self._read(path, st, stats)
        if entry is not None and entry.kind != SKIPPED:
            trusted = max(st.st_mtime_ns, st.st_ctime_ns) + RACY_NS < self._started
            self._cache[path] = (key, entry, trusted)
        return entry

    def _read(self, path: str, st: os.stat_result, stats: ScanStats) -> Entry | None:
        stamp = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        perms = stat.S_IMODE(st.st_mode)
        if stat.S_ISLNK(st.st_mode):
            try:
                target = os.fsencode(os.readlink(path))
            except OSError:
                return None
            return Entry(LINK, 0, self.store.put(target), *stamp)
        if not stat.S_ISREG(st.st_mode):
            stats.skipped += 1
            return Entry(SKIPPED, perms, "not a regular file", *stamp)
        if st.st_size > self.limits.max_file_bytes:
            stats.skipped += 1
            return Entry(SKIPPED, perms, TOO_BIG, *stamp)
        try:
            data = _read_file(path, st.st_size, self.limits.max_file_bytes)
        except OSError as exc:
            stats.skipped += 1
            return Entry(SKIPPED, perms, f"unreadable: {exc.strerror}", *stamp)
        if data is None:  # it grew past the limit while being read
            stats.skipped += 1
            return Entry(SKIPPED, perms, TOO_BIG, *stamp)
        stats.hashed += 1
        stats.hashed_bytes += len(data)
        return Entry(FILE, perms, self.store.put(data), *stamp)

    def _put_tree(self, entries: dict[str, Entry]) -> str:
        data = encode_tree(entries)
        oid = object_id(data)
        if oid not in self._trees:
            self._trees[oid] = entries
        return self.store.put(data, oid)

    # --- reading snapshots back -----------------------------------------------------------

    def tree(self, tree_id: str) -> dict[str, Entry]:
        entries = self._trees.get(tree_id)
        if entries is None:
            entries = self._trees[tree_id] = decode_tree(self.store.get(tree_id))
        return entries

    def flatten(self, tree_id: str, prefix: str = "") -> Iterator[tuple[str, Entry]]:
        """Every entry under a tree, parents before children, paths relative to its root."""
        for name, entry in sorted(self.tree(tree_id).items()):
            rel = f"{prefix}{name}"
            yield rel, entry
            if entry.kind == DIR:
                yield from self.flatten(entry.id, f"{rel}/")

    def blob(self, entry: Entry) -> bytes:
        return self.store.get(entry.id)


def _read_file(path: str, size: int, limit: int) -> bytes | None:
    """The file's bytes, or None past `limit`; never follows a link swapped in, never blocks on
    a FIFO swapped in. One read for a file that still has the size its lstat said."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        chunks = []
        total = 0
        want = size + 1  # a short read is the end of a regular file
        while chunk := os.read(fd, max(want, 1 << 16)):
            total += len(chunk)
            if total > limit:
                return None
            chunks.append(chunk)
            if len(chunk) < want:
                break
            want = 1 << 20
        return b"".join(chunks)
    finally:
        os.close(fd)
