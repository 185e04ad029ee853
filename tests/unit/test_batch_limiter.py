"""The shared rate limiter: the retry policy's seam in the loop, and the batch's gate.

Two loops share a LocalGate on a fake clock: the 529 one of them meets holds the other's
next request back for as long as the first one waits; other failures hold nobody.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from codeloop.batch.limiter import Gate, LocalGate
from codeloop.deps import LoopDeps
from codeloop.events import LoopEnd
from codeloop.loop import LoopParams, query_loop
from codeloop.models.retry import RateLimiter, RetryPolicy
from codeloop.permissions.policy import Policy
from codeloop.testing.scenario import Turn, fault, turn
from codeloop.testing.scripted import ScriptedModel
from codeloop.tools.base import Workspace
from codeloop.types import Message


class Clock:
    def __init__(self) -> None:
        self.now = 100.0
        self.gate_sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.gate_sleeps.append(seconds)
        self.now += seconds


async def run(
    turns: list[Turn],
    tmp: Path,
    limiter: RateLimiter | None,
    sleep: Callable[[float], Awaitable[None]] | None = None,
    **extra: object,
) -> LoopEnd:
    async def no_sleep(seconds: float) -> None:
        pass

    params = LoopParams(
        messages=(Message.user("go"),),
        model="m",
        tools={},
        workspace=Workspace(cwd=tmp),
        retry=RetryPolicy(random=lambda: 0.0, limiter=limiter),
        **extra,  # type: ignore[arg-type]
    )
    allow = Policy("bypassPermissions").can_use_tool
    deps = LoopDeps(ScriptedModel(turns).stream, allow, sleep=sleep or no_sleep)
    events = [e async for e in query_loop(params, deps)]
    end = events[-1]
    assert isinstance(end, LoopEnd)
    return end


async def test_an_overload_holds_every_session_sharing_the_gate(tmp_path: Path) -> None:
    """While session A waits out its 529, session B's request waits at the gate as long."""
    clock = Clock()
    gate = LocalGate(clock, clock.sleep)
    b_ends: list[LoopEnd] = []

    async def a_waits(seconds: float) -> None:
        assert seconds == 2.0
        b_ends.append(await run([turn("fine")], tmp_path, gate))

    overloaded = [turn("ok", faults=[fault("overloaded", retry_after=2)])]
    assert (await run(overloaded, tmp_path, gate, sleep=a_waits)).reason == "completed"
    assert [end.reason for end in b_ends] == ["completed"]
    assert clock.gate_sleeps == [2.0]  # B's; A's own retry then found the gate open


async def test_without_a_limiter_nobody_else_waits(tmp_path: Path) -> None:
    clock = Clock()
    b_ends: list[LoopEnd] = []

    async def a_waits(seconds: float) -> None:
        b_ends.append(await run([turn("fine")], tmp_path, None))

    overloaded = [turn("ok", faults=[fault("overloaded", retry_after=2)])]
    assert (await run(overloaded, tmp_path, None, sleep=a_waits)).reason == "completed"
    assert [end.reason for end in b_ends] == ["completed"] and clock.gate_sleeps == []


async def test_backoff_without_retry_after_holds_the_gate_as_long(tmp_path: Path) -> None:
    holds: list[float] = []

    class Recording:
        async def wait(self) -> None:
            pass

        async def hold(self, seconds: float) -> None:
            holds.append(seconds)

    twice = [turn("ok", faults=[fault("rate_limited", times=2)])]
    assert (await run(twice, tmp_path, Recording())).reason == "completed"
    assert holds == [0.5, 1.0]  # each hold is that session's own backoff


async def test_other_failures_hold_nobody(tmp_path: Path) -> None:
    clock = Clock()
    gate = LocalGate(clock, clock.sleep)
    flaky = [turn("ok", faults=[fault("server_error"), fault("cut")])]
    assert (await run(flaky, tmp_path, gate)).reason == "completed"
    assert gate.gate.remaining() == 0.0
    assert (await run([turn("fine")], tmp_path, gate)).reason == "completed"
    assert clock.gate_sleeps == []


async def test_an_abort_while_held_ends_the_run_at_once(tmp_path: Path) -> None:
    class Held:
        async def wait(self) -> None:
            abort.set()
            await asyncio.Event().wait()

        async def hold(self, seconds: float) -> None:
            raise AssertionError("nothing failed")

    abort = asyncio.Event()
    end = await run([turn("never")], tmp_path, Held(), abort=abort)
    assert end.reason == "aborted_streaming"
    assert [m.role for m in end.messages] == ["user"]


def test_a_gate_only_moves_later() -> None:
    now = [0.0]
    gate = Gate(lambda: now[0])
    gate.hold(5)
    gate.hold(1)
    assert gate.remaining() == 5
    now[0] = 4.5
    assert gate.remaining() == 0.5
    now[0] = 6
    assert gate.remaining() == 0


async def test_waiting_sleeps_again_when_held_again_meanwhile() -> None:
    clock = Clock()
    gate = LocalGate(clock, clock.sleep)
    gate.gate.hold(1)
    real_sleep = clock.sleep

    async def sleep_and_get_held(seconds: float) -> None:
        await real_sleep(seconds)
        if len(clock.gate_sleeps) == 1:
            gate.gate.hold(3)

    gate._sleep = sleep_and_get_held
    await gate.wait()
    assert clock.gate_sleeps == [1.0, 3.0]
