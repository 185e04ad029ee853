"""The loop's I/O, injected, so that the state machine can be tested without a network."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from codeloop.models.base import ModelClient, ModelRequest, StreamEvent
from codeloop.types import new_uuid

CallModel = Callable[[ModelRequest], AsyncIterator[StreamEvent]]


@dataclass(frozen=True)
class LoopDeps:
    call_model: CallModel
    uuid: Callable[[], str] = new_uuid
    clock: Callable[[], float] = field(default=time.monotonic)

    @staticmethod
    def for_client(client: ModelClient) -> LoopDeps:
        return LoopDeps(call_model=client.stream)
