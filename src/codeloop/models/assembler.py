"""Assemble a normalized event stream into an assistant message, block by block.

The loop feeds every event in and gets each content block back the moment its block_stop
arrives, which is what lets a tool start while the model is still writing. Given a
`CallReader`, every tool call comes back under the real name of its tool, and once the answer
is over, calls it wrote as text become tool_use blocks (`written_calls`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable
from dataclasses import field
from typing import TYPE_CHECKING

from codeloop.models.base import (
    BlockDelta,
    BlockStart,
    BlockStop,
    MessageDelta,
    MessageStart,
    StreamEvent,
)
from codeloop.system.valueclass import valueclass
from codeloop.types import (
    ContentBlock,
    Message,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)

if TYPE_CHECKING:
    from codeloop.models.call_reader import CallReader


@valueclass(frozen=False)
class _OpenBlock:
    start: ContentBlock
    parts: list[str] = field(default_factory=list)
    signature: str = ""


class MessageAssembler:
    def __init__(self, reader: CallReader | None = None) -> None:
        self._reader = reader
        self.id = ""
        self.model = ""
        self.usage = Usage()
        self.stop_reason: StopReason | None = None
        self.stop_sequence: str | None = None
        self._open: dict[int, _OpenBlock] = {}
        self._done: dict[int, ContentBlock] = {}

    def feed(self, event: StreamEvent) -> ContentBlock | None:
        """Take one event; return the block it completed, if any."""
        match event:
            case MessageStart(id_, model, usage):
                self.id, self.model, self.usage = id_, model, usage
            case BlockStart(index, block):
                self._open[index] = _OpenBlock(block)
            case BlockDelta(index, kind, value):
                open_block = self._open.get(index)
                if open_block is None:
                    raise ValueError(f"delta for block {index}, which never started")
                if kind == "signature":
                    open_block.signature += value
                else:
                    open_block.parts.append(value)
            case BlockStop(index):
                open_block = self._open.pop(index, None)
                if open_block is None:
                    raise ValueError(f"stop for block {index}, which never started")
                block = _finish(open_block)
                if self._reader is not None and isinstance(block, ToolUseBlock):
                    block = self._reader.named(block)
                self._done[index] = block
                return block
            case MessageDelta(stop_reason, usage, stop_sequence):
                self.stop_reason = stop_reason
                self.stop_sequence = stop_sequence
                self.usage = self.usage.merged(usage)
        return None

    @property
    def blocks(self) -> tuple[ContentBlock, ...]:
        """Completed blocks in index order (an unfinished block is left out)."""
        return tuple(self._done[i] for i in sorted(self._done))

    def message(self) -> Message:
        return Message("assistant", self.blocks)

    def written_calls(self) -> tuple[ToolUseBlock, ...]:
        """Once the answer is over: the tool calls its text wrote, now tool_use blocks of the
        answer in place of that text (none when it has no reader, or calls tools itself)."""
        if self._reader is None:
            return ()
        blocks = self._reader.written(self.blocks)
        if blocks is None:
            return ()
        self._done = dict(enumerate(blocks))
        self.stop_reason = "tool_use"
        return tuple(block for block in blocks if isinstance(block, ToolUseBlock))


def _finish(open_block: _OpenBlock) -> ContentBlock:
    text = "".join(open_block.parts)
    start = open_block.start
    if isinstance(start, TextBlock):
        return TextBlock(start.text + text)
    if isinstance(start, ThinkingBlock):
        return ThinkingBlock(start.thinking + text, start.signature + open_block.signature)
    if isinstance(start, ToolUseBlock):
        return _finish_tool_use(start, text)
    return start


def _finish_tool_use(start: ToolUseBlock, raw: str) -> ToolUseBlock:
    if not raw.strip():
        return ToolUseBlock(start.id, start.name, dict(start.input))
    from codeloop.models.lenient_json import loads_lenient  # a tool call's: not before one

    try:
        parsed = loads_lenient(raw)
    except json.JSONDecodeError as exc:
        problem = f"tool input is not valid JSON ({exc}): {raw[:200]}"
        return ToolUseBlock(start.id, start.name, {}, input_error=problem)
    if not isinstance(parsed, dict):
        problem = f"tool input must be a JSON object, got {raw[:200]}"
        return ToolUseBlock(start.id, start.name, {}, input_error=problem)
    return ToolUseBlock(start.id, start.name, parsed)


async def collect(events: AsyncIterable[StreamEvent]) -> MessageAssembler:
    """Assemble a whole stream at once (tests, and anything that needs no block-by-block view)."""
    assembler = MessageAssembler()
    async for event in events:
        assembler.feed(event)
    return assembler
