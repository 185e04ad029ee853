"""Edit and Write report their change as hunks; GNU diff is the oracle for the hunks."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeloop.tools.base import ToolContext, Workspace
from codeloop.tools.files_write import WriteTool
from codeloop.tools.patch import structured_patch
from tests.unit.test_tools_files import edit, read, run


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(Workspace(cwd=tmp_path))


_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def gnu_diff(tmp: Path, old: str, new: str) -> list[dict[str, Any]]:
    (tmp / "a").write_text(old)
    (tmp / "b").write_text(new)
    out = subprocess.run(
        ["diff", "-U3", str(tmp / "a"), str(tmp / "b")], capture_output=True, text=True
    ).stdout
    hunks: list[dict[str, Any]] = []
    for line in out.splitlines()[2:]:
        if m := _HEADER.match(line):
            a, al, b, bl = m.groups()
            hunks.append(
                {
                    "oldStart": int(a),
                    "oldLines": int(al if al is not None else 1),
                    "newStart": int(b),
                    "newLines": int(bl if bl is not None else 1),
                    "lines": [],
                }
            )
        elif not line.startswith("\\"):
            hunks[-1]["lines"].append(line)
    return hunks


lines = st.lists(st.sampled_from(["a", "b", "c", "d", ""]), max_size=30)


@settings(max_examples=60, deadline=None)
@given(old=lines, new=lines)
def test_hunks_turn_the_old_text_into_the_new(old: list[str], new: list[str]) -> None:
    a = "".join(f"{x}\n" for x in old)
    b = "".join(f"{x}\n" for x in new)
    hunks = structured_patch(a, b)
    for h in hunks:
        assert h["oldLines"] == sum(line[0] in " -" for line in h["lines"])
        assert h["newLines"] == sum(line[0] in " +" for line in h["lines"])
    assert _apply(a.splitlines(), hunks) == b.splitlines()
    assert (hunks == []) == (a == b)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("".join(f"{i}\n" for i in range(30)), "".join(f"{i}\n" for i in range(30) if i != 15)),
        ("".join(f"{i}\n" for i in range(30)), "".join(f"{i}\n" for i in [*range(30), 99])),
        ("", "x\ny\n"),
        ("a\nb\n", ""),
        ("".join(f"{i}\n" for i in range(40)), "".join(f"{i * (i % 9 != 0)}\n" for i in range(40))),
    ],
)
def test_hunk_headers_are_gnu_diffs(tmp_path: Path, old: str, new: str) -> None:
    assert structured_patch(old, new) == gnu_diff(tmp_path, old, new)


def _apply(old: list[str], hunks: list[dict[str, Any]]) -> list[str]:
    """Apply hunks to old: the patch must turn the old text into the new one."""
    out: list[str] = []
    pos = 0
    for h in hunks:
        start = h["oldStart"] - 1 if h["oldLines"] else h["oldStart"]
        out += old[pos:start]
        pos = start
        for line in h["lines"]:
            if line[0] in " -":
                assert old[pos] == line[1:]
                pos += 1
            if line[0] in " +":
                out.append(line[1:])
    return out + old[pos:]


async def test_edit_reports_its_change_as_hunks(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "f.py"
    path.write_text("".join(f"line {i}\n" for i in range(1, 21)))
    await read(ctx, path)
    result = await edit(ctx, path, "line 10\n", "line ten\n")
    assert result.data is not None
    assert result.data["filePath"] == str(path) and result.data["type"] == "update"
    (hunk,) = result.data["structuredPatch"]
    assert hunk["oldStart"] == 7 and hunk["oldLines"] == 7
    assert "-line 10" in hunk["lines"] and "+line ten" in hunk["lines"]


async def test_write_reports_a_new_file_and_a_replaced_one(
    ctx: ToolContext, tmp_path: Path
) -> None:
    path = tmp_path / "new.txt"
    created = await run(WriteTool(), ctx, file_path=str(path), content="one\ntwo\n")
    assert created.data is not None and created.data["type"] == "create"
    assert created.data["structuredPatch"][0]["lines"] == ["+one", "+two"]
    replaced = await run(WriteTool(), ctx, file_path=str(path), content="one\n2\n")
    assert replaced.data is not None and replaced.data["type"] == "update"
    assert replaced.data["structuredPatch"][0]["lines"] == [" one", "-two", "+2"]
