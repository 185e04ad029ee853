"""How full the context window is: cheap estimates, the last reported usage, the thresholds.

No tokenizer: about four characters a token, with non-ASCII text (CJK, emoji) counted heavier
and a few tokens per message and block for the wire format's framing. The count the pipeline
acts on is the larger of that estimate and the usage the API last reported plus an estimate of
the messages added since: a server that reports no usage (many OpenAI-compatible ones), or a
wrong one, must not make the window look emptier than it is.

Thresholds follow seed 002 (Claude Code): the effective window reserves room for the answer,
`min(max output, 20 000)`; autocompact starts 13 000 tokens below it and the blocking limit
sits 3 000 below it, which leaves the summary request room to run (167K and 177K of 200K).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from codeloop.models.base import ToolSpec
from codeloop.models.catalog import ModelInfo, model_info
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

CHARS_PER_TOKEN = 4
# Framing the wire format adds around each message and each block (role, type, ids).
MESSAGE_OVERHEAD = 4
BLOCK_OVERHEAD = 3
# Anthropic bills an image by its pixels (about 1 600 tokens for a 1 092×1 092 one); its base64
# length says nothing useful.
IMAGE_TOKENS = 1_600

OUTPUT_RESERVE_CAP = 20_000
AUTOCOMPACT_MARGIN = 13_000
BLOCKING_MARGIN = 3_000


def estimate_text(text: str) -> int:
    """About four characters a token; each non-ASCII character counts about a token."""
    if text.isascii():
        return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
    extra = len(text.encode("utf-8")) - len(text)
    return (len(text) + 2 * extra + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


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
    return MESSAGE_OVERHEAD + sum(estimate_block(block) for block in message.content)


def estimate_messages(messages: Iterable[Message]) -> int:
    return sum(estimate_message(message) for message in messages)


def estimate_overhead(system: str, tools: Iterable[ToolSpec]) -> int:
    """The part of every request that is not history: system prompt and tool definitions."""
    total = estimate_text(system)
    for tool in tools:
        schema = json.dumps(tool.input_schema, ensure_ascii=False)
        total += estimate_text(tool.name) + estimate_text(tool.description)
        total += estimate_text(schema) + BLOCK_OVERHEAD
    return total


@dataclass(frozen=True, slots=True)
class ContextLimits:
    """One model's window and the thresholds derived from it, in tokens."""

    window: int
    # Room kept free for the answer: min(max output, 20 000), never more than half the window.
    output_reserve: int

    @staticmethod
    def for_model(info: ModelInfo) -> ContextLimits:
        reserve = min(info.max_output_tokens, OUTPUT_RESERVE_CAP, info.context_window // 2)
        return ContextLimits(info.context_window, reserve)

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


def context_limits(model: str, env: Mapping[str, str] | None = None) -> ContextLimits:
    """Limits from the catalog, CODELOOP_CONTEXT_WINDOW / CODELOOP_MAX_OUTPUT_TOKENS applied."""
    return ContextLimits.for_model(model_info(model, env))


@dataclass(frozen=True, slots=True)
class UsageAnchor:
    """What the API said a prompt cost: `messages` is that prompt plus the reply to it."""

    messages: tuple[Message, ...]
    tokens: int

    @staticmethod
    def after(sent: tuple[Message, ...], reply: Message, usage: Usage) -> UsageAnchor:
        return UsageAnchor((*sent, reply), usage.context_tokens + usage.output_tokens)


def count_tokens(
    messages: tuple[Message, ...], overhead: int, anchor: UsageAnchor | None = None
) -> int:
    """The prompt size these messages make: the estimate, or the reported usage plus an
    estimate of what came after it when that is larger. The anchor counts only while the
    history still starts with exactly the messages it was reported for."""
    estimate = overhead + estimate_messages(messages)
    if anchor is None or anchor.tokens <= 0:
        return estimate
    n = len(anchor.messages)
    if len(messages) < n or any(
        a is not b for a, b in zip(messages, anchor.messages, strict=False)
    ):
        return estimate
    return max(estimate, anchor.tokens + estimate_messages(messages[n:]))


__all__ = [
    "ContextLimits",
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
