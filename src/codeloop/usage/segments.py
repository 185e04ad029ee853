"""What a model request sent, as estimated segments in prompt order.

A request's prompt is the system prompt and tool definitions, then the messages. Each message
is one segment (a typed prompt, an assistant turn, a compaction summary, a synthetic
reminder), except that each tool result in it is a segment of its own, naming its call: that
is what lets a tool be charged for its result in every later request, in the form it was sent
(whole, moved to a file, or folded to a stub) until a compaction removed it. The sizes are the
context pipeline's estimates; readers scale them to the usage the API reported.
"""

from __future__ import annotations

from typing import Any, Literal

from codeloop.context.compact import is_compact_summary
from codeloop.context.microcompact import describe_target
from codeloop.context.tokens import (
    BLOCK_OVERHEAD,
    estimate_message,
    estimate_overhead,
    result_tokens,
)
from codeloop.history_fold import shared_prefix
from codeloop.models.base import ModelRequest, ToolSpec
from codeloop.system.valueclass import valueclass
from codeloop.types import Message, ToolResultBlock, ToolUseBlock

SegmentKind = Literal["system", "prompt", "assistant", "result", "summary", "meta"]
KINDS: tuple[SegmentKind, ...] = ("system", "prompt", "assistant", "result", "summary", "meta")


@valueclass(slots=True)
class Segment:
    kind: SegmentKind
    tokens: int
    # For a tool result: its call, the tool, and what it was about (a file path for the file
    # tools, else a short description of the command or pattern).
    tool_use_id: str | None = None
    tool: str | None = None
    target: str | None = None

    def to_json(self) -> list[Any]:
        if self.tool_use_id is None:
            return [self.kind, self.tokens]
        return [self.kind, self.tokens, self.tool_use_id, self.tool, self.target]

    @staticmethod
    def from_json(data: Any) -> Segment:
        """Raises ValueError (or TypeError) for anything that is not a segment."""
        kind, tokens, *rest = data
        if kind not in KINDS or not isinstance(tokens, int) or tokens < 0:
            raise ValueError(f"not a segment: {data!r}")
        if not rest:
            return Segment(kind, tokens)
        call, tool, target = (None if v is None else str(v) for v in rest[:3])
        return Segment(kind, tokens, call, tool, target)


def target_of(use: ToolUseBlock | None) -> str | None:
    """A file tool's path as given; otherwise what the call was about, shortened."""
    if use is None:
        return None
    path = use.input.get("file_path") or use.input.get("notebook_path")
    if isinstance(path, str):
        return path
    return describe_target(use) or None


class SegmentCache:
    """One agent's requests as changes: how many segments of the previous request the next one
    starts with, and its segments after those.

    Requests share most of their messages with the previous one, so the shared prefix is found
    in C (`shared_prefix`) and only new (or rewritten) messages are measured."""

    def __init__(self) -> None:
        self._overhead: tuple[str, tuple[ToolSpec, ...]] | None = None
        self._messages: tuple[Message, ...] = ()
        self._ends: list[int] = []  # segments up to and including each message, system first
        self._uses: dict[str, ToolUseBlock] = {}

    def delta(self, request: ModelRequest) -> tuple[int, list[Segment]]:
        overhead = (request.system, request.tools)
        same = self._overhead is not None and all(
            a is b for a, b in zip(self._overhead, overhead, strict=True)
        )
        messages = request.messages
        shared = shared_prefix(messages, self._messages) if same else 0
        added: list[Segment] = []
        if not same:
            self._overhead = overhead
            added.append(Segment("system", estimate_overhead(request.system, request.tools)))
        keep = self._ends[shared - 1] if shared else (0 if not same else 1)
        ends = self._ends[:shared]
        count = keep + len(added)
        for message in messages[shared:]:
            self._uses.update((use.id, use) for use in message.tool_uses)
            segments = message_segments(message, self._uses)
            added.extend(segments)
            count += len(segments)
            ends.append(count)
        self._messages, self._ends = tuple(messages), ends
        return keep, added


def message_segments(message: Message, uses: dict[str, ToolUseBlock]) -> tuple[Segment, ...]:
    total = estimate_message(message)
    results = [
        Segment(
            "result",
            result_tokens(block.content) + BLOCK_OVERHEAD,
            block.tool_use_id,
            use.name if (use := uses.get(block.tool_use_id)) else None,
            target_of(use),
        )
        for block in message.content
        if isinstance(block, ToolResultBlock)
    ]
    rest = total - sum(r.tokens for r in results)
    return (*results, Segment(_kind(message), rest)) if rest > 0 else tuple(results)


def _kind(message: Message) -> SegmentKind:
    if message.role == "assistant":
        return "assistant"
    if is_compact_summary(message):
        return "summary"
    if message.is_meta or message.tool_results:
        return "meta"
    return "prompt"
