"""L1, the tool-result budget: a result too big for the history goes to a file instead.

The history keeps a head-and-tail preview and the file's path, which the model can Read (with
offset and limit) or Grep when it needs more: nothing is lost, it only moved. A result over the
per-result limit is saved; then, if one message's results together still pass the per-message
limit, its largest remaining results are saved until they fit. Saving is idempotent (the file
is named after the tool_use id) and a preview is never saved again, so running the budget on
every request costs one pass over the history.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from codeloop.context.tokens import result_tokens
from codeloop.text import human_size, truncate_middle
from codeloop.types import ContentBlock, ImageBlock, Message, ToolResultBlock

PERSISTED_TAG = "<persisted-output>"
PREVIEW_CHARS = 2_000
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
_SAVED_PATH = re.compile(r"The full text is saved in (.+?): Read it")


@dataclass(frozen=True, slots=True)
class ResultBudget:
    max_result_tokens: int
    max_message_tokens: int
    results_dir: Path


def apply_result_budget(
    messages: tuple[Message, ...], budget: ResultBudget
) -> tuple[tuple[Message, ...], int]:
    """The history with over-budget results saved to files; and how many were saved."""
    out: list[Message] = []
    saved = 0
    for message in messages:
        if not message.tool_results:
            out.append(message)
            continue
        content, count = _budget_message(message, budget)
        saved += count
        out.append(replace(message, content=content) if count else message)
    return (tuple(out) if saved else messages), saved


def _budget_message(message: Message, budget: ResultBudget) -> tuple[tuple[ContentBlock, ...], int]:
    blocks = list(message.content)
    results = [(i, b) for i, b in enumerate(blocks) if isinstance(b, ToolResultBlock)]
    sizes = {i: result_tokens(b.content) for i, b in results}
    savable = [i for i, b in results if _can_save(b)]
    chosen = {i for i in savable if sizes[i] > budget.max_result_tokens}
    total = sum(sizes.values()) - sum(sizes[i] for i in chosen)
    for i in sorted(savable, key=sizes.__getitem__, reverse=True):
        if total <= budget.max_message_tokens:
            break
        if i not in chosen:
            chosen.add(i)
            total -= sizes[i]
    for i in chosen:
        block = blocks[i]
        assert isinstance(block, ToolResultBlock)
        blocks[i] = replace(block, content=persist_result(block, budget.results_dir))
    return tuple(blocks), len(chosen)


def _can_save(block: ToolResultBlock) -> bool:
    """Text results only (an image cannot be previewed), and never a preview again."""
    if isinstance(block.content, tuple) and any(
        isinstance(part, ImageBlock) for part in block.content
    ):
        return False
    return not block.text.startswith(PERSISTED_TAG)


def persist_result(block: ToolResultBlock, results_dir: Path) -> str:
    """Save the result's text and return the preview that replaces it in the history."""
    text = block.text
    size = human_size(len(text.encode("utf-8")))
    path = results_dir / f"{_UNSAFE.sub('_', block.tool_use_id) or 'result'}.txt"
    try:
        results_dir.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_text(text, encoding="utf-8")
    except OSError as exc:
        # Nowhere to put it: keep a preview anyway, so the window survives; say what was lost.
        where = f"It could not be saved ({exc.strerror or exc}); run the tool again, narrower."
    else:
        where = (
            f"The full text is saved in {path}: Read it (with offset and limit for a long "
            "file) or Grep it when you need more than this preview."
        )
    return (
        f"{PERSISTED_TAG}\nThis result was too large to keep in the conversation ({size}, "
        f"about {result_tokens(text):,} tokens). {where}\n\n"
        f"{truncate_middle(text, PREVIEW_CHARS)}\n</persisted-output>"
    )


def saved_path(text: str) -> str | None:
    """The file a preview points to (microcompact keeps it in its stub)."""
    if not text.startswith(PERSISTED_TAG):
        return None
    match = _SAVED_PATH.search(text)
    return match.group(1) if match else None
