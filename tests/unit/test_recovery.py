"""Every recovery path of the loop, asserted by its transition or end reason.

The scripted model injects the faults; retry waits go through an injected sleep that records
them, so backoff is checked exactly without waiting for it.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codeloop.deps import LoopDeps
from codeloop.events import (
    AssistantTurn,
    Compacting,
    Continuing,
    Event,
    LoopEnd,
    Notice,
    ResponseDiscarded,
    Retrying,
    ToolStarted,
    UserTurn,
)
from codeloop.loop import LoopParams, query_loop
from codeloop.models.retry import RetryPolicy
from codeloop.permissions.policy import Policy
from codeloop.testing.scenario import Turn, UsageSpec, fault, tool_use, turn
from codeloop.testing.scripted import ScriptedModel
from codeloop.tools.base import Workspace
from codeloop.tools.registry import default_tools
from codeloop.types import Message
from tests.unit.context_history import assert_paired


class Harness:
    def __init__(self, turns: list[Turn], tmp: Path, **params: Any) -> None:
        self.model = ScriptedModel(turns)
        self.waits: list[float] = []
        self.tmp = tmp
        self.params = params

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)

    async def run(self, prompt: str = "go", **deps: Any) -> tuple[list[Event], LoopEnd]:
        retry = self.params.pop("retry", RetryPolicy(random=lambda: 0.0))
        params = LoopParams(
            messages=(Message.user(prompt),),
            model="primary",
            tools=default_tools(),
            workspace=Workspace(cwd=self.tmp),
            retry=retry,
            **self.params,
        )
        allow = Policy("bypassPermissions").can_use_tool
        defaults = {"call_model": self.model.stream, "can_use_tool": allow, "sleep": self.sleep}
        loop_deps = LoopDeps(**(defaults | deps))
        events = [e async for e in query_loop(params, loop_deps)]
        end = events[-1]
        assert isinstance(end, LoopEnd)
        return events, end


def transitions(events: list[Event]) -> list[str]:
    return [e.reason for e in events if isinstance(e, Continuing)]


def retries(events: list[Event]) -> list[Retrying]:
    return [e for e in events if isinstance(e, Retrying)]


async def test_overload_once_is_retried_after_backoff(tmp_path: Path) -> None:
    h = Harness([turn("ok", faults=[fault("overloaded")])], tmp_path)
    events, end = await h.run()
    assert end.reason == "completed"
    assert h.waits == [0.5]
    (retry,) = retries(events)
    assert retry.attempt == 1 and retry.status == 529


async def test_backoff_doubles_with_jitter_and_is_capped() -> None:
    from codeloop.models.base import Transient

    policy = RetryPolicy(random=lambda: 1.0, jitter=0.25)
    delays = [policy.delay(n, Transient("x", status=503)) for n in range(1, 10)]
    assert delays[:4] == [0.625, 1.25, 2.5, 5.0]
    assert max(delays) == 32 * 1.25


async def test_rate_limit_waits_what_the_server_says(tmp_path: Path) -> None:
    h = Harness([turn("ok", faults=[fault("rate_limited", retry_after=2)])], tmp_path)
    _, end = await h.run()
    assert end.reason == "completed"
    assert h.waits == [2.0]


async def test_server_error_is_retried(tmp_path: Path) -> None:
    h = Harness([turn("ok", faults=[fault("server_error", times=2)])], tmp_path)
    _, end = await h.run()
    assert end.reason == "completed" and len(h.waits) == 2


async def test_cut_stream_is_dropped_and_sent_again(tmp_path: Path) -> None:
    h = Harness([turn("the full answer", chunk_chars=3, faults=[fault("cut", after=3)])], tmp_path)
    events, end = await h.run()
    assert end.reason == "completed"
    assert h.waits == [0.0]  # a dropped connection is resent at once
    assert any(isinstance(e, ResponseDiscarded) for e in events)
    assert end.messages[-1].text == "the full answer"
    assert len(end.messages) == 2


async def test_sse_error_event_retries_once_without_streaming_then_streams(tmp_path: Path) -> None:
    h = Harness(
        [
            turn(tool_use("Bash", {"command": "echo 1"}), faults=[fault("sse_error", after=0)]),
            turn("done"),
        ],
        tmp_path,
    )
    _, end = await h.run()
    assert end.reason == "completed"
    assert [r.stream for r in h.model.requests] == [True, False, True]


async def test_stalled_stream_is_abandoned_by_the_watchdog(tmp_path: Path) -> None:
    stall = fault("stall", after=2, seconds=30)
    h = Harness([turn("answer", faults=[stall])], tmp_path, retry=RetryPolicy(idle_timeout=0.2))
    events, end = await h.run()
    assert end.reason == "completed"
    assert any(isinstance(e, Notice) and "sent nothing" in e.text for e in events)
    (retry,) = retries(events)
    assert "stream stalled" in retry.error


async def test_max_tokens_escalates_once_then_recovers_three_times(tmp_path: Path) -> None:
    cut = turn("partial", stop_reason="max_tokens")
    h = Harness([cut] * 5 + [turn("finally whole")], tmp_path, max_output_tokens=64000)
    events, end = await h.run()
    assert transitions(events) == [
        "max_output_tokens_escalate",
        "max_output_tokens_recovery",
        "max_output_tokens_recovery",
        "max_output_tokens_recovery",
    ]
    assert [r.max_tokens for r in h.model.requests] == [8192] + [64000] * 4
    # after three recoveries the truncated answer is the answer
    assert end.reason == "completed" and len(h.model.requests) == 5
    assert h.model.remaining == 1
    recovery_prompts = [m for m in end.messages if m.is_meta]
    assert len(recovery_prompts) == 3


async def test_tool_call_cut_by_max_tokens_is_recovery_not_a_malformed_call(
    tmp_path: Path,
) -> None:
    cut_call = tool_use("Write", raw_input='{"file_path": "big.txt", "content": "aaa')
    h = Harness([turn("Writing.", cut_call, stop_reason="max_tokens"), turn("done")], tmp_path)
    events, end = await h.run()
    assert transitions(events) == ["max_output_tokens_recovery"]
    answer = h.model.requests[1].messages[-1]
    (result,) = answer.tool_results
    assert result.is_error and "cut off by the output token limit" in result.text
    assert "Output token limit hit" in answer.text
    assert not (tmp_path / "big.txt").exists()
    assert end.reason == "completed"
    assert_paired(end.messages)


async def test_prompt_too_long_compacts_once_and_retries(tmp_path: Path) -> None:
    history = [turn(tool_use("Bash", {"command": f"echo {i}"})) for i in range(4)]
    h = Harness([*history, turn("fits now", faults=[fault("prompt_too_long")])], tmp_path)
    events, end = await h.run()
    assert transitions(events)[-1] == "reactive_compact_retry"
    assert [e.trigger for e in events if isinstance(e, Compacting)] == ["reactive"]
    assert end.reason == "completed"
    assert len(h.model.requests[-1].messages) < len(h.model.requests[-2].messages)
    assert_paired(end.messages)


async def test_prompt_still_too_long_after_compacting_ends_the_run(tmp_path: Path) -> None:
    history = [turn(tool_use("Bash", {"command": f"echo {i}"})) for i in range(4)]
    h = Harness([*history, turn("never", faults=[fault("prompt_too_long", times=2)])], tmp_path)
    events, end = await h.run()
    assert transitions(events).count("reactive_compact_retry") == 1
    assert end.reason == "prompt_too_long"
    assert end.error and end.error.startswith("prompt too long (HTTP 400): ")
    # and what was tried already: the oldest exchanges went, and it still did not fit
    assert end.error.endswith(
        ". The 4 oldest messages had been dropped to make room and the request sent again."
    )


async def test_prompt_too_long_with_nothing_to_drop_says_so(tmp_path: Path) -> None:
    h = Harness([turn("never", faults=[fault("prompt_too_long", times=2)])], tmp_path)
    events, end = await h.run()
    assert transitions(events) == [] and len(h.model.requests) == 1
    assert end.reason == "prompt_too_long" and end.messages == h.model.requests[0].messages
    assert end.error and end.error.startswith("prompt too long (HTTP 400): ")
    assert end.error.endswith(
        ". Dropping the oldest messages to make room was tried, but none can go: the first "
        "request and the latest exchange always stay. Nothing was dropped."
    )


async def test_repeated_overloads_switch_to_the_fallback_model(tmp_path: Path) -> None:
    storm = fault("overloaded", times=50, model="primary")
    h = Harness([turn("from the fallback", faults=[storm])], tmp_path, fallback_model="backup")
    events, end = await h.run()
    assert transitions(events) == ["model_fallback"]
    assert end.reason == "completed"
    assert [r.model for r in h.model.requests] == ["primary"] * 3 + ["backup"]
    assert end.messages[-1].text == "from the fallback"


async def test_overloads_without_fallback_give_up_after_max_attempts(tmp_path: Path) -> None:
    h = Harness([turn("never", faults=[fault("overloaded", times=50)])], tmp_path)
    _, end = await h.run()
    assert end.reason == "model_error"
    assert end.error and "API overloaded (HTTP 529)" in end.error
    assert len(h.model.requests) == 10 and len(h.waits) == 9


async def test_media_error_ends_without_retry(tmp_path: Path) -> None:
    h = Harness([turn("never", faults=[fault("media")])], tmp_path)
    _, end = await h.run()
    assert end.reason == "image_error" and h.waits == []


async def test_auth_error_is_not_retried(tmp_path: Path) -> None:
    h = Harness([turn("never", faults=[fault("auth")])], tmp_path)
    _, end = await h.run()
    assert end.reason == "model_error" and h.waits == []


async def test_abort_during_retry_wait(tmp_path: Path) -> None:
    abort = asyncio.Event()
    h = Harness([turn("x", faults=[fault("overloaded")])], tmp_path, abort=abort)

    async def sleep_then_abort(seconds: float) -> None:
        abort.set()
        await asyncio.Event().wait()

    _, end = await h.run(sleep=sleep_then_abort)
    assert end.reason == "aborted_streaming"
    assert [m.role for m in end.messages] == ["user"]


async def test_cut_after_a_tool_started_keeps_it_and_goes_on(tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    command = f"echo once >> {marker}"
    h = Harness(
        [
            turn(
                tool_use("Bash", {"command": command}),
                "then more text",
                faults=[fault("cut", after=5, consume=True)],  # after the tool's block_stop
            ),
            turn("carried on"),
        ],
        tmp_path,
    )
    events, end = await h.run()
    assert transitions(events) == ["stream_error_recovery"]
    assert marker.read_text() == "once\n"  # the tool ran exactly once
    assert end.reason == "completed"
    assert_paired(end.messages)


async def test_token_budget_continues_until_most_is_used(tmp_path: Path) -> None:
    turns = [turn("part", usage=UsageSpec(output_tokens=400)) for _ in range(3)]
    h = Harness(
        [*turns, turn("end", usage=UsageSpec(output_tokens=400))], tmp_path, token_budget=1000
    )
    events, end = await h.run()
    # 400 → 800 → 1200 tokens: continued twice, then stopped past 90%
    assert transitions(events) == ["token_budget_continuation"] * 2
    assert end.reason == "completed"
    nudges = [e.message for e in events if isinstance(e, UserTurn) and e.message.is_meta]
    assert "budget" in nudges[0].text


async def test_token_budget_stops_on_diminishing_returns(tmp_path: Path) -> None:
    turns = [turn("more", usage=UsageSpec(output_tokens=10)) for _ in range(10)]
    h = Harness(turns, tmp_path, token_budget=1_000_000)
    events, end = await h.run()
    assert end.reason == "completed"
    # the first continuation, then three low-yield ones in a row end it
    assert transitions(events) == ["token_budget_continuation"] * 3
    assert len(h.model.requests) == 4


FAULTS = [
    "overloaded",
    "rate_limited",
    "server_error",
    "cut",
    "sse_error",
    "prompt_too_long",
    "auth",
    "media",
    "max_tokens",  # not a fault: the answer stops at the output limit
]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plan=st.lists(st.tuples(st.sampled_from(FAULTS), st.booleans()), min_size=1, max_size=6))
def test_property_random_faults(plan: list[tuple[str, bool]], tmp_path: Path) -> None:
    """Random faults before tool turns: the loop ends, pairing holds, no tool runs twice (nor
    runs unrecorded), and the end reason is the one the seeds' rules give for the plan."""
    work = Path(tempfile.mkdtemp(dir=tmp_path))
    turns = []
    for i, (kind, with_tool) in enumerate(plan):
        blocks = [tool_use("Bash", {"command": f"echo {i} >> log"})] if with_tool else ["hm"]
        if kind == "max_tokens":
            turns.append(turn(*blocks, "text", stop_reason="max_tokens"))
        else:
            turns.append(turn(*blocks, "text", faults=[fault(kind, after=1)]))  # type: ignore[arg-type]
    turns.append(turn("final"))

    async def scenario() -> tuple[LoopEnd, list[str]]:
        model = ScriptedModel(turns)
        params = LoopParams(
            messages=(Message.user("go"),),
            model="m",
            tools=default_tools(),
            workspace=Workspace(cwd=work),
            retry=RetryPolicy(random=lambda: 0.0),
            max_output_tokens=64_000,
        )

        async def no_sleep(_: float) -> None:
            return None

        allow = Policy("bypassPermissions").can_use_tool
        deps = LoopDeps(call_model=model.stream, can_use_tool=allow, sleep=no_sleep)
        events = [e async for e in query_loop(params, deps)]
        started = [e.tool_use.id for e in events if isinstance(e, ToolStarted)]
        assert len(started) == len(set(started))
        end = events[-1]
        assert isinstance(end, LoopEnd)
        # What the transcript records: every assistant message the history ever held.
        said = [e.message for e in events if isinstance(e, AssistantTurn)]
        return end, [u.input["command"].split()[1] for m in said for u in m.tool_uses]

    end, recorded = asyncio.run(scenario())
    assert_paired(end.messages)
    log = work / "log"
    lines = log.read_text().splitlines() if log.exists() else []
    assert len(lines) == len(set(lines)), "a tool ran twice"
    assert sorted(lines) == sorted(recorded), "a tool ran that the history does not record"
    assert end.reason == expected_end(plan)


def expected_end(plan: list[tuple[str, bool]]) -> str:
    """Walk the plan as the seeds' rules say: fatal faults end the run; a text answer
    completes it, unless it stopped at the output limit (one escalation, then up to three
    recoveries); a too-long prompt is compacted once per turn, when there is history to drop."""
    history, recoveries, escalated, compacted = 1, 0, False, False
    for kind, with_tool in [*plan, ("final", False)]:
        if kind == "auth":
            return "model_error"
        if kind == "media":
            return "image_error"
        if kind == "prompt_too_long":
            dropped = _trimmed(history)
            if compacted or dropped is None:
                return "prompt_too_long"
            history, compacted = dropped, True
        if kind == "max_tokens" and not with_tool and not escalated:
            escalated = True  # withheld: the request is sent again, served by the next turn
            continue
        if kind == "max_tokens" and recoveries < 3:
            history, recoveries = history + 2, recoveries + 1
            continue
        if not with_tool:
            return "completed"
        history, recoveries, escalated, compacted = history + 2, 0, False, False
    return "completed"


def _trimmed(length: int) -> int | None:
    """The history's length after `drop_oldest_exchanges`, None when it cannot shrink."""
    if length < 4:
        return None
    pairs = (length - 1) // 2
    drop = min(max(1, pairs // 2), pairs - 1)
    return length - 2 * drop if drop > 0 else None


def test_an_unreachable_server_gets_three_tries_not_ten() -> None:
    from codeloop.models.base import Transient, Unreachable

    policy = RetryPolicy()
    refused = Unreachable("cannot connect to http://127.0.0.1:9: connection refused")
    assert [policy.gives_up(n, refused) for n in (1, 2, 3)] == [False, False, True]
    assert not policy.gives_up(3, Transient("reset", status=502))
    assert policy.gives_up(10, Transient("reset", status=502))


def test_budget_markers_in_prompts() -> None:
    from codeloop.token_budget import parse_budget_marker

    assert parse_budget_marker("refactor the parser +500k") == 500_000
    assert parse_budget_marker("+1.5M: port it all") == 1_500_000
    assert parse_budget_marker("no marker here, 500k or a+5k") is None


async def test_a_tool_call_cut_mid_stream_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran.txt"
    call = tool_use("Bash", {"command": f"echo ran > {marker}"})
    # the connection drops while the call's JSON is still streaming (after 3 of its pieces)
    h = Harness(
        [turn(call, chunk_chars=4, faults=[fault("cut", after=4, consume=True)]), turn("ok")],
        tmp_path,
    )
    _, end = await h.run()
    assert end.reason == "completed"
    assert not marker.exists()
    assert_paired(end.messages)
