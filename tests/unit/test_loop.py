"""The loop state machine, driven by the scripted model with the real tools in a temp dir."""

from __future__ import annotations

from pathlib import Path

from codeloop.events import (
    AssistantTurn,
    Event,
    LoopEnd,
    TextDelta,
    ToolFinished,
    ToolStarted,
    UserTurn,
)
from codeloop.permissions.policy import Policy
from codeloop.session import Session
from codeloop.session_config import SessionConfig
from codeloop.testing.scenario import UsageSpec, fault, text, tool_use, turn
from codeloop.testing.scripted import ScriptedModel
from codeloop.tools.base import Workspace
from codeloop.tools.registry import default_tools
from tests.unit.context_history import assert_paired


def make_session(
    model: ScriptedModel,
    cwd: Path,
    *,
    max_turns: int | None = None,
    mode: str = "bypassPermissions",
    model_name: str = "scripted-model",
    budget: float | None = None,
) -> Session:
    config = SessionConfig(
        model=model_name,
        max_budget_usd=budget,
        system="test system prompt",
        max_tokens=1024,
        max_turns=max_turns,
        policy=Policy(mode),  # type: ignore[arg-type]
    )
    return Session(model, default_tools(), Workspace(cwd=cwd), config)


async def run(session: Session, prompt: str) -> tuple[list[Event], LoopEnd]:
    events = [e async for e in session.submit(prompt)]
    end = events[-1]
    assert isinstance(end, LoopEnd)
    return events, end


async def test_text_answer_completes(tmp_path: Path) -> None:
    model = ScriptedModel([turn("Hello there.", chunk_chars=3)])
    events, end = await run(make_session(model, tmp_path), "hi")
    assert end.reason == "completed"
    assert end.turns == 1
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello there."
    assert [m.role for m in end.messages] == ["user", "assistant"]
    assert end.messages[-1].text == "Hello there."
    request = model.requests[0]
    assert request.system == "test system prompt"
    assert [t.name for t in request.tools] == [
        "Bash",
        "Glob",
        "Grep",
        "Read",
        "Edit",
        "Write",
        "Agent",
        "NotebookEdit",
        "WebFetch",
        "TodoWrite",
        "TaskOutput",
        "TaskStop",
        "ExitPlanMode",
        "AskUserQuestion",
    ]


async def test_tool_round_trip_feeds_results_back(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    model = ScriptedModel(
        [
            turn("Reading.", tool_use("Read", {"file_path": "notes.txt"})),
            turn("It says alpha and beta."),
        ]
    )
    events, end = await run(make_session(model, tmp_path), "what is in notes.txt?")
    assert end.reason == "completed"
    assert end.turns == 2
    assert_paired(end.messages)
    second = model.requests[1].messages
    result = second[-1].tool_results[0]
    assert not result.is_error and "alpha" in result.text
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("ToolFinished") < kinds.index("UserTurn") < kinds.index("LoopEnd")


async def test_history_carries_over_to_next_prompt(tmp_path: Path) -> None:
    model = ScriptedModel([turn("one"), turn("two")])
    session = make_session(model, tmp_path)
    await run(session, "first")
    _, end = await run(session, "second")
    assert [m.text for m in model.requests[1].messages] == ["first", "one", "second"]
    assert len(end.messages) == 4
    assert session.turns == 2


async def test_max_turns_ends_after_tools_ran(tmp_path: Path) -> None:
    model = ScriptedModel([turn(tool_use("Bash", {"command": "echo hi"}))] * 3)
    _, end = await run(make_session(model, tmp_path, max_turns=2), "loop")
    assert end.reason == "max_turns"
    assert len(model.requests) == 2
    assert_paired(end.messages)


async def test_model_error_ends_with_message(tmp_path: Path) -> None:
    model = ScriptedModel([turn("never", faults=[fault("auth")])])
    _, end = await run(make_session(model, tmp_path), "hi")
    assert end.reason == "model_error"
    assert end.error and "request refused (HTTP 401)" in end.error
    assert [m.role for m in end.messages] == ["user"]


async def test_bad_tool_calls_become_error_results_and_loop_goes_on(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            turn(
                tool_use("Nonexistent", {"x": 1}),
                tool_use("Read", raw_input='{"file_path": "a.txt"'),
                tool_use("Read", {"path": "wrong-field"}),
                tool_use("Read", {"file_path": "missing.txt"}),
            ),
            turn("I see the errors."),
        ]
    )
    _, end = await run(make_session(model, tmp_path), "go")
    assert end.reason == "completed"
    assert_paired(end.messages)
    results = model.requests[1].messages[-1].tool_results
    assert [r.is_error for r in results] == [True, True, True, True]
    assert "No such tool" in results[0].text
    assert "not valid JSON" in results[1].text
    assert "InputValidationError" in results[2].text


async def test_denied_tool_tells_the_model_why(tmp_path: Path) -> None:
    model = ScriptedModel(
        [turn(tool_use("Write", {"file_path": "x.txt", "content": "hi"})), turn("ok")]
    )
    _, end = await run(make_session(model, tmp_path, mode="default"), "write")
    result = model.requests[1].messages[-1].tool_results[0]
    assert result.is_error and "--allowedTools Write" in result.text
    assert not (tmp_path / "x.txt").exists()
    assert end.reason == "completed"


async def test_tool_runs_while_the_model_still_streams(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            turn(
                tool_use("Bash", {"command": "echo early"}),
                text("and now a long explanation", delay_after=0.0),
                chunk_chars=2,
                delay=0.01,
            ),
            turn("done"),
        ]
    )
    events, end = await run(make_session(model, tmp_path), "go")
    assert end.reason == "completed"
    kinds = [type(e).__name__ for e in events]
    first_assistant = kinds.index("AssistantTurn")
    # the tool finished, and its result was ready, before the response had finished streaming
    assert kinds.index("ToolFinished") < first_assistant
    deltas_after_finish = [
        e for e in events[kinds.index("ToolFinished") : first_assistant] if isinstance(e, TextDelta)
    ]
    assert deltas_after_finish


async def test_abort_while_streaming_pairs_started_tools(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            turn(
                tool_use("Bash", {"command": "sleep 30"}),
                "text that stalls",
                faults=[fault("stall", after=5, seconds=30, consume=True)],
            ),
            turn("after the interrupt"),
        ]
    )
    session = make_session(model, tmp_path)
    events: list[Event] = []
    async for event in session.submit("go"):
        events.append(event)
        if isinstance(event, ToolStarted):
            session.interrupt()
    end = events[-1]
    assert isinstance(end, LoopEnd) and end.reason == "aborted_streaming"
    assert_paired(end.messages)
    result = end.messages[-1].tool_results[0]
    assert result.is_error and "Interrupted" in result.text
    # the session goes on, with the next answer (the interrupted one is not asked for again)
    _, end2 = await run(session, "continue")
    assert end2.reason == "completed"
    assert end2.messages[-1].text == "after the interrupt"
    assert_paired(end2.messages)


async def test_abort_while_three_tools_run(tmp_path: Path) -> None:
    calls = [tool_use("Bash", {"command": f"sleep 30 # {i}"}) for i in range(3)]
    model = ScriptedModel([turn(*calls), turn("resumed")])
    session = make_session(model, tmp_path)
    events: list[Event] = []
    async for event in session.submit("go"):
        events.append(event)
        if isinstance(event, AssistantTurn):
            session.interrupt()
    end = events[-1]
    assert isinstance(end, LoopEnd) and end.reason == "aborted_tools"
    results = end.messages[-1].tool_results
    assert len(results) == 3 and all(r.is_error for r in results)
    assert sum(isinstance(e, UserTurn) for e in events) == 1
    assert len([e for e in events if isinstance(e, ToolFinished)]) == 3
    _, end2 = await run(session, "continue")
    assert end2.reason == "completed"
    assert end2.messages[-1].text == "resumed"
    assert_paired(end2.messages)


async def test_cost_budget_ends_the_run_at_a_turn_boundary(tmp_path: Path) -> None:
    # claude-sonnet-4-5 input costs $3 per million tokens: 100k input tokens cost $0.30 a turn
    big = UsageSpec(input_tokens=100_000, output_tokens=10)
    model = ScriptedModel([turn(tool_use("Bash", {"command": "echo x"}), usage=big)] * 5)
    session = make_session(model, tmp_path, model_name="claude-sonnet-4-5", budget=0.5)
    _, end = await run(session, "spend")
    assert end.reason == "max_budget"
    assert len(model.requests) == 2  # $0.30 after one turn, $0.60 after the second
    assert_paired(end.messages)


async def test_task_runs_a_sub_agent_and_returns_its_final_answer(tmp_path: Path) -> None:
    task = tool_use("Task", {"description": "count files", "prompt": "How many files?"})
    model = ScriptedModel(
        [
            turn("Delegating.", task),
            turn(tool_use("Bash", {"command": "cd /; echo counted"})),  # the sub-agent's turns
            turn("There are 3 files."),
            turn("The sub-agent says 3."),
        ]
    )
    session = make_session(model, tmp_path, model_name="claude-sonnet-4-5")
    _, end = await run(session, "count them")
    assert end.reason == "completed"
    _, sub_first, sub_second, main_second = model.requests
    # the sub-agent starts from the prompt alone, without the Agent (Task) tool, and says it
    # is one
    assert [m.text for m in sub_first.messages] == ["How many files?"]
    assert "Agent" not in [t.name for t in sub_first.tools]
    assert "sub-agent" in sub_first.system
    assert sub_second.messages[-1].tool_results[0].text == "counted"
    (result,) = main_second.messages[-1].tool_results
    assert not result.is_error and result.text == "There are 3 files."
    assert session.workspace.cwd == tmp_path  # the sub-agent's cd stayed its own
    assert session.usage.input_tokens == 4 * 100  # its turns count towards the session's
    assert_paired(end.messages)
