"""Make a history read back from disk one the model APIs accept again, whatever happened to it.

A process killed mid-turn leaves an assistant message whose tool calls were never answered,
and every later request would be rejected for it; a damaged transcript (a line lost to
garbage, a bad byte) can lose any message. `repair` answers unanswered calls with an
`is_error` "interrupted" result; turns a result whose call was lost into text saying so;
drops what cannot be sent (empty or repeated messages, empty text blocks, a call whose id was
used before, a second result for one call); and where a
message was lost so that the history would start with an answer, or hold two answers in a
row, puts in a note saying so, so that the first message is the user's and the roles
alternate. A valid history comes back untouched, object for object.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from codeloop.system.valueclass import valueclass
from codeloop.types import ContentBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock

INTERRUPTED_BY_EXIT = (
    "Interrupted: codeloop stopped before this tool call finished, so its result was not "
    "recorded. Whatever the call did before that may or may not have happened."
)
LOST_BEFORE = (
    "[The start of this conversation could not be read back from its damaged transcript: "
    "the messages before this point are missing.]"
)
LOST_BETWEEN = (
    "[A message here could not be read back from this session's damaged transcript: it is missing.]"
)


@valueclass
class Repaired:
    """A history made sendable, and what it took."""

    history: tuple[Message, ...]
    kept: int = 0  # messages of the given history in it (as they were, or mended)
    dropped: int = 0  # messages left out: empty or repeated
    interrupted: int = 0  # tool calls answered "interrupted"
    notes: int = 0  # notes put in where messages were lost


def repair_history(messages: Sequence[Message]) -> tuple[Message, ...]:
    return repair(messages).history


def repair(messages: Sequence[Message]) -> Repaired:
    sendable = _sendable(messages)
    repaired: list[Message] = []
    pending: tuple[ToolUseBlock, ...] = ()  # the last assistant message's calls, unanswered
    notes = 0
    for message in sendable:
        if message.role == "assistant":
            if pending:
                repaired.append(_interrupted(pending))
            elif not repaired or repaired[-1].role == "assistant":
                note = LOST_BETWEEN if repaired else LOST_BEFORE
                repaired.append(Message.user(note, is_meta=True))
                notes += 1
            repaired.append(message)
            pending = message.tool_uses
            continue
        answered = _answering(message, pending)
        pending = ()
        if answered is not None:
            repaired.append(answered)
    if pending:
        repaired.append(_interrupted(pending))
    given = {m.uuid for m in messages}
    kept = sum(m.uuid in given for m in repaired)
    interrupted = _interruptions(repaired) - _interruptions(messages)
    return Repaired(tuple(repaired), kept, len(messages) - kept, interrupted, notes)


def _interruptions(messages: Sequence[Message]) -> int:
    return sum(r.text == INTERRUPTED_BY_EXIT for m in messages for r in m.tool_results)


def _sendable(messages: Sequence[Message]) -> list[Message]:
    """Without repeated messages, empty text blocks, calls whose id was used before, and the
    messages this leaves empty (an answer cut before its first block)."""
    seen: set[str] = set()
    calls: set[str] = set()
    kept = []
    for message in messages:
        if message.uuid in seen:
            continue
        seen.add(message.uuid)
        content = tuple(b for b in message.content if _sendable_block(b, calls))
        if content:
            same = content == message.content
            kept.append(message if same else replace(message, content=content))
    return kept


def _sendable_block(block: ContentBlock, calls: set[str]) -> bool:
    if isinstance(block, TextBlock):
        return isinstance(block.text, str) and bool(block.text.strip())
    if isinstance(block, ToolUseBlock):
        fresh = block.id not in calls
        calls.add(block.id)
        return fresh
    return True


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
        else:
            others += _unpaired(block)
    content = (*(results.get(i) or _interrupted_result(i) for i in ids), *others)
    if content == message.content:
        return message
    return replace(message, content=content) if content else None


def _unpaired(result: ToolResultBlock) -> list[ContentBlock]:
    """A result whose call was lost, kept as what it said: a tool_result must answer a call."""
    head = (
        f"[The result of tool call {result.tool_use_id}, whose call was lost from the transcript:]"
    )
    if isinstance(result.content, str):
        return [TextBlock(f"{head}\n{result.content}")]
    return [
        TextBlock(head),
        *(b for b in result.content if not isinstance(b, TextBlock) or b.text.strip()),
    ]


def _interrupted(calls: tuple[ToolUseBlock, ...]) -> Message:
    return Message("user", tuple(_interrupted_result(call.id) for call in calls))


def _interrupted_result(tool_use_id: str) -> ToolResultBlock:
    return ToolResultBlock(tool_use_id, INTERRUPTED_BY_EXIT, is_error=True)
