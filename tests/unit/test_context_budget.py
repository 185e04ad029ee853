"""L1: big tool results move to files; the history keeps a preview and the path."""

from __future__ import annotations

from pathlib import Path

from codeloop.context.budget import (
    PERSISTED_TAG,
    ResultBudget,
    apply_result_budget,
    saved_path,
)
from codeloop.types import ImageBlock, Message, TextBlock, ToolResultBlock
from tests.unit.context_history import assert_paired, bash, exchange


def _budget(tmp_path: Path, per_result: int = 1_000, per_message: int = 100_000) -> ResultBudget:
    return ResultBudget(per_result, per_message, tmp_path / "tool-results")


def test_a_big_result_is_saved_and_previewed(tmp_path: Path) -> None:
    output = "".join(f"line {i}\n" for i in range(2_000))  # ~17 KB, ~4 300 tokens
    history = (Message.user("run it"), *bash("make", output, "toolu_1"))
    new, saved = apply_result_budget(history, _budget(tmp_path))
    assert saved == 1
    assert_paired(new)
    preview = new[2].tool_results[0].text
    assert preview.startswith(PERSISTED_TAG)
    path = saved_path(preview)
    assert path is not None
    assert Path(path).read_text() == output
    assert "line 0\n" in preview and "line 1999" in preview  # head and tail
    assert "line 1000\n" not in preview
    assert len(preview) < 3_000
    assert new[2].uuid == history[2].uuid
    # Idempotent: a preview is never saved again, and the history object comes back as is.
    again, saved_again = apply_result_budget(new, _budget(tmp_path))
    assert saved_again == 0 and again[2] is new[2]


def test_small_results_and_other_messages_are_untouched(tmp_path: Path) -> None:
    history = (Message.user("hi"), *bash("ls", "a\nb\n", "toolu_1"))
    new, saved = apply_result_budget(history, _budget(tmp_path))
    assert saved == 0
    assert all(a is b for a, b in zip(new, history, strict=True))
    assert not (tmp_path / "tool-results").exists()


def test_the_message_budget_saves_the_largest_results_first(tmp_path: Path) -> None:
    sizes = {"toolu_a": 3_000, "toolu_b": 9_000, "toolu_c": 6_000}  # characters
    results = tuple(ToolResultBlock(i, "x" * n) for i, n in sizes.items())
    history = (Message("user", results),)
    # Each is under the per-result limit; together (4 500 tokens) they pass 3 000.
    new, saved = apply_result_budget(history, _budget(tmp_path, 5_000, 3_000))
    assert saved == 1
    texts = {b.tool_use_id: b.text for b in new[0].tool_results}
    assert texts["toolu_b"].startswith(PERSISTED_TAG)
    assert texts["toolu_a"] == "x" * 3_000 and texts["toolu_c"] == "x" * 6_000


def test_images_are_not_saved(tmp_path: Path) -> None:
    image = (ImageBlock("image/png", "A" * 50_000), TextBlock("y" * 50_000))
    history = (Message("user", (ToolResultBlock("toolu_1", image),)),)
    new, saved = apply_result_budget(history, _budget(tmp_path))
    assert saved == 0 and new[0] is history[0]


def test_an_unwritable_folder_still_shrinks_the_result(tmp_path: Path) -> None:
    (tmp_path / "tool-results").write_text("a file where the folder should be")
    call, answer = exchange("Grep", {"pattern": "x"}, "match\n" * 5_000, id="toolu_1")
    new, saved = apply_result_budget((call, answer), _budget(tmp_path))
    preview = new[1].tool_results[0].text
    assert saved == 1
    assert "could not be saved" in preview and saved_path(preview) is None
    assert len(preview) < 3_000
