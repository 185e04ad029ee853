"""Make a history read back from disk one the model APIs accept again.

A process killed mid-turn leaves an assistant message whose tool calls were never answered,
and every later request would be rejected for it. `repair_history` answers such calls with an
`is_error` "interrupted" result, drops what cannot be sent (empty or duplicated messages,
results that answer no call), and leaves a valid history untouched, object for object.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from codeloop.types import ContentBlock, Message, ToolResultBlock, ToolUseBlock

INTERRUPTED_BY_EXIT = (
    "Interrupted: codeloop stopped before this tool call finished, so its result was not "
    "recorded. Whatever the call did before that may or may not have happened."
)


def repair_history(messages: Sequence[Message]) -> tuple[Message, ...]:
    repaired: list[Message] = []
    pending: tuple[ToolUseBlock, ...] = ()  # the last assistant message's calls, unanswered
    for message in _sendable(messages):
        if message.role == "assistant":
            if pending:
                repaired.append(_interrupted(pending))
            repaired.append(message)
            pending = message.tool_uses
            continue
        answered = _answering(message, pending)
        pending = ()
        if answered is not None:
            repaired.append(answered)
    if pending:
        repaired.append(_interrupted(pending))
    return tuple(repaired)


def _sendable(messages: Sequence[Message]) -> list[Message]:
    """Without empty messages (an answer cut before its first block) and repeated ones."""
    seen: set[str] = set()
    kept = []
    for message in messages:
        if message.content and message.uuid not in seen:
            seen.add(message.uuid)
            kept.append(message)
    return kept


def _answering(message: Message, calls: tuple[ToolUseBlock, ...]) -> Message | None:
    """`message` with exactly one result per call, in call order and ahead of anything else."""
    ids = [call.id for call in calls]
    results: dict[str, ToolResultBlock] = {}
    others: list[ContentBlock] = []
    for block in message.content:
        if not isinstance(block, ToolResultBlock):
            others.append(block)
        elif block.tool_use_id in ids:
            results.setdefault(block.tool_use_id, block)
    content = (*(results.get(i) or _interrupted_result(i) for i in ids), *others)
    if content == message.content:
        return message
    return replace(message, content=content) if content else None


def _interrupted(calls: tuple[ToolUseBlock, ...]) -> Message:
    return Message("user", tuple(_interrupted_result(call.id) for call in calls))


def _interrupted_result(tool_use_id: str) -> ToolResultBlock:
    return ToolResultBlock(tool_use_id, INTERRUPTED_BY_EXIT, is_error=True)
