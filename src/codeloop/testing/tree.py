"""A fingerprint of a directory tree, to prove that something left it byte-for-byte unchanged."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def tree_digest(root: Path) -> str:
    """Every path under `root` with its mode, each file's bytes and each symlink's target (names
    that are not UTF-8 included)."""
    digest = hashlib.sha256()
    for directory, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted([*dirs, *files]):
            path = Path(directory, name)
            digest.update(os.fsencode(f"{path.relative_to(root)}\0{path.lstat().st_mode}\0"))
            if path.is_symlink():
                digest.update(os.fsencode(os.readlink(path)))
            elif path.is_file():
                digest.update(path.read_bytes())
    return digest.hexdigest()
