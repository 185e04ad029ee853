"""Claude Code's permission modes and the other names it accepts for them: a leaf, so that a
face's parser can offer them without loading the policy."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"]
PERMISSION_MODES: tuple[PermissionMode, ...] = (
    "default",
    "acceptEdits",
    "plan",
    "bypassPermissions",
    "dontAsk",
    "auto",
)
# Claude Code's other names for modes codeloop runs as one of its own.
MODE_ALIASES: Mapping[str, PermissionMode] = {"manual": "default"}
