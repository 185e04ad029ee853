"""L1, as results are made: a big result moves to a file behind a preview before anyone sees
it; Read pages itself instead and is never saved; a turn's results share one allowance."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, ClassVar

from codeloop.context.budget import (
    PERSISTED_TAG,
    SAVED_NOTE_TOKENS,
    persist_result,
    saved_path,
)
from codeloop.context.pipeline import ContextManager
from codeloop.context.tokens import ContextLimits, estimate_text
from codeloop.events import ToolFinished
from codeloop.testing.scripted import ScriptedModel
from codeloop.tools.base import (
    AnyTool,
    Tool,
    ToolContext,
    ToolResult,
    Workspace,
)
from codeloop.tools.executor import ToolExecutor
from codeloop.tools.files_read import ReadTool
from codeloop.tools.input import ToolInput
from codeloop.tools.permission import PermissionDecision
from codeloop.types import ImageBlock, TextBlock, ToolUseBlock
from codeloop.workspace.tool_workspace import ResultLimits
from tests.unit.context_history import summarizer


class PrintInput(ToolInput):
    chars: int
    image: bool = False


class PrintTool(Tool[PrintInput]):
    """Prints `chars` lines' worth of output, like a command would."""

    name: ClassVar[str] = "Print"
    description: ClassVar[str] = "test tool"
    input_model = PrintInput

    def is_read_only(self, args: PrintInput) -> bool:
        return True

    async def call(self, args: PrintInput, ctx: ToolContext) -> ToolResult:
        text = "".join(f"line {i}\n" for i in range(args.chars // 5))[: args.chars]
        if args.image:
            return ToolResult((ImageBlock("image/png", "A" * 50_000), TextBlock(text)))
        return ToolResult(text)


async def _allow(tool: Any, args: Any, ctx: ToolContext) -> PermissionDecision:
    return PermissionDecision(True)


def _workspace(tmp_path: Path, window: int = 64_000) -> Workspace:
    """A workspace sized by a context manager for `window`, as a session's is."""
    workspace = Workspace(cwd=tmp_path)
    limits = ContextLimits(window, window // 4)
    ContextManager(summarizer(ScriptedModel([])), limits, workspace, tmp_path / "tool-results")
    return workspace


async def _turn(
    workspace: Workspace, *calls: tuple[str, dict[str, Any]], answer_tokens: int = 0
) -> list[ToolResult]:
    tools: dict[str, AnyTool] = {"Print": PrintTool(), "Read": ReadTool()}
    executor = ToolExecutor(tools, workspace, _allow)
    for i, (name, args) in enumerate(calls):
        executor.add(ToolUseBlock(f"toolu_{i}", name, args), answer_tokens)
    finished = [e async for e in executor.remaining() if isinstance(e, ToolFinished)]
    return [ToolResult(e.result.content, e.result.is_error) for e in finished]


async def test_a_big_result_is_saved_and_previewed_as_it_is_made(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    limit = workspace.result_limits.result_tokens
    (result,) = await _turn(workspace, ("Print", {"chars": limit * 6}))
    preview = result.text
    assert preview.startswith(PERSISTED_TAG) and len(preview) < 3_000
    path = saved_path(preview)
    assert path == str(tmp_path / "tool-results" / "toolu_0.txt")
    output = await asyncio.to_thread(Path(path).read_text)
    assert len(output) == limit * 6 and output.startswith("line 0\n")
    assert "line 0\n" in preview and output[-20:] in preview  # head and tail


async def test_a_result_within_its_share_is_left_alone(tmp_path: Path) -> None:
    (result,) = await _turn(_workspace(tmp_path), ("Print", {"chars": 4_000}))
    assert result.text.startswith("line 0\n") and len(result.text) == 4_000
    assert not (tmp_path / "tool-results").exists()


async def test_a_turns_results_share_one_allowance(tmp_path: Path) -> None:
    """Each under the per-result limit; together past the turn's share: the ones that no
    longer fit are saved, the others come whole."""
    workspace = _workspace(tmp_path)
    each = workspace.result_limits.result_tokens * 4 * 9 // 10  # characters
    calls = [("Print", {"chars": each})] * 3
    results = await _turn(workspace, *calls)
    whole = [r for r in results if not r.text.startswith(PERSISTED_TAG)]
    assert 1 <= len(whole) < 3
    total = sum(estimate_text(r.text) for r in results)
    assert total <= workspace.result_limits.turn_tokens + 3 * 1_000  # previews aside


async def test_results_past_the_turns_allowance_are_saved_however_small(tmp_path: Path) -> None:
    """Small results once passed the allowance whole, so a small window's turn could outgrow
    what a compaction keeps word for word; past it, a result is saved, its preview within
    what is left."""
    workspace = _workspace(tmp_path)
    workspace.result_limits = ResultLimits(result_tokens=1_000, turn_tokens=1_300)
    results = await _turn(workspace, *[("Print", {"chars": 2_400})] * 3)  # 600 tokens each
    saved = [r for r in results if r.text.startswith(PERSISTED_TAG)]
    assert len(saved) == 1 and len(saved[0].text) < 600
    path = saved_path(saved[0].text)
    assert path is not None and len(await asyncio.to_thread(Path(path).read_text)) == 2_400
    assert sum(estimate_text(r.text) for r in results) <= 1_300 + SAVED_NOTE_TOKENS


async def test_a_long_answer_leaves_its_calls_less_room(tmp_path: Path) -> None:
    """The answer and its results together must fit what a compaction keeps of the turn."""
    workspace = _workspace(tmp_path)
    workspace.result_limits = ResultLimits(1_000, 2_500, unanswered_tokens=1_500)
    (roomy,) = await _turn(workspace, ("Print", {"chars": 2_400}), answer_tokens=100)
    (squeezed,) = await _turn(workspace, ("Print", {"chars": 2_400}), answer_tokens=1_000)
    assert len(roomy.text) == 2_400
    assert squeezed.text.startswith(PERSISTED_TAG) and estimate_text(squeezed.text) <= 500


async def test_images_are_never_saved(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    (result,) = await _turn(workspace, ("Print", {"chars": 200_000, "image": True}))
    assert isinstance(result.content, tuple) and isinstance(result.content[0], ImageBlock)


async def test_read_pages_itself_and_is_never_saved(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path, 32_000)
    lines = [f"row {i:05d} " + "v" * 60 for i in range(3_000)]  # ~220 KB
    big = tmp_path / "big.txt"
    big.write_text("\n".join(lines) + "\n")
    (page,) = await _turn(workspace, ("Read", {"file_path": str(big)}))
    text = page.text
    assert not page.is_error and PERSISTED_TAG not in text
    assert estimate_text(text) <= workspace.result_limits.result_tokens
    shown = text.split("\n\n(Showing lines 1-")[1]
    last = int(shown.split(" ")[0])
    assert text.startswith("     1\trow 00000 ") and f"{last:>6}\t{lines[last - 1]}" in text
    assert f"Use offset={last + 1} limit={last} to read more" in text
    (following,) = await _turn(
        workspace, ("Read", {"file_path": str(big), "offset": last + 1, "limit": last})
    )
    assert following.text.startswith(f"{last + 1:>6}\t{lines[last]}")
    assert not (tmp_path / "tool-results").exists()


async def test_parallel_reads_share_the_turn_and_the_last_is_told_to_wait(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path, 32_000)
    workspace.result_limits = ResultLimits(result_tokens=1_000, turn_tokens=2_500)
    files = []
    for i in range(4):
        path = tmp_path / f"f{i}.txt"
        path.write_text("".join(f"file {i} line {n}\n" for n in range(600)))  # ~2K tokens
        files.append(path)
    results = await _turn(workspace, *[("Read", {"file_path": str(f)}) for f in files])
    pages = [r for r in results if not r.is_error]
    refused = [r for r in results if r.is_error]
    assert pages and refused
    assert sum(estimate_text(r.text) for r in pages) <= 2_500
    assert all("Use offset=" in r.text for r in pages)
    assert all("next turn" in r.text for r in refused)
    assert not (tmp_path / "tool-results").exists()


def test_an_unwritable_folder_still_shrinks_the_result(tmp_path: Path) -> None:
    (tmp_path / "tool-results").write_text("a file where the folder should be")
    preview = persist_result("toolu_1", "match\n" * 5_000, tmp_path / "tool-results")
    assert "could not be saved" in preview and saved_path(preview) is None
    assert len(preview) < 3_000
