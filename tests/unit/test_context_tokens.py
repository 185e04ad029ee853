"""Token estimates, the usage anchor, and the thresholds for several windows."""

from __future__ import annotations

import pytest

from codeloop.context.tokens import (
    IMAGE_TOKENS,
    ContextLimits,
    Shares,
    UsageAnchor,
    context_limits,
    count_tokens,
    estimate_message,
    estimate_messages,
    estimate_text,
)
from codeloop.types import ImageBlock, Message, ToolResultBlock, ToolUseBlock, Usage


@pytest.mark.parametrize(
    ("model", "env", "window", "compact_at", "block_at"),
    [
        # Seed 002's worked example: 200K window, output capped at 20K.
        ("claude-sonnet-4-5", {}, 200_000, 167_000, 177_000),
        ("claude-opus-4-1", {}, 200_000, 167_000, 177_000),
        # A small max output reserves less: 200K - 8 192.
        ("claude-3-5-sonnet-20241022", {}, 200_000, 178_808, 188_808),
        ("gpt-4o", {}, 128_000, 98_616, 108_616),
        # The acceptance session's window: a quarter of it (16K) is kept for the answer.
        ("claude-sonnet-4-5", {"CODELOOP_CONTEXT_WINDOW": "64000"}, 64_000, 35_000, 45_000),
        # A local model on a 32K server (unknown to the catalog: 8 192 output).
        ("qwen2.5-coder-32b", {"CODELOOP_CONTEXT_WINDOW": "32768"}, 32_768, 16_384, 22_119),
        (
            "llama-3.1-8b",
            {"CODELOOP_CONTEXT_WINDOW": "32000", "CODELOOP_MAX_OUTPUT_TOKENS": "4096"},
            32_000,
            18_603,
            25_114,
        ),
        # Too small for the fixed margins: a quarter of the window is reserved at most, and
        # the margins are a third and a tenth of what is left.
        ("tiny", {"CODELOOP_CONTEXT_WINDOW": "8000"}, 8_000, 4_000, 5_400),
        # The bundled offline model: an 8K window, 1K answers.
        ("smollm2-135m-instruct", {}, 8_192, 4_779, 6_452),
    ],
)
def test_thresholds(
    model: str, env: dict[str, str], window: int, compact_at: int, block_at: int
) -> None:
    limits = context_limits(model, env)
    assert limits.window == window
    assert limits.autocompact_at == compact_at
    assert limits.blocking_at == block_at
    assert 0 < limits.autocompact_at <= limits.blocking_at < limits.effective < limits.window


def test_effective_window_reserves_the_capped_output() -> None:
    assert ContextLimits(200_000, 20_000).effective == 180_000


def test_text_estimate_is_about_four_characters_a_token() -> None:
    assert estimate_text("") == 0
    assert estimate_text("abcd" * 1000) == 1000
    # CJK runs about a token per character; chars/4 alone would say a quarter of that.
    assert estimate_text("上下文管理" * 100) >= 500


def test_blocks_are_counted_by_kind() -> None:
    image = Message("user", (ToolResultBlock("t1", (ImageBlock("image/png", "A" * 400_000),)),))
    assert IMAGE_TOKENS <= estimate_message(image) < IMAGE_TOKENS + 20
    call = Message("assistant", (ToolUseBlock("t1", "Bash", {"command": "x" * 400}),))
    assert 100 < estimate_message(call) < 130


def test_reported_usage_counts_while_the_history_keeps_its_prefix() -> None:
    sent = (Message.user("hello"),)
    reply = Message.user("hi")  # any message will do as the reply
    anchor = UsageAnchor.after(sent, reply, Usage(input_tokens=9_000, output_tokens=500))
    added = (Message.user("x" * 4_000),)
    history = (*sent, reply, *added)
    assert count_tokens(history, 0, anchor) == 9_500 + estimate_messages(added)
    # A rewritten history (microcompact folded a result): the reported count, moved by the
    # estimated difference, never the bare estimate.
    shorter = (Message.user("hel"), reply, *added)
    moved = 9_500 + estimate_messages(shorter) - estimate_messages((*sent, reply))
    assert count_tokens(shorter, 0, anchor) == moved > estimate_messages(shorter)


def test_an_estimate_above_the_reported_usage_wins() -> None:
    """A server reporting no usage (or a wrong one) must not make the window look empty."""
    sent = (Message.user("x" * 40_000),)
    reply = Message.user("ok")
    anchor = UsageAnchor.after(sent, reply, Usage(input_tokens=100))
    assert count_tokens((*sent, reply), 50, anchor) == 50 + estimate_messages((*sent, reply))


def test_claude_codes_figures_are_the_shares_of_a_200k_window() -> None:
    shares = Shares(context_limits("claude-sonnet-4-5"), 3_000)
    assert (shares.result, shares.turn_results, shares.summary) == (25_000, 50_000, 20_000)
    assert shares.too_small() is None


@pytest.mark.parametrize("window", [16_000, 32_000, 60_000, 64_000, 128_000])
def test_a_smaller_window_gets_the_same_proportions_of_its_room(window: int) -> None:
    """After a compaction the summary and the latest turn's results, word for word, fit under
    the threshold with a quarter of the room to spare, whatever the window."""
    limits = context_limits("claude-sonnet-4-5", {"CODELOOP_CONTEXT_WINDOW": str(window)})
    shares = Shares(limits, 3_000)
    assert shares.result <= shares.turn_results <= shares.free // 2
    assert shares.summary <= min(shares.free // 4, limits.output_reserve)
    assert 3_000 + shares.summary + shares.turn_results <= limits.autocompact_at - shares.free // 4
    assert shares.too_small() is None


def test_a_window_too_small_for_the_overhead_and_a_turn_says_so() -> None:
    limits = context_limits("tiny", {"CODELOOP_CONTEXT_WINDOW": "8000"})
    reason = Shares(limits, 3_500).too_small()
    assert reason is not None
    assert "8,000 tokens" in reason and "3,500" in reason and "CODELOOP_CONTEXT_WINDOW" in reason
    assert Shares(limits, 1_000).too_small() is None
