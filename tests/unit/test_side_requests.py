"""Side requests in process (issue 38), driven by the scripted model: tool-use summaries that
never hold up the next main request, a sub-agent's task progress on the clock seam (no
sleeping), and failures that cost nothing but the label."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest

from codeloop.events import (
    AssistantTurn,
    Event,
    LoopEnd,
    SubAgent,
    SubagentEvent,
    TaskProgress,
    ToolUseSummary,
)
from codeloop.models.base import ModelRequest, StreamEvent
from codeloop.models.complete import QuickModel
from codeloop.session import Session
from codeloop.side_requests import PROGRESS_EVERY_SECONDS, SideRequests
from codeloop.testing.scenario import tool_use, turn
from codeloop.testing.scripted import ScriptedModel
from codeloop.types import Message
from tests.unit.test_loop import make_session

LIMIT = 30.0  # generous: the machine is shared


class GatedAsker:
    """A side model that answers once `gate` opens, and remembers what it was asked."""

    def __init__(self, answer: str, gate: asyncio.Event | None = None) -> None:
        self.answer, self.gate = answer, gate
        self.prompts: list[str] = []

    async def ask(self, prompt: str, *, system: str, max_tokens: int = 2048) -> str:
        self.prompts.append(prompt)
        if self.gate is not None:
            await self.gate.wait()
        return self.answer


class Failing:
    async def ask(self, prompt: str, *, system: str, max_tokens: int = 2048) -> str:
        raise RuntimeError("the side model is down")


async def _run(session: Session, prompt: str) -> list[Event]:
    async def collect() -> list[Event]:
        return [event async for event in session.submit(prompt)]

    return await asyncio.wait_for(collect(), LIMIT)


def _two_batches() -> ScriptedModel:
    return ScriptedModel(
        [
            turn(tool_use("Bash", {"command": "echo one"})),
            turn(tool_use("Bash", {"command": "echo two"})),
            turn("Both ran."),
        ]
    )


async def test_the_next_request_goes_out_before_the_summary_is_back(tmp_path: Path) -> None:
    model = _two_batches()
    gate = asyncio.Event()  # the label answers only once the next main request is out
    asker = GatedAsker("Echoed one", gate)

    def stream(request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if model.requests:
            gate.set()
        return model.stream(request)

    session = make_session(model, tmp_path)
    session.deps = replace(session.deps, call_model=stream)
    session.side = SideRequests(asker, tool_summaries=True)
    events = await _run(session, "go")  # awaited before the next request: a deadlock
    summaries = [e for e in events if isinstance(e, ToolUseSummary)]
    answers = [e for e in events if isinstance(e, AssistantTurn)]
    assert [s.tool_use_ids for s in summaries] == [
        (a.message.tool_uses[0].id,) for a in answers[:2]
    ]
    assert [s.summary for s in summaries] == ["Echoed one", "Echoed one"]
    # Each label after the response that followed its batch, all before the end.
    assert events.index(summaries[0]) > events.index(answers[1])
    assert events.index(answers[2]) < events.index(summaries[1]) < len(events) - 1
    assert "echo one" in asker.prompts[0] and "one" in asker.prompts[0].split("Output")[1]


async def test_off_no_side_request(tmp_path: Path) -> None:
    asker = GatedAsker("never")
    session = make_session(_two_batches(), tmp_path)
    session.side = SideRequests(asker, prompt_suggestions=True)  # summaries not asked for
    events = await _run(session, "go")
    assert not [e for e in events if isinstance(e, ToolUseSummary)]
    assert asker.prompts == []


async def test_a_failed_summary_is_logged_and_the_run_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = make_session(_two_batches(), tmp_path)
    session.side = SideRequests(Failing(), tool_summaries=True)
    # Heard at the logger itself: another test's logging configuration may have disabled it
    # or stopped it from propagating to the root, where caplog listens.
    logger = logging.getLogger("codeloop.side_requests")
    monkeypatch.setattr(logger, "disabled", False)
    logger.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.WARNING, logger="codeloop.side_requests"):
            events = await _run(session, "go")
    finally:
        logger.removeHandler(caplog.handler)
    end = events[-1]
    assert isinstance(end, LoopEnd) and end.reason == "completed"
    assert not [e for e in events if isinstance(e, ToolUseSummary)]
    assert "tool-use summary request failed: the side model is down" in caplog.text


async def test_summaries_cost_counts_in_the_session(tmp_path: Path) -> None:
    side = ScriptedModel([turn("Echoed one"), turn("Echoed two")])
    session = make_session(_two_batches(), tmp_path, model_name="claude-sonnet-4-5")
    quick = QuickModel(side.stream, "claude-haiku-4-5", on_usage=session.ledger.add)
    session.side = SideRequests(quick, tool_summaries=True)
    events = await _run(session, "go")
    assert len([e for e in events if isinstance(e, ToolUseSummary)]) == 2
    assert [r.tools for r in side.requests] == [(), ()]
    assert session.usage_by_model["claude-haiku-4-5"].input_tokens == 2 * 100


class Ticks:
    """The progress reports' clock: the first period ends when the sub-agent's tool runs;
    later ones never (the sub-agent ends first)."""

    def __init__(self) -> None:
        self.asked: list[float] = []
        self.tool_called = asyncio.Event()
        self.never = asyncio.Event()

    async def wait(self, seconds: float) -> None:
        self.asked.append(seconds)
        await (self.tool_called if len(self.asked) == 1 else self.never).wait()


class Watcher:
    """A session observer: opens the clock once the sub-agent called its tool, and lets the
    tool finish (the file it waits for) once the progress came."""

    def __init__(self, ticks: Ticks, go: Path) -> None:
        self.ticks, self.go = ticks, go
        self.seen: list[tuple[Event, SubAgent | None]] = []

    def prompt(self, message: Message) -> None:
        return None

    def event(self, event: Event, agent: SubAgent | None) -> None:
        self.seen.append((event, agent))
        if agent is not None and isinstance(event, AssistantTurn) and event.message.tool_uses:
            self.ticks.tool_called.set()
        if isinstance(event, TaskProgress):
            self.go.write_text("go")

    def close(self) -> None:
        return None


async def test_a_running_sub_agent_reports_its_progress(tmp_path: Path) -> None:
    task = tool_use("Task", {"description": "wait", "prompt": "Wait for the go file."})
    wait = "while [ ! -f go ]; do sleep 0.05; done; echo went"
    model = ScriptedModel(
        [
            turn(task),
            turn(tool_use("Bash", {"command": wait})),  # the sub-agent's
            turn("It went."),
            turn("Done."),
        ]
    )
    session = make_session(model, tmp_path)
    ticks = Ticks()
    asker = GatedAsker("Waiting for the go file")
    session.side = SideRequests(asker, agent_progress=True, wait=ticks.wait)
    watcher = Watcher(ticks, tmp_path / "go")
    session.observers.append(watcher)
    events = await _run(session, "go")
    assert isinstance(events[-1], LoopEnd) and events[-1].reason == "completed"
    agent_call = model.requests[1].messages  # the sub-agent's first request
    assert agent_call[0].text == "Wait for the go file."
    call_id = next(e for e in events if isinstance(e, AssistantTurn)).message.tool_uses[0].id
    progress = [(e, a) for e, a in watcher.seen if isinstance(e, TaskProgress)]
    assert [(e.summary, e.tool_use_id) for e, _ in progress] == [
        ("Waiting for the go file", call_id)
    ]
    # While it still ran: before the sub-agent's end.
    sub_end = next(i for i, (e, a) in enumerate(watcher.seen) if a and isinstance(e, LoopEnd))
    assert watcher.seen.index(progress[0]) < sub_end
    assert ticks.asked[0] == PROGRESS_EVERY_SECONDS
    assert "while [ ! -f go ]" in asker.prompts[0]  # its most recent action
    # The faces hear it too, under the Agent call.
    assert any(isinstance(e, SubagentEvent) and isinstance(e.event, TaskProgress) for e in events)


async def test_without_agent_progress_no_side_request(tmp_path: Path) -> None:
    task = tool_use("Task", {"description": "count", "prompt": "Count."})
    model = ScriptedModel([turn(task), turn("3."), turn("Three.")])
    session = make_session(model, tmp_path)
    asker = GatedAsker("never")
    ticks = Ticks()
    ticks.tool_called.set()
    session.side = SideRequests(asker, tool_summaries=False, wait=ticks.wait)
    await _run(session, "go")
    assert ticks.asked == [] and asker.prompts == []
