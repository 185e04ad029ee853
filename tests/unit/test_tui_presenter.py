"""The presenter turns a run's events into scrollback text (final, printed once) and the
live region; checked here without a terminal (colour off)."""

from __future__ import annotations

from pathlib import Path

from codeloop.cli.tui.presenter import Presenter
from codeloop.events import (
    AssistantTurn,
    CompactBoundary,
    Compacting,
    LoopEnd,
    RequestStart,
    Retrying,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolProgress,
    ToolStarted,
)
from codeloop.tools.patch import change_data
from codeloop.types import Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def presenter(tmp_path: Path) -> tuple[Presenter, Clock]:
    clock = Clock()
    return Presenter(tmp_path, 80, color=False, clock=clock), clock


def turn(text: str) -> AssistantTurn:
    return AssistantTurn(
        Message("assistant", (TextBlock(text),)), "m", Usage(output_tokens=7), "end_turn"
    )


def test_text_is_final_paragraph_by_paragraph(tmp_path: Path) -> None:
    p, _ = presenter(tmp_path)
    p.begin("hi")
    p.event(TextDelta("First **para**graph.\n\nSecond"))
    out = p.take_output()
    assert "> hi" in out and "⏺ First paragraph." in out and "Second" not in out
    assert "Second" in p.live()
    p.event(TextDelta(" one."))
    p.event(turn("First paragraph.\n\nSecond one."))
    out = p.take_output()
    assert "Second one." in out and "⏺" not in out
    assert "Second" not in p.live()


def test_a_tool_call_runs_live_then_lands_with_its_summary(tmp_path: Path) -> None:
    p, clock = presenter(tmp_path)
    p.begin("list")
    call = ToolUseBlock("t1", "Bash", {"command": "ls -l\nwc -l"})
    p.event(ToolStarted(call))
    p.event(ToolProgress("t1", "a\nb\n"))
    clock.now += 3
    live = p.live()
    assert "Bash(ls -l …)" in live and "running for 3 s" in live and "b" in live
    output = "\n".join(f"file{i}" for i in range(10))
    p.event(ToolFinished(call, ToolResultBlock("t1", output)))
    out = p.take_output()
    assert "Bash(ls -l …)" in out and "file0" in out and "file2" in out and "file3" not in out
    assert "… +7 lines (ctrl+o to expand)" in out
    assert p.folded == output and "running" not in p.live()


def test_a_call_waiting_for_its_permission_answer_is_not_running(tmp_path: Path) -> None:
    p, clock = presenter(tmp_path)
    p.begin("touch")
    call = ToolUseBlock("t1", "Bash", {"command": "touch x"})
    p.event(ToolStarted(call))
    p.asking("t1", True)
    clock.now += 30  # the user reads the dialog
    assert "waiting for your answer" in p.live() and "running" not in p.live()
    assert "Waiting for permission to run Bash" in p.spinner()
    p.asking("t1", False)
    clock.now += 2
    assert "running for 2 s" in p.live() and "Running Bash" in p.spinner()


def test_a_compaction_shows_in_the_spinner_until_its_boundary(tmp_path: Path) -> None:
    p, _ = presenter(tmp_path)
    p.begin("go on")
    p.event(Compacting("auto", 151_000))
    assert "Compacting the conversation (151,000 tokens)" in p.spinner()
    p.event(CompactBoundary("auto", 151_000, 9_000, 40))
    assert "151,000 → 9,000 tokens" in p.take_output()
    p.event(RequestStart(2, "m"))
    assert "Compacting" not in p.spinner()


def test_an_edit_lands_as_a_numbered_diff(tmp_path: Path) -> None:
    p, _ = presenter(tmp_path)
    path = tmp_path / "f.py"
    old = "".join(f"x{i} = {i}\n" for i in range(10))
    new = old.replace("x4 = 4", "x4 = 40")
    call = ToolUseBlock("t1", "Edit", {"file_path": str(path)})
    p.event(ToolFinished(call, ToolResultBlock("t1", "Edited."), data=change_data(path, old, new)))
    out = p.take_output()
    assert "Edit(f.py)" in out and "Updated f.py with 1 addition and 1 removal" in out
    assert "5 - x4 = 4\n" in out and "5 + x4 = 40\n" in out and "4   x3 = 3\n" in out


def test_errors_thinking_retries_and_the_end(tmp_path: Path) -> None:
    p, clock = presenter(tmp_path)
    p.begin(None)
    p.event(ThinkingDelta("pondering"))
    assert "pondering" in p.live()
    clock.now += 2
    p.event(TextDelta("ok"))
    assert "Thought for 2 s" in p.take_output() and p.folded == "pondering"
    p.event(Retrying(1, 10, 4.0, "overloaded (529)"))
    assert "overloaded (529); retry 2 of 10 in 4 s" in p.spinner()
    clock.now += 3
    assert "in 1 s" in p.spinner()
    p.event(TextDelta("more"))
    clock.now += 12
    assert "nothing from the model for 12 s" in p.spinner()
    p.event(LoopEnd("aborted_tools", 1, Usage(), ()))
    assert "Interrupted" in p.take_output()
    p.event(LoopEnd("model_error", 1, Usage(), (), error="HTTP 401: bad key"))
    assert "HTTP 401: bad key" in p.take_output()
