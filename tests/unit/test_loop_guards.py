"""The loop's guards, each by a test that fails when the guard is removed: media recovery,
escalation after a started tool, retry-after caps, wider fallback triggers, the hook ends,
the compaction guard across Stop-hook continuations, keep-alives and the first-event wait,
and what sub-agents share with the session (budget) and do not (token budget, turn limit).
"""

from __future__ import annotations

import shlex
import sys
import textwrap
from pathlib import Path
from typing import Any

from codeloop.deps import LoopDeps
from codeloop.events import Continuing, Event, LoopEnd, MediaRemoved, Notice, Retrying, UserTurn
from codeloop.extensions.agents import GENERAL, AgentDefinition, Agents
from codeloop.hooks.hook_config import HookCommand, HookMatcher, HooksConfig
from codeloop.hooks.hook_runner import HookRunner
from codeloop.loop import LoopParams, query_loop
from codeloop.models.base import RateLimited
from codeloop.models.catalog import cost_usd
from codeloop.models.retry import RetryPolicy
from codeloop.permissions.policy import Policy
from codeloop.session import Session
from codeloop.session_config import SessionConfig
from codeloop.subagents import AgentRunner
from codeloop.testing.scenario import Turn, UsageSpec, fault, tool_use, turn, turn_usage
from codeloop.testing.scripted import ScriptedModel
from codeloop.tools.base import Workspace
from codeloop.tools.registry import default_tools
from codeloop.types import ImageBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock
from tests.unit.context_history import assert_paired

PNG = ImageBlock("image/png", "iVBORw0KGgo=")


class Run:
    """One loop run on the scripted model, with waits recorded instead of slept."""

    def __init__(self, turns: list[Turn], tmp: Path) -> None:
        self.model = ScriptedModel(turns)
        self.tmp = tmp
        self.waits: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)

    async def __call__(self, *messages: Message, **params: Any) -> tuple[list[Event], LoopEnd]:
        hooks = params.pop("hooks", None)
        loop_params = LoopParams(
            messages=messages or (Message.user("go"),),
            model=params.pop("model", "primary"),
            tools=default_tools(),
            workspace=Workspace(cwd=self.tmp),
            retry=params.pop("retry", RetryPolicy(random=lambda: 0.0)),
            **params,
        )
        allow = Policy("bypassPermissions").can_use_tool
        deps = LoopDeps(self.model.stream, allow, hooks=hooks, sleep=self.sleep)
        events = [e async for e in query_loop(loop_params, deps)]
        end = events[-1]
        assert isinstance(end, LoopEnd)
        return events, end


def transitions(events: list[Event]) -> list[str]:
    return [e.reason for e in events if isinstance(e, Continuing)]


def images(message: Message) -> int:
    direct = sum(isinstance(b, ImageBlock) for b in message.content)
    nested = sum(
        isinstance(inner, ImageBlock)
        for b in message.content
        if isinstance(b, ToolResultBlock) and not isinstance(b.content, str)
        for inner in b.content
    )
    return direct + nested


# --- a refused image -----------------------------------------------------------------------


async def test_a_refused_image_is_replaced_by_a_note_and_the_request_retried(
    tmp_path: Path,
) -> None:
    run = Run([turn("I cannot see it, but hi.", faults=[fault("media")])], tmp_path)
    prompt = Message("user", (TextBlock("what is this?"), PNG))
    events, end = await run(prompt)
    assert end.reason == "completed"
    assert transitions(events) == ["reactive_compact_retry"]
    first, second = run.model.requests
    assert images(first.messages[0]) == 1 and images(second.messages[0]) == 0
    assert "[image removed: the API refused it" in second.messages[0].text
    (removed,) = [e for e in events if isinstance(e, MediaRemoved)]
    assert removed.removed == 1 and removed.messages[0].uuid != prompt.uuid  # rewritten
    assert end.messages[0].text == second.messages[0].text  # the history keeps the note
    assert run.waits == []


async def test_a_media_error_with_no_image_left_ends_the_run(tmp_path: Path) -> None:
    run = Run([turn("never", faults=[fault("media", times=2)])], tmp_path)
    _, end = await run(Message("user", (TextBlock("look"), PNG)))
    assert end.reason == "image_error" and len(run.model.requests) == 2  # one retry only
    # the end says what was tried already, not only the API's words
    assert end.error is not None and end.error.endswith(
        ". 1 image(s) the API refused had been removed and the request sent again."
    )


async def test_the_image_the_error_names_is_the_only_one_removed(tmp_path: Path) -> None:
    error = "messages.3.content.0.content.0.image.source.base64: image exceeds 5 MB maximum"
    run = Run([turn("ok", faults=[fault("media", message=error)])], tmp_path)
    use = ToolUseBlock("t1", "Read", {"file_path": "a.png"})
    history = (
        Message("user", (TextBlock("compare them"), PNG)),
        Message("assistant", (use,)),
        Message("user", (ToolResultBlock("t1", (PNG,)),)),
    )
    memory = (Message.user("<memory>", is_meta=True),)
    _, end = await run(*history, user_context=memory)
    assert end.reason == "completed"
    retried = run.model.requests[1].messages[1:]  # after the memory message
    assert images(retried[0]) == 1 and images(retried[2]) == 0
    assert_paired(end.messages)


# --- output-limit escalation ---------------------------------------------------------------


async def test_no_escalation_once_a_tool_of_the_answer_has_started(tmp_path: Path) -> None:
    log = tmp_path / "log"
    call = tool_use("Bash", {"command": f"echo ran >> {log}"})
    run = Run([turn(call, stop_reason="max_tokens"), turn("done")], tmp_path)
    events, end = await run(max_output_tokens=64_000)
    # Resending the request would run the tool again while the history records it once.
    assert transitions(events) == ["max_output_tokens_recovery"]
    assert [r.max_tokens for r in run.model.requests] == [8192, 8192]
    assert log.read_text() == "ran\n"
    assert end.reason == "completed"
    assert_paired(end.messages)


# --- retry-after and fallback --------------------------------------------------------------


def test_a_day_long_retry_after_is_capped() -> None:
    policy = RetryPolicy()
    assert policy.delay(1, RateLimited("slow down", retry_after=86_400, status=429)) == 128.0


async def test_a_day_long_retry_after_does_not_hang_the_run(tmp_path: Path) -> None:
    run = Run([turn("ok", faults=[fault("rate_limited", retry_after=86_400)])], tmp_path)
    _, end = await run()
    assert end.reason == "completed" and run.waits == [128.0]


async def test_a_long_rate_limit_switches_to_the_fallback_at_once(tmp_path: Path) -> None:
    limit = fault("rate_limited", retry_after=120, model="primary", times=5)
    run = Run([turn("from backup", faults=[limit])], tmp_path)
    events, end = await run(fallback_model="backup")
    assert transitions(events) == ["model_fallback"]
    assert [r.model for r in run.model.requests] == ["primary", "backup"]
    assert any(isinstance(e, Notice) and "rate limited for 120 s" in e.text for e in events)
    assert end.reason == "completed" and run.waits == []


async def test_a_short_rate_limit_is_waited_out_even_with_a_fallback(tmp_path: Path) -> None:
    run = Run([turn("ok", faults=[fault("rate_limited", retry_after=2)])], tmp_path)
    events, end = await run(fallback_model="backup")
    assert transitions(events) == [] and run.waits == [2.0]
    assert end.reason == "completed"


async def test_a_model_that_keeps_failing_with_5xx_switches_to_the_fallback(
    tmp_path: Path,
) -> None:
    failing = fault("server_error", model="primary", times=20)
    run = Run([turn("from backup", faults=[failing])], tmp_path)
    events, end = await run(fallback_model="backup")
    assert [r.model for r in run.model.requests] == ["primary"] * 4 + ["backup"]
    assert any(isinstance(e, Notice) and "HTTP 500, 4 times in a row" in e.text for e in events)
    assert end.reason == "completed"


# --- hooks ---------------------------------------------------------------------------------


# A Stop hook that sends the model back to work once.
BLOCK_ONCE = """
if not payload["stop_hook_active"]:
    print(json.dumps({"decision": "block", "reason": "run the tests first"}))
"""


def hooks(tmp_path: Path, event: str, body: str, matcher: str = "") -> HookRunner:
    script = tmp_path / f"{event}.py"
    script.write_text("import json, sys\npayload = json.load(sys.stdin)\n" + textwrap.dedent(body))
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    config: HooksConfig = {event: (HookMatcher(matcher, (HookCommand(command, None),)),)}
    return HookRunner(config, "s1", tmp_path / "t.jsonl", tmp_path)


async def test_a_tool_hook_that_says_stop_ends_the_run_as_hook_stopped(tmp_path: Path) -> None:
    stop = hooks(
        tmp_path, "PostToolUse", 'print(json.dumps({"continue": False, "stopReason": "enough"}))'
    )
    calls = [turn(tool_use("Bash", {"command": "echo 1"})), turn("never")]
    run = Run(calls, tmp_path)
    _, end = await run(hooks=stop)
    assert end.reason == "hook_stopped" and end.error == "enough"
    assert len(run.model.requests) == 1
    assert_paired(end.messages)


async def test_a_stop_hook_that_says_stop_ends_the_run_as_stop_hook_prevented(
    tmp_path: Path,
) -> None:
    stop = hooks(tmp_path, "Stop", 'print(json.dumps({"continue": False, "stopReason": "frozen"}))')
    _, end = await Run([turn("done")], tmp_path)(hooks=stop)
    assert end.reason == "stop_hook_prevented" and end.error == "frozen"
    assert end.messages[-1].text == "done"


async def test_a_blocking_stop_hook_continues_with_stop_hook_blocking(tmp_path: Path) -> None:
    block = hooks(
        tmp_path,
        "Stop",
        BLOCK_ONCE,
    )
    run = Run([turn("done"), turn("tests pass")], tmp_path)
    events, end = await run(hooks=block)
    assert transitions(events) == ["stop_hook_blocking"]
    assert "run the tests first" in run.model.requests[1].messages[-1].text
    assert end.reason == "completed"


async def test_a_stop_hook_continuation_keeps_the_compaction_guard(tmp_path: Path) -> None:
    """compact → Stop hook → compact again would loop: the guard survives the hook's turn."""
    block = hooks(
        tmp_path,
        "Stop",
        BLOCK_ONCE,
    )
    work = [turn(tool_use("Bash", {"command": f"echo {i}"})) for i in range(4)]
    run = Run(
        [
            *work,
            turn("looks done", faults=[fault("prompt_too_long")]),
            turn("never", faults=[fault("prompt_too_long")]),
        ],
        tmp_path,
    )
    events, end = await run(hooks=block)
    assert transitions(events)[-2:] == ["reactive_compact_retry", "stop_hook_blocking"]
    assert end.reason == "prompt_too_long"


# --- the watchdog --------------------------------------------------------------------------


async def test_keep_alives_prove_a_slow_stream_alive(tmp_path: Path) -> None:
    thinking = fault("stall", after=2, seconds=0.6, ping_every=0.05)
    run = Run([turn("worth the wait", faults=[thinking])], tmp_path)
    events, end = await run(retry=RetryPolicy(idle_timeout=0.3))
    assert end.reason == "completed" and len(run.model.requests) == 1
    assert not any(isinstance(e, Retrying) for e in events)


async def test_silence_mid_stream_is_abandoned_after_the_idle_timeout(tmp_path: Path) -> None:
    silent = fault("stall", after=2, seconds=30)
    run = Run([turn("answer", faults=[silent])], tmp_path)
    events, end = await run(retry=RetryPolicy(idle_timeout=0.3, first_event_timeout=30))
    assert end.reason == "completed" and len(run.model.requests) == 2
    (retry,) = [e for e in events if isinstance(e, Retrying)]
    assert "no data for 0.3 s" in retry.error


async def test_the_first_event_has_its_own_longer_wait(tmp_path: Path) -> None:
    # Silent before the first event for longer than the idle timeout, within the first wait.
    slow_start = fault("stall", after=0, seconds=0.5)
    run = Run([turn("late but fine", faults=[slow_start])], tmp_path)
    _, end = await run(retry=RetryPolicy(idle_timeout=0.2, first_event_timeout=5))
    assert end.reason == "completed" and len(run.model.requests) == 1
    # ... and abandoned once that wait is over
    run = Run([turn("answer", faults=[fault("stall", after=0, seconds=30)])], tmp_path)
    events, end = await run(retry=RetryPolicy(idle_timeout=5, first_event_timeout=0.3))
    (retry,) = [e for e in events if isinstance(e, Retrying)]
    assert "no answer began within 0.3 s" in retry.error


def test_a_local_model_waits_longer_for_a_long_prompt() -> None:
    hosted = RetryPolicy(first_event_timeout=300)
    local = RetryPolicy(first_event_timeout=300, prefill_tokens_per_second=20)
    assert hosted.first_wait(100_000) == 300
    assert local.first_wait(0) == 300 and local.first_wait(100_000) == 300 + 5_000


# --- sub-agents ----------------------------------------------------------------------------

SONNET = "claude-sonnet-4-5"


def session(model: ScriptedModel, tmp_path: Path, **config: Any) -> Session:
    settings = SessionConfig(
        model=config.pop("model_name", SONNET),
        system="test",
        max_tokens=1024,
        policy=Policy("bypassPermissions"),
        **config,
    )
    return Session(model, default_tools(), Workspace(cwd=tmp_path), settings)


async def submit(s: Session, prompt: str = "go") -> tuple[list[Event], LoopEnd]:
    events = [e async for e in s.submit(prompt)]
    end = events[-1]
    assert isinstance(end, LoopEnd)
    return events, end


def task(i: int) -> Any:
    return tool_use("Task", {"description": f"job {i}", "prompt": f"do job {i}"})


def spend(tokens: int) -> UsageSpec:
    return UsageSpec(input_tokens=tokens, output_tokens=10)


async def test_sub_agents_spend_from_the_session_budget(tmp_path: Path) -> None:
    turns = [
        turn(task(1), task(2), task(3), usage=spend(2_000)),
        *[turn(f"report {i}", usage=spend(7_000)) for i in (1, 2, 3)],
        turn("never: the budget is spent"),
    ]
    model = ScriptedModel(turns)
    s = session(model, tmp_path, max_budget_usd=0.05)
    _, end = await submit(s)
    # $0.006 + 3 × $0.021: each sub-agent alone is under $0.05, together they are not.
    assert end.reason == "max_budget"
    assert len(model.requests) == 4 and model.remaining == 1
    expected = sum(cost_usd(SONNET, turn_usage(t)) for t in turns[:4])
    assert s.cost_usd == round(expected, 10) and s.cost_usd > 0.05


async def test_a_sub_agent_is_not_started_once_the_budget_is_spent(tmp_path: Path) -> None:
    turns = [
        turn(task(1), task(2), usage=spend(2_000)),
        turn(tool_use("Bash", {"command": "echo 1"}), usage=spend(20_000)),
        turn("never"),
    ]
    model = ScriptedModel(turns)
    s = session(model, tmp_path, max_budget_usd=0.05)
    # One agent at a time, so the second is due only once the first spent the budget.
    s.agents = AgentRunner(Agents({GENERAL.name: GENERAL}), max_parallel=1)
    events, end = await submit(s)
    assert end.reason == "max_budget" and len(model.requests) == 2
    results = [r for e in events if isinstance(e, UserTurn) for r in e.message.tool_results]
    assert "Reached the cost budget" in results[-2].text  # the first sub-agent stopped
    assert "was not started" in results[-1].text


async def test_a_runaway_sub_agent_ends_at_its_turn_limit_and_the_parent_goes_on(
    tmp_path: Path,
) -> None:
    forever = [turn(tool_use("Bash", {"command": f"echo {i}"})) for i in range(3)]
    model = ScriptedModel([turn(task(1)), *forever, turn("the parent carried on")])
    events, end = await submit(session(model, tmp_path, subagent_max_turns=3))
    assert end.reason == "completed" and end.final_text == "the parent carried on"
    assert len(model.requests) == 5
    result = next(r for e in events if isinstance(e, UserTurn) for r in e.message.tool_results)
    assert result.is_error and "Reached the limit of 3 turns" in result.text


async def test_an_agent_type_has_its_own_turn_limit(tmp_path: Path) -> None:
    forever = [turn(tool_use("Bash", {"command": f"echo {i}"})) for i in range(2)]
    model = ScriptedModel([turn(task(1)), *forever, turn("done")])
    s = session(model, tmp_path)
    brief = AgentDefinition(GENERAL.name, GENERAL.description, "", max_turns=2)
    s.agents = AgentRunner(Agents({GENERAL.name: brief}))
    _, end = await submit(s)
    assert end.reason == "completed" and len(model.requests) == 4


def test_the_default_sub_agent_limit_is_claude_codes() -> None:
    assert SessionConfig(model="m", system="", max_tokens=1).subagent_max_turns == 200


async def test_sub_agents_never_get_token_budget_continuations(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            turn(task(1), usage=UsageSpec(output_tokens=10)),
            turn("found it", usage=UsageSpec(output_tokens=10)),  # the sub-agent's answer
            turn("done", usage=UsageSpec(output_tokens=950)),
        ]
    )
    _, end = await submit(session(model, tmp_path, token_budget=1_000))
    assert end.reason == "completed" and len(model.requests) == 3
    sub_agent = model.requests[1]
    assert [m.text for m in sub_agent.messages] == ["do job 1"]
