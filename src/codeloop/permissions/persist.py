"""Keep "allow always" and "deny always" answers, and take rules out again (/permissions):
change a settings file's rule lists, keeping everything else in it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from codeloop.system.jsonfile import JsonFileError, read_json_object, write_json_atomic


class PersistError(OSError):
    """The settings file exists but is not a JSON object we can safely add to."""


def add_rules(path: Path, kind: Literal["allow", "deny"], rules: Sequence[str]) -> None:
    """Append `rules` to `permissions.<kind>` in `path` (created if missing), atomically.

    A file that is not valid JSON, or has a non-list rule list, is left untouched: overwriting
    it would lose the user's other settings."""
    try:
        data = read_json_object(path)
    except JsonFileError as exc:
        raise PersistError(f"{exc}; rule not saved") from None
    permissions = data.setdefault("permissions", {})
    listed = permissions.setdefault(kind, []) if isinstance(permissions, dict) else None
    if not isinstance(listed, list):
        raise PersistError(f"{path}: permissions.{kind} is not a list; rule not saved")
    listed.extend(rule for rule in dict.fromkeys(rules) if rule not in listed)
    write_json_atomic(path, data)


def remove_rule(path: Path, kind: str, rule: str) -> None:
    """Take `rule` out of `permissions.<kind>` in `path`, keeping everything else."""
    try:
        data = read_json_object(path)
    except JsonFileError as exc:
        raise PersistError(f"{exc}; rule not removed") from None
    permissions = data.get("permissions")
    listed = permissions.get(kind) if isinstance(permissions, dict) else None
    if isinstance(listed, list) and rule in listed:
        listed.remove(rule)
        write_json_atomic(path, data)
