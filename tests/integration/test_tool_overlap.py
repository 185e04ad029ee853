"""Issue 3's scenarios, structurally: who overlaps whom, read from the order of events.

Real Bash processes, the scripted model in-process; no timing thresholds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codeloop.events import AssistantTurn, Event, TextDelta, ToolFinished, ToolProgress, ToolStarted
from codeloop.permissions.policy import Policy
from codeloop.session import Session
from codeloop.session_config import SessionConfig
from codeloop.testing.scenario import text, tool_use, turn
from codeloop.testing.scripted import ScriptedModel
from codeloop.tools.base import Workspace
from codeloop.tools.registry import default_tools


async def run(
    calls: list[Any], cwd: Path, *, chunk_chars: int | None = None, delay: float = 0.0
) -> list[Event]:
    model = ScriptedModel([turn(*calls, chunk_chars=chunk_chars, delay=delay), turn("done")])
    config = SessionConfig(
        model="scripted", system="", max_tokens=1024, policy=Policy(allowed=frozenset({"Bash"}))
    )
    session = Session(model, default_tools(), Workspace(cwd=cwd), config)
    return [e async for e in session.submit("go")]


def sequence(events: list[Event]) -> list[str]:
    """S<i> when call i started, F<i> when its result was yielded."""
    out = []
    for e in events:
        if isinstance(e, ToolStarted):
            out.append("S" + e.tool_use.input["command"][-1])
        elif isinstance(e, ToolFinished):
            out.append("F" + e.tool_use.input["command"][-1])
    return out


async def test_read_only_calls_all_run_together(tmp_path: Path) -> None:
    calls = [tool_use("Bash", {"command": f"sleep 0.3 # {i}"}) for i in range(4)]
    events = await run(calls, tmp_path)
    assert sequence(events) == ["S0", "S1", "S2", "S3", "F0", "F1", "F2", "F3"]


async def test_writing_calls_run_one_at_a_time_in_order(tmp_path: Path) -> None:
    calls = [tool_use("Bash", {"command": f"sleep 0.05; touch f{i}"}) for i in range(4)]
    events = await run(calls, tmp_path)
    assert sequence(events) == ["S0", "F0", "S1", "F1", "S2", "F2", "S3", "F3"]
    stamps = [(tmp_path / f"f{i}").stat().st_mtime_ns for i in range(4)]
    assert stamps == sorted(stamps)


async def test_tool_streamed_first_finishes_while_text_still_streams(tmp_path: Path) -> None:
    calls = [tool_use("Bash", {"command": "sleep 0.1 # 0"}), text("x" * 200)]
    events = await run(calls, tmp_path, chunk_chars=2, delay=0.01)
    kinds = [type(e) for e in events]
    finished = kinds.index(ToolFinished)
    assistant = kinds.index(AssistantTurn)
    assert finished < assistant
    assert TextDelta in kinds[finished:assistant]  # the model was still talking


async def test_progress_arrives_while_the_tool_runs(tmp_path: Path) -> None:
    calls = [tool_use("Bash", {"command": "echo first; sleep 0.3; echo second # 0"})]
    events = await run(calls, tmp_path)
    started = next(i for i, e in enumerate(events) if isinstance(e, ToolStarted))
    finished = next(i for i, e in enumerate(events) if isinstance(e, ToolFinished))
    progress = [e for e in events[started:finished] if isinstance(e, ToolProgress)]
    assert progress and "first" in progress[0].text
    assert "second" not in progress[0].text  # it came before the command had finished
    assert progress[-1].elapsed >= progress[0].elapsed
    result = events[finished]
    assert isinstance(result, ToolFinished)
    assert "first" in result.result.text and "second" in result.result.text
