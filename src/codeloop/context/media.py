"""Images the API refused, replaced by a note, so that one bad image does not end every later
prompt of the session.

A refused image stays refused: sent again, the same history fails the same way, and so would
`--continue`. The loop swaps the refused blocks for a short text saying what was removed and
why, then retries once (the one-shot guard it keeps for reactive compaction). When the error
names the block (Anthropic's `messages.3.content.0...`), only that block goes; otherwise every
image in the history does, since none of them can be told apart from the culprit.
"""

from __future__ import annotations

from dataclasses import replace

from codeloop.system.lazy_pattern import LazyPattern
from codeloop.system.valueclass import valueclass
from codeloop.types import ContentBlock, ImageBlock, Message, TextBlock, ToolResultBlock, new_uuid

_PATH = LazyPattern(r"messages\.(\d+)\.content\.(\d+)")


@valueclass
class Stripped:
    messages: tuple[Message, ...]
    removed: int  # blocks replaced by a note; 0: nothing to remove, the error stands


def strip_refused_media(messages: tuple[Message, ...], error: str, *, offset: int = 0) -> Stripped:
    """`messages` with the refused images replaced by a note; `offset` is the number of
    messages sent ahead of the history (the memory), which the error's indexes count."""
    note = TextBlock(f"[image removed: the API refused it ({error[:200]})]")
    target = _target(messages, error, offset)
    removed = 0
    out: list[Message] = []
    for i, message in enumerate(messages):
        blocks: list[ContentBlock] = []
        for j, block in enumerate(message.content):
            if target is None or target == (i, j):
                block, count = _without_media(block, note)
                removed += count
            blocks.append(block)
        changed = any(a is not b for a, b in zip(blocks, message.content, strict=True))
        # A new uuid: the transcript sees a rebuilt history and records it whole.
        out.append(replace(message, content=tuple(blocks), uuid=new_uuid()) if changed else message)
    return Stripped(tuple(out) if removed else messages, removed)


def _target(messages: tuple[Message, ...], error: str, offset: int) -> tuple[int, int] | None:
    """The (message, block) the error names, when it names one that holds an image."""
    match = _PATH.search(error)
    if match is None:
        return None
    i, j = int(match.group(1)) - offset, int(match.group(2))
    if not (0 <= i < len(messages) and 0 <= j < len(messages[i].content)):
        return None
    _, count = _without_media(messages[i].content[j], TextBlock(""))
    return (i, j) if count else None


def _without_media(block: ContentBlock, note: TextBlock) -> tuple[ContentBlock, int]:
    if isinstance(block, ImageBlock):
        return note, 1
    if isinstance(block, ToolResultBlock) and not isinstance(block.content, str):
        kept = tuple(note if isinstance(b, ImageBlock) else b for b in block.content)
        count = sum(isinstance(b, ImageBlock) for b in block.content)
        return (replace(block, content=kept), count) if count else (block, 0)
    return block, 0
