"""How full the context window is: cheap estimates, the last reported usage, the thresholds.

No tokenizer: about four characters a token, with non-ASCII text (CJK, emoji) counted heavier
and a few tokens per message and block for the wire format's framing. The count the pipeline
acts on is the larger of that estimate and the usage the API last reported plus an estimate of
the messages added since: a server that reports no usage (many OpenAI-compatible ones), or a
wrong one, must not make the window look emptier than it is.

Thresholds follow seed 002 (Claude Code): the effective window reserves room for the answer,
`min(max output, 20 000)`; autocompact starts 13 000 tokens below it and the blocking limit
sits 3 000 below it, which leaves the summary request room to run (167K and 177K of 200K).

What the threshold leaves once the system prompt, tools and memory are in is shared out by
`Shares`: one turn's tool results, one result, the summary. Claude Code's figures on a 200K
window are the caps, and a small window gets the same proportions of its own room, so that a
summary and the latest turn word for word always fit under the threshold together.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from codeloop.history_fold import HistoryFold
from codeloop.models.base import ToolSpec
from codeloop.models.catalog import ModelInfo, model_info
from codeloop.models.prompt_size import schema_prompt_tokens
from codeloop.system.valueclass import valueclass
from codeloop.text import CHARS_PER_TOKEN, estimate_text
from codeloop.types import (
    ContentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)

if TYPE_CHECKING:
    from codeloop.models.window_discovery import FoundWindow

# Framing the wire format adds around each message and each block (role, type, ids).
MESSAGE_OVERHEAD = 4
BLOCK_OVERHEAD = 3
# Anthropic bills an image by its pixels (about 1 600 tokens for a 1 092×1 092 one); its base64
# length says nothing useful.
IMAGE_TOKENS = 1_600

OUTPUT_RESERVE_CAP = 20_000
AUTOCOMPACT_MARGIN = 13_000
BLOCKING_MARGIN = 3_000
# Claude Code's on a 200K window: Read's cap, one message's results together, the summary.
RESULT_TOKENS_CAP = 25_000
TURN_RESULTS_CAP = 50_000
SUMMARY_TOKENS_CAP = 20_000
# Below these a result or a summary says too little to be worth the call.
MIN_RESULT_TOKENS = 500
MIN_SUMMARY_TOKENS = 512
# The least room a conversation needs: a request, a tool call and a small result.
MIN_TURN_TOKENS = 1_024
# Microcompact folds once the history fills all but 1/FOLD_HEADROOM of the room, down to
# 1/FOLD_DEPTH of it (Shares.fold_at, Shares.fold_to).
FOLD_HEADROOM = 8
FOLD_DEPTH = 4


def estimate_block(block: ContentBlock) -> int:
    match block:
        case TextBlock(text):
            body = estimate_text(text)
        case ThinkingBlock(thinking):
            body = estimate_text(thinking)
        case RedactedThinkingBlock(data):
            body = estimate_text(data)
        case ImageBlock():
            body = IMAGE_TOKENS
        case ToolUseBlock(_, name, input_):
            body = estimate_text(name) + estimate_text(json.dumps(input_, ensure_ascii=False))
        case ToolResultBlock(_, content):
            body = result_tokens(content)
    return body + BLOCK_OVERHEAD


def result_tokens(content: str | tuple[TextBlock | ImageBlock, ...]) -> int:
    """What a tool result's content costs (without its block framing)."""
    if isinstance(content, str):
        return estimate_text(content)
    return sum(estimate_block(part) for part in content)


def estimate_message(message: Message) -> int:
    """Counted once per message (Message.cached): every request counts the whole history."""
    return message.cached("tokens", _estimate_message)


def _estimate_message(message: Message) -> int:
    return MESSAGE_OVERHEAD + sum(estimate_block(block) for block in message.content)


def estimate_messages(messages: Iterable[Message]) -> int:
    return sum(estimate_message(message) for message in messages)


class HistoryTokens(HistoryFold[int]):
    """`estimate_messages` of a history, kept as it grows (history_fold.py)."""

    def __init__(self) -> None:
        super().__init__(0, lambda total, message: total + estimate_message(message))


def estimate_overhead(system: str, tools: Iterable[ToolSpec]) -> int:
    """The part of every request that is not history, with every tool's full schema (what
    Claude's and OpenAI's APIs carry; a session counts its own client's rendering:
    models/prompt_size.py)."""
    return schema_prompt_tokens(system, tools)


@valueclass(slots=True)
class ContextLimits:
    """One model's window and the thresholds derived from it, in tokens."""

    window: int
    # Room kept free for the answer: min(max output, 20 000), never more than a quarter of the
    # window (a session asks for no more output than this: see `SessionConfig.max_tokens`).
    output_reserve: int
    # Where the window was read when the server or the model file said it (/context shows it).
    source: str | None = None

    @staticmethod
    def for_model(info: ModelInfo, source: str | None = None) -> ContextLimits:
        reserve = min(info.max_output_tokens, OUTPUT_RESERVE_CAP, info.context_window // 4)
        return ContextLimits(info.context_window, reserve, source)

    @property
    def effective(self) -> int:
        """What the prompt may occupy."""
        return self.window - self.output_reserve

    @property
    def autocompact_at(self) -> int:
        # Claude Code's margins, on windows big enough for them; a small (local) window keeps
        # room in proportion instead: a fixed 13K would leave it nothing, or less than its own
        # system prompt, and every turn would compact.
        return self.effective - min(AUTOCOMPACT_MARGIN, self.effective // 3)

    @property
    def blocking_at(self) -> int:
        return self.effective - min(BLOCKING_MARGIN, self.effective // 10)


def context_limits(
    model: str, env: Mapping[str, str] | None = None, found: FoundWindow | None = None
) -> ContextLimits:
    """Limits from the catalog, or from the window `found` on the model's server or file
    (models/window_discovery.py); CODELOOP_CONTEXT_WINDOW / CODELOOP_MAX_OUTPUT_TOKENS win."""
    info = model_info(model, env)
    explicit = (os.environ if env is None else env).get("CODELOOP_CONTEXT_WINDOW", "").strip()
    if found is None or explicit:
        return ContextLimits.for_model(info)
    return ContextLimits.for_model(replace(info, context_window=found.tokens), found.source)


@valueclass(slots=True)
class Shares:
    """How the room under the autocompact threshold that the overhead (system prompt, tools,
    memory) leaves is shared out, in tokens. Half of it may go to one turn's tool results and
    a quarter to the summary: after a compaction the summary and the latest turn, word for
    word, still leave a quarter for the request and the recent turns."""

    limits: ContextLimits
    overhead: int

    @property
    def free(self) -> int:
        """What the conversation itself may hold before autocompact (negative: nothing)."""
        return self.limits.autocompact_at - self.overhead

    @property
    def turn_results(self) -> int:
        """All the tool results of one turn together."""
        return max(MIN_RESULT_TOKENS, min(TURN_RESULTS_CAP, self.free // 2))

    @property
    def result(self) -> int:
        """One tool result: Read pages to it, anything bigger goes to a file."""
        return min(RESULT_TOKENS_CAP, self.turn_results)

    @property
    def unanswered(self) -> int:
        """The answer that made a turn's calls and their results together: what a compaction
        keeps word for word beside the summary."""
        return max(MIN_RESULT_TOKENS, self.free - self.summary)

    @property
    def summary(self) -> int:
        """The summary's max_tokens: within the answer's reserve, which the window keeps."""
        share = max(MIN_SUMMARY_TOKENS, min(SUMMARY_TOKENS_CAP, self.free // 4))
        return min(self.limits.output_reserve, share)

    @property
    def fold_at(self) -> int:
        """History size past which microcompact folds old tool results: near the top of the
        room, so that folds come in rare batches (each one changes the prompt's prefix, which
        a prompt cache then processes again) and the request after a turn of results as big
        as a turn may bring is still under the autocompact threshold once folded."""
        return self.free - self.free // FOLD_HEADROOM

    @property
    def fold_to(self) -> int:
        """Where a fold takes the history down to: far enough under `fold_at` that several
        turns extend the prompt byte for byte before the next fold."""
        return self.free // FOLD_DEPTH

    def too_small(self) -> str | None:
        """Why this window cannot hold the overhead plus one turn (None: it can)."""
        if self.free >= MIN_TURN_TOKENS:
            return None
        return (
            f"the context window ({self.limits.window:,} tokens) is too small for this "
            f"session: the system prompt, tool definitions and memory take about "
            f"{self.overhead:,} tokens, which leaves {max(self.free, 0):,} of the "
            f"{self.limits.autocompact_at:,} usable before compaction for the conversation "
            f"(at least {MIN_TURN_TOKENS:,} are needed for one turn). Set "
            "CODELOOP_CONTEXT_WINDOW to the server's real window if it is larger, or use a "
            "model with a larger window."
        )


@valueclass(slots=True)
class UsageAnchor:
    """What the API said a prompt cost: `messages` is that prompt plus the reply to it, and
    `estimate` what `estimate_messages` makes of them."""

    messages: tuple[Message, ...]
    tokens: int
    estimate: int

    @staticmethod
    def after(
        sent: tuple[Message, ...], reply: Message, usage: Usage, *, estimate: int | None = None
    ) -> UsageAnchor:
        """`estimate` is `estimate_messages(sent)` when the caller keeps it (`HistoryTokens`)."""
        sent_tokens = estimate_messages(sent) if estimate is None else estimate
        reported = usage.context_tokens + usage.output_tokens
        return UsageAnchor((*sent, reply), reported, sent_tokens + estimate_message(reply))


def count_tokens(
    messages: tuple[Message, ...],
    overhead: int,
    anchor: UsageAnchor | None = None,
    *,
    history: int | None = None,
) -> int:
    """The prompt size these messages make: the estimate, or, when the API reported a larger
    count for the last prompt (a tokenizer denser than 4 characters a token), that count moved
    by the estimated difference between that prompt and these messages: what came after it
    added, what microcompact folded since taken off. A fold never makes the real count
    forgotten (and a compaction it would call for skipped); a compaction drops the anchor.
    `history` is `estimate_messages(messages)` when the caller keeps it (`HistoryTokens`)."""
    history = estimate_messages(messages) if history is None else history
    if anchor is None or anchor.tokens <= 0:
        return overhead + history
    return max(overhead + history, anchor.tokens + history - anchor.estimate)


__all__ = [
    "CHARS_PER_TOKEN",
    "ContextLimits",
    "HistoryTokens",
    "Shares",
    "UsageAnchor",
    "context_limits",
    "count_tokens",
    "estimate_block",
    "estimate_message",
    "estimate_messages",
    "estimate_overhead",
    "estimate_text",
    "result_tokens",
]
