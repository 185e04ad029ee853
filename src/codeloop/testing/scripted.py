"""A deterministic ModelClient for loop tests: serves scenario turns, no network, no clock games.

It yields exactly the events `render_turn` describes, sleeping the scripted pauses, and turns
faults into the same taxonomy errors the real adapters raise, so the loop's retry, recovery and
watchdog paths are tested without a server.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable

from codeloop.models.base import (
    Fatal,
    KeepAlive,
    MediaError,
    ModelError,
    ModelRequest,
    Overloaded,
    PromptTooLong,
    RateLimited,
    StreamErrorEvent,
    StreamEvent,
    Transient,
)
from codeloop.testing.scenario import (
    REQUEST_FAULTS,
    Fault,
    Scenario,
    ScenarioPlayer,
    Serving,
    Turn,
    render_turn,
)


def fault_error(fault: Fault) -> ModelError:
    """The error a real adapter raises for this fault (stall is not an error: it just waits)."""
    retry_after = fault.retry_after_seconds
    message = fault.message
    match fault.kind:
        case "overloaded":
            return Overloaded(message or "Overloaded", retry_after=retry_after)
        case "rate_limited":
            return RateLimited(message or "Rate limited", retry_after=retry_after, status=429)
        case "server_error":
            return Transient(message or "Internal server error", status=500)
        case "prompt_too_long":
            text = message or f"prompt is too long: {fault.actual} tokens > {fault.limit} maximum"
            return PromptTooLong(text, actual=fault.actual, limit=fault.limit)
        case "media":
            return MediaError(message or "image exceeds 5 MB maximum", status=400)
        case "auth":
            return Fatal(message or "invalid x-api-key", status=401)
        case "cut":
            return Transient(
                message or f"scripted model: connection cut after {fault.after} events"
            )
        case "sse_error":
            return StreamErrorEvent(message or f"{fault.error_type}: Overloaded")
    raise ValueError(f"fault {fault.kind!r} raises no error")


class ScriptedModel:
    """`ScriptedModel([turn(text="hi"), turn(tool_use("Bash", {"command": "ls"}))])`."""

    def __init__(
        self,
        turns: Scenario | Iterable[Turn],
        *,
        provider: str = "scripted",
    ) -> None:
        scenario = turns if isinstance(turns, Scenario) else Scenario(turns=tuple(turns))
        if any(t.raw is not None for t in scenario.turns):
            raise ValueError("raw turns are wire bytes: serve them with FakeModelServer")
        self.provider = provider
        self.requests: list[ModelRequest] = []
        self._player = ScenarioPlayer(scenario)

    @property
    def remaining(self) -> int:
        """Turns not served yet: 0 at the end of a test that used the whole script."""
        return self._player.remaining

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        # Record and take the turn now, not at first iteration: a request counts when it is made.
        self.requests.append(request)
        return self._serve(self._player.take(request.model), request)

    async def _serve(
        self, serving: Serving | None, request: ModelRequest
    ) -> AsyncIterator[StreamEvent]:
        if serving is None:
            served = len(self._player.scenario.turns)
            raise Fatal(
                f"scripted model: no turn left (all {served} served); "
                f"request {len(self.requests)} was not scripted"
            )
        fault = serving.fault
        if fault is not None and fault.kind in REQUEST_FAULTS:
            raise fault_error(fault)
        events = render_turn(serving.turn, serving.index, model=request.model)
        for i, paced in enumerate(events):
            if fault is not None and i == fault.after:
                async for keep_alive in self._strike(fault, serving):
                    yield keep_alive
            yield paced.event
            if paced.pause:
                await asyncio.sleep(paced.pause)
        if fault is not None and fault.after >= len(events):
            async for keep_alive in self._strike(fault, serving):
                yield keep_alive

    async def _strike(self, fault: Fault, serving: Serving) -> AsyncIterator[StreamEvent]:
        if fault.kind != "stall":
            raise fault_error(fault)
        left = fault.seconds
        while fault.ping_every is not None and left > fault.ping_every:
            await asyncio.sleep(fault.ping_every)
            yield KeepAlive()
            left -= fault.ping_every
        await asyncio.sleep(left)
        self._player.served(serving)

    async def aclose(self) -> None:
        """Nothing to release; present for the ModelClient protocol."""
