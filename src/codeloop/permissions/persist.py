"""Keep "allow always" answers: add rules to a settings file, keeping everything else in it."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any


class PersistError(OSError):
    """The settings file exists but is not a JSON object we can safely add to."""


def add_allow_rules(path: Path, rules: Sequence[str]) -> None:
    """Append `rules` to `permissions.allow` in `path` (created if missing), atomically.

    A file that is not valid JSON, or has a non-list `allow`, is left untouched: overwriting
    it would lose the user's other settings."""
    data: dict[str, Any] = {}
    if path.exists():
        text = path.read_text(encoding="utf-8")
        try:
            loaded = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as exc:
            raise PersistError(f"{path} is not valid JSON ({exc.msg}); rule not saved") from None
        if not isinstance(loaded, dict):
            raise PersistError(f"{path} is not a JSON object; rule not saved")
        data = loaded
    permissions = data.setdefault("permissions", {})
    allow = permissions.setdefault("allow", []) if isinstance(permissions, dict) else None
    if not isinstance(allow, list):
        raise PersistError(f"{path}: permissions.allow is not a list; rule not saved")
    allow.extend(rule for rule in dict.fromkeys(rules) if rule not in allow)
    write_json_atomic(path, data)


def write_json_atomic(path: Path, data: Any) -> None:
    """Write `data` as `path` all at once: a crash leaves the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".settings-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
