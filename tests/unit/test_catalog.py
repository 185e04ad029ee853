"""Model facts: the prices and limits that budgets and cost reports rest on."""

from __future__ import annotations

import pytest

from codeloop.models.catalog import DEFAULT_OUTPUT_TOKENS, UNKNOWN, cost_usd, model_info
from codeloop.types import Usage

NO_ENV: dict[str, str] = {}


@pytest.mark.parametrize(
    ("model", "window", "max_output", "prices"),
    [
        ("claude-opus-4-20250514", 200_000, 32_000, (15, 75, 18.75, 1.5)),
        ("claude-opus-4-1-20250805", 200_000, 32_000, (15, 75, 18.75, 1.5)),
        ("claude-sonnet-4-20250514", 200_000, 64_000, (3, 15, 3.75, 0.3)),
        ("claude-sonnet-4-5", 200_000, 64_000, (3, 15, 3.75, 0.3)),
        ("claude-3-7-sonnet-latest", 200_000, 64_000, (3, 15, 3.75, 0.3)),
        ("claude-haiku-4-5-20251001", 200_000, 64_000, (1, 5, 1.25, 0.1)),
        ("claude-3-5-haiku-20241022", 200_000, 8_192, (0.8, 4, 1, 0.08)),
        ("gpt-4o-2024-08-06", 128_000, 16_384, (2.5, 10, 2.5, 1.25)),
        ("gpt-4o-mini", 128_000, 16_384, (0.15, 0.6, 0.15, 0.075)),
        ("o4-mini-2025-04-16", 200_000, 100_000, (1.1, 4.4, 1.1, 0.275)),
    ],
)
def test_known_models(
    model: str, window: int, max_output: int, prices: tuple[float, float, float, float]
) -> None:
    info = model_info(model, NO_ENV)
    assert info.known
    assert (info.context_window, info.max_output_tokens) == (window, max_output)
    got = (info.input_price, info.output_price, info.cache_write_price, info.cache_read_price)
    assert got == pytest.approx(prices)


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("claude-sonnet-4-0", "claude-sonnet-4"),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),  # Vertex
        ("us.anthropic.claude-sonnet-4-20250514-v1:0", "claude-sonnet-4"),  # Bedrock
        ("anthropic/claude-haiku-4-5", "claude-haiku-4-5"),  # gateways
        ("GPT-4.1-MINI", "gpt-4.1-mini"),
        ("o3-mini-2025-01-31", "o3-mini"),
    ],
)
def test_names_match_their_family(model: str, family: str) -> None:
    assert model_info(model, NO_ENV).name == family


@pytest.mark.parametrize("model", ["claude-opus-4-6", "gpt-4o-audio", "qwen3-coder:30b", "o3x"])
def test_a_newer_or_foreign_model_is_unknown_not_its_neighbour(model: str) -> None:
    assert model_info(model, NO_ENV) == UNKNOWN


def test_unknown_models_get_conservative_defaults_and_no_price() -> None:
    info = model_info("my-local-model", NO_ENV)
    assert not info.known
    assert (info.context_window, info.max_output_tokens) == (128_000, 8_192)
    assert cost_usd("my-local-model", Usage(10**6, 10**6)) == 0.0


def test_default_output_is_capped_by_the_model() -> None:
    assert model_info("claude-sonnet-4", NO_ENV).default_output_tokens == DEFAULT_OUTPUT_TOKENS
    assert model_info("claude-3-haiku", NO_ENV).default_output_tokens == 4_096


def test_env_overrides() -> None:
    env = {"CODELOOP_CONTEXT_WINDOW": "32_768", "CODELOOP_MAX_OUTPUT_TOKENS": "4096"}
    info = model_info("qwen3-coder", env)
    assert (info.context_window, info.max_output_tokens) == (32_768, 4_096)
    assert model_info("claude-sonnet-4", {"CODELOOP_CONTEXT_WINDOW": "1000000"}).context_window == (
        1_000_000
    )


@pytest.mark.parametrize("raw", ["lots", "0", "-5"])
def test_bad_env_override_says_so(raw: str) -> None:
    with pytest.raises(ValueError, match="CODELOOP_CONTEXT_WINDOW"):
        model_info("m", {"CODELOOP_CONTEXT_WINDOW": raw})


def test_model_info_reads_the_process_environment_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CODELOOP_MAX_OUTPUT_TOKENS", "1234")
    assert model_info("claude-sonnet-4").max_output_tokens == 1234


def test_cost() -> None:
    usage = Usage(
        input_tokens=1_000_000,
        output_tokens=100_000,
        cache_creation_input_tokens=200_000,
        cache_read_input_tokens=2_000_000,
    )
    # 3.00 + 1.50 + 0.75 + 0.60
    assert cost_usd("claude-sonnet-4-5-20250929", usage) == pytest.approx(5.85)
    # OpenAI: cached tokens at the cached price, the rest at the input price.
    assert cost_usd("gpt-4.1", Usage(500_000, 10_000, 0, 1_000_000)) == pytest.approx(1.58)
