"""The last-resort way to fit a window: drop the oldest exchanges, keep pairing intact.

Used when the API says the prompt is too long and no smarter compactor is configured. The
first user message (the task) and the most recent exchanges stay; whole assistant/tool-result
pairs go, so every tool_use keeps its tool_result.
"""

from __future__ import annotations

from codeloop.types import Message, TextBlock

# Why `drop_oldest_exchanges` found nothing to drop, for the end of a run whose prompt the API
# refused as too long.
TRIM_FAILED = (
    "Dropping the oldest messages to make room was tried, but none can go: the first request "
    "and the latest exchange always stay. Nothing was dropped."
)


def drop_oldest_exchanges(
    messages: tuple[Message, ...], keep_fraction: float = 0.5
) -> tuple[Message, ...] | None:
    """Drop the oldest (assistant, user) pairs after the first message; None if nothing can go."""
    if len(messages) < 4 or messages[0].role != "user":
        return None
    rest = messages[1:]
    pairs = len(rest) // 2
    drop = max(1, int(pairs * (1 - keep_fraction)))
    if drop >= pairs:
        drop = pairs - 1
    if drop <= 0:
        return None
    removed = drop * 2
    note = TextBlock(
        f"[codeloop: {removed} earlier messages were removed to fit the context window]"
    )
    first = Message("user", (*messages[0].content, note), uuid=messages[0].uuid)
    return (first, *rest[removed:])
