"""Time to first token on the scripted model, with a clock the model's stream moves: 0.3 s
pass before the message_start, 1 s more before the first text; the loop reports 300 ms (the
message_start), on the raw stream's message_start and on the request's end."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from codeloop.deps import LoopDeps
from codeloop.events import ModelStreamed, RequestEnd
from codeloop.loop import LoopParams, query_loop
from codeloop.models.base import BlockDelta, MessageStart, ModelRequest, StreamEvent
from codeloop.permissions.policy import Policy
from codeloop.testing.scenario import turn
from codeloop.testing.scripted import ScriptedModel
from codeloop.tools.base import Workspace
from codeloop.types import Message


class SlowModel:
    """The scripted answer, with the clock moved as a slow server would move it."""

    def __init__(self) -> None:
        self.inner = ScriptedModel([turn("Hello.")])
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        async for event in self.inner.stream(request):
            if isinstance(event, MessageStart):
                self.now += 0.3
            elif isinstance(event, BlockDelta):
                self.now += 1.0
            yield event


def test_ttft_is_the_time_to_message_start(tmp_path: Path) -> None:
    model = SlowModel()
    params = LoopParams(
        messages=(Message.user("hi"),),
        model="m",
        tools={},
        workspace=Workspace(cwd=tmp_path),
        stream_events=True,
    )
    deps = LoopDeps(model.stream, Policy("bypassPermissions").can_use_tool, clock=model.clock)

    async def run() -> list[object]:
        return [e async for e in query_loop(params, deps)]

    events = asyncio.run(run())
    (end,) = [e for e in events if isinstance(e, RequestEnd)]
    assert end.ttft_ms is not None and round(end.ttft_ms) == 300
    assert end.duration_ms >= 1300
    streamed = [e for e in events if isinstance(e, ModelStreamed)]
    assert round(streamed[0].ttft_ms or 0) == 300 and isinstance(streamed[0].event, MessageStart)
    assert all(e.ttft_ms is None for e in streamed[1:])
