"""JSON files codeloop edits for the user: read as an object, written whole and atomically.

Settings, MCP server lists and OAuth tokens are all files a person may also edit by hand; a
file that is not a JSON object is never overwritten (that would lose what is in it), and a
write is a rename, so a crash leaves the old file or the new one, never half of either.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

# What this process last wrote to each file (mtime, size, inode): a change found later that
# still has this stamp is codeloop's own (a rule "always allowed"), already in effect.
_WRITTEN: dict[Path, tuple[int, int, int]] = {}


def written_here(path: Path) -> bool:
    """Whether the file is as this process last wrote it."""
    try:
        st = path.stat()
    except OSError:
        return False
    return _WRITTEN.get(path.absolute()) == (st.st_mtime_ns, st.st_size, st.st_ino)


class JsonFileError(OSError):
    """The file exists but is not a JSON object we can safely change."""


def read_json_object(path: Path) -> dict[str, Any]:
    """The file's object; {} when it does not exist or is empty."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JsonFileError(f"{path} is not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise JsonFileError(f"{path} is not a JSON object")
    return data


def write_json_atomic(path: Path, data: Any, *, private: bool = False) -> None:
    """Replace `path` with `data`; `private` makes the file (and a folder it creates) the
    user's alone (0600/0700), for files holding secrets."""
    if private:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2, ensure_ascii=False)
            f.write("\n")
        if not private:
            # mkstemp creates 0600; a shared file (.mcp.json, settings) keeps the mode it had,
            # or gets the usual one.
            os.chmod(tmp, _shared_mode(path))
        os.replace(tmp, path)
        st = path.stat()
        _WRITTEN[path.absolute()] = (st.st_mtime_ns, st.st_size, st.st_ino)
    except BaseException:
        os.unlink(tmp)
        raise


def _shared_mode(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
