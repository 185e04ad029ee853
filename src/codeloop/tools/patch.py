"""A file change as hunks, in the shape of Claude Code's `structuredPatch`: what frontends show
as a diff after Edit and Write (the model reads the tools' text results, not this)."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

CONTEXT_LINES = 3
# Beyond this many characters a change is reported without hunks: diffing is quadratic at worst.
MAX_DIFF_CHARS = 1_000_000


def structured_patch(old: str, new: str, context: int = CONTEXT_LINES) -> list[dict[str, Any]]:
    """Hunks `{oldStart, oldLines, newStart, newLines, lines}`; each line starts with " ", "-"
    or "+" (1-based starts, as a unified diff has them)."""
    a, b = old.splitlines(), new.splitlines()
    hunks = []
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(context):
        first, last = group[0], group[-1]
        lines: list[str] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [" " + line for line in a[i1:i2]]
                continue
            lines += ["-" + line for line in a[i1:i2]]
            lines += ["+" + line for line in b[j1:j2]]
        old_lines, new_lines = last[2] - first[1], last[4] - first[3]
        hunks.append(
            {
                "oldStart": first[1] + (1 if old_lines else 0),
                "oldLines": old_lines,
                "newStart": first[3] + (1 if new_lines else 0),
                "newLines": new_lines,
                "lines": lines,
            }
        )
    return hunks


def change_data(path: Path, old: str | None, new: str) -> dict[str, Any]:
    """What Edit and Write report to frontends: the file, whether it is new, and the hunks
    (none for a change too big to diff)."""
    small = len(old or "") + len(new) <= MAX_DIFF_CHARS
    return {
        "type": "create" if old is None else "update",
        "filePath": str(path),
        "structuredPatch": structured_patch(old or "", new) if small else [],
    }
