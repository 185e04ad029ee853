"""L2: old tool results fold to one-line stubs; stale reads first; recent turns stay."""

from __future__ import annotations

from pathlib import Path

from codeloop.context.budget import persist_result
from codeloop.context.microcompact import (
    FOLDED_PREFIX,
    KeepRecent,
    describe_target,
    microcompact,
)
from codeloop.events import ResultRecord
from codeloop.types import Message, TextBlock, ToolResultBlock, ToolUseBlock
from tests.unit.context_history import assert_paired, bash, exchange, read

BIG = "x = 1\n" * 2_000  # 12 KB: ~3 000 tokens


def _history() -> tuple[Message, ...]:
    return (
        Message.user("find the bug"),
        *read("/src/a.py", BIG, "t1"),
        *bash("pytest -x tests/test_a.py", BIG, "t2"),
        *read("/src/b.py", BIG, "t3"),
        *read("/src/c.py", BIG, "t4"),
        *read("/src/d.py", BIG, "t5"),
    )


def _texts(messages: tuple[Message, ...]) -> dict[str, str]:
    return {r.tool_use_id: r.text for m in messages for r in m.tool_results}


def test_the_oldest_results_fold_first_and_recent_turns_stay() -> None:
    history = _history()
    new, folded = microcompact(history, 5_000, KeepRecent(turns=3, tokens=100_000))
    assert [r.tool_use_id for r in folded] == ["t1", "t2"]
    assert folded[1] == ResultRecord("t2", "Bash", "pytest -x tests/test_a.py", 3_000, "folded")
    assert_paired(new)
    texts = _texts(new)
    assert texts["t1"].startswith(FOLDED_PREFIX) and texts["t2"].startswith(FOLDED_PREFIX)
    assert texts["t3"] == texts["t4"] == texts["t5"] == BIG
    assert "Read /src/a.py" in texts["t1"] and "2000 lines, 11.7 KB" in texts["t1"]
    assert "Bash `pytest -x tests/test_a.py`" in texts["t2"]
    assert new[2].uuid == history[2].uuid


def test_it_stops_once_enough_is_freed() -> None:
    new, folded = microcompact(_history(), 100, KeepRecent(turns=1, tokens=0))
    assert len(folded) == 1
    assert _texts(new)["t2"] == BIG


def test_nothing_needed_changes_nothing() -> None:
    history = _history()
    assert microcompact(history, 0, KeepRecent()) == (history, ())


def test_the_recent_allowance_is_in_tokens_too_but_the_latest_turn_stays() -> None:
    new, folded = microcompact(_history(), 100_000, KeepRecent(turns=3, tokens=100))
    assert len(folded) == 4
    assert _texts(new)["t5"] == BIG


def test_a_read_superseded_by_a_later_read_goes_first_even_when_recent() -> None:
    history = (
        Message.user("fix a.py"),
        *bash("ls", BIG, "t1"),
        *read("/src/a.py", BIG, "t2"),
        *exchange("Edit", {"file_path": "/src/a.py"}, "ok", id="t3"),
        *read("/src/a.py", BIG, "t4"),
    )
    new, folded = microcompact(history, 100, KeepRecent(turns=5, tokens=100_000))
    assert len(folded) == 1
    texts = _texts(new)
    assert "superseded" in texts["t2"] and "Read /src/a.py" in texts["t2"]
    assert texts["t1"] == texts["t4"] == BIG


def test_a_write_supersedes_earlier_reads_of_its_file() -> None:
    history = (
        *read("/src/a.py", BIG, "t1"),
        *exchange("Write", {"file_path": "/src/a.py", "content": "new"}, "written", id="t2"),
    )
    new, folded = microcompact(history, 1, KeepRecent(turns=5, tokens=100_000))
    assert len(folded) == 1 and "superseded" in _texts(new)["t1"]


def test_a_saved_result_keeps_its_path_in_the_stub(tmp_path: Path) -> None:
    preview = persist_result("t1", BIG * 4, tmp_path)
    history = (*bash("cat big.log", preview, "t1"), *bash("ls", BIG, "t2"))
    new, folded = microcompact(history, 1, KeepRecent(turns=1, tokens=0))
    assert len(folded) == 1 and folded[0].path == str(tmp_path / "t1.txt")
    stub = _texts(new)["t1"]
    assert f"full output saved in {tmp_path / 't1.txt'}" in stub


def test_results_the_model_has_not_answered_never_fold() -> None:
    """Not the latest turn's, not even one a later Read of the same turn supersedes: the
    request carrying them is the model's first sight of them."""
    calls = [ToolUseBlock(f"n{i}", "Read", {"file_path": "/src/a.py"}) for i in range(2)]
    history = (
        *read("/src/a.py", BIG, "t1"),
        Message("assistant", (TextBlock("Reading it twice."), *calls)),
        Message("user", tuple(ToolResultBlock(c.id, BIG) for c in calls)),
    )
    new, folded = microcompact(history, 100_000, KeepRecent(turns=0, tokens=0))
    assert [r.tool_use_id for r in folded] == ["t1"]
    assert new[-1] is history[-1]


def test_small_results_are_not_worth_a_stub() -> None:
    history = (*bash("ls", "a\nb\n", "t1"), *bash("ls", BIG, "t2"))
    assert microcompact(history, 10_000, KeepRecent(turns=1, tokens=0))[1] == ()


def test_targets_are_short_and_on_one_line() -> None:
    grep = ToolUseBlock("t", "Grep", {"pattern": "def main", "path": "src"})
    assert describe_target(grep) == "def main in src"
    long = ToolUseBlock("t", "Bash", {"command": "echo " + "a\n" * 200})
    target = describe_target(long)
    assert "\n" not in target and len(target) <= 122 and target.endswith("…`")
    assert describe_target(ToolUseBlock("t", "TodoWrite", {"todos": []})) == ""
