"""The loop's I/O, injected, so that the state machine can be tested without a network."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

from codeloop.context.pipeline import Compacted
from codeloop.context.trim import drop_oldest_exchanges
from codeloop.models.base import ModelClient, ModelRequest, StreamEvent
from codeloop.types import Message, ToolUseBlock, new_uuid

CallModel = Callable[[ModelRequest], AsyncIterator[StreamEvent]]
# Shrink a history the API called too long.
Compactor = Callable[[tuple[Message, ...]], Awaitable[Compacted]]
# Called before the first writer of a turn runs, with the history before that turn: a checkpoint
# (checkpoints/). Returns once it is on disk, or a warning for the user when it failed.
BeforeWrite = Callable[[tuple[Message, ...], ToolUseBlock], Awaitable[str | None]]


async def trim_compactor(messages: tuple[Message, ...]) -> Compacted:
    return Compacted(drop_oldest_exchanges(messages))


@dataclass(frozen=True)
class LoopDeps:
    call_model: CallModel
    uuid: Callable[[], str] = new_uuid
    clock: Callable[[], float] = field(default=time.monotonic)
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    reactive_compact: Compactor = trim_compactor
    before_write: BeforeWrite | None = None

    @staticmethod
    def for_client(client: ModelClient) -> LoopDeps:
        return LoopDeps(call_model=client.stream)
