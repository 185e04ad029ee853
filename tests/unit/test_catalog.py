"""Model facts: the prices and limits that budgets and cost reports rest on."""

from __future__ import annotations

import pytest

from codeloop.models.catalog import UNKNOWN, cost_usd, model_info
from codeloop.types import Usage

NO_ENV: dict[str, str] = {}


@pytest.mark.parametrize(
    ("model", "window", "max_output", "prices"),
    [
        ("claude-sonnet-5-5", 1_000_000, 128_000, (2, 10, 2.5, 0.1)),
        ("claude-opus-5-5", 1_000_000, 128_000, (4, 20, 5, 0.2)),
        ("claude-haiku-5-5", 1_000_000, 128_000, (0.1, 0.5, 0.125, 0.01)),
        ("claude-fable-5-1", 1_000_000, 128_000, (10, 50, 12.5, 0.25)),
        ("claude-opus-4-8", 1_000_000, 128_000, (5, 25, 6.25, 0.5)),
        ("claude-sonnet-4-20250514", 200_000, 64_000, (3, 15, 3.75, 0.3)),
        ("claude-sonnet-4-5", 200_000, 64_000, (3, 15, 3.75, 0.3)),
        ("claude-3-7-sonnet-latest", 200_000, 64_000, (3, 15, 3.75, 0.3)),
        ("claude-haiku-4-5-20251001", 200_000, 64_000, (1, 5, 1.25, 0.1)),
        ("gpt-6.2-sol", 922_000, 128_000, (2, 10, 2.5, 0.1)),
        ("gpt-6-astra-2026-09-03", 922_000, 128_000, (10, 50, 12.5, 1)),
        ("gpt-5.5-2026-04-23", 922_000, 128_000, (5, 30, 5, 0.5)),
        ("gpt-4o-2024-08-06", 128_000, 16_384, (2.5, 10, 2.5, 1.25)),
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
        ("claude-opus-4-6", "claude-opus-4-6"),  # not claude-opus-4
        ("gpt-daybreak-blue-latest", "gpt-daybreak-blue"),
        ("gpt-5.5-pro-2026-04-23", "gpt-5.5-pro"),  # not gpt-5.5
        ("claude-sonnet-5-5[1m]", "claude-sonnet-5-5"),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),  # Vertex
        ("us.anthropic.claude-sonnet-4-20250514-v1:0", "claude-sonnet-4"),  # Bedrock
        ("anthropic/claude-haiku-4-5", "claude-haiku-4-5"),  # gateways
        ("GPT-4.1-MINI", "gpt-4.1-mini"),
        ("o3-mini-2025-01-31", "o3-mini"),
    ],
)
def test_names_match_their_family(model: str, family: str) -> None:
    assert model_info(model, NO_ENV).name == family


@pytest.mark.parametrize(
    "model", ["claude-opus-5-9", "claude-sonnet-6", "gpt-4o-audio", "qwen3-coder:30b", "o3x"]
)
def test_a_newer_or_foreign_model_is_unknown_not_its_neighbour(model: str) -> None:
    assert model_info(model, NO_ENV) == UNKNOWN


def test_unknown_models_get_conservative_defaults_and_no_price() -> None:
    info = model_info("my-local-model", NO_ENV)
    assert not info.known
    assert (info.context_window, info.max_output_tokens) == (128_000, 8_192)
    assert cost_usd("my-local-model", Usage(10**6, 10**6)) == 0.0


def test_default_output_is_capped_by_the_model() -> None:
    """8 192 output tokens on the first request, the model's own cap when lower."""
    assert model_info("claude-sonnet-5-5", NO_ENV).default_output_tokens == 8_192
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
    # One response: its prompt (165K tokens) under Sonnet 4.5's 200K long-context threshold.
    usage = Usage(
        input_tokens=50_000,
        output_tokens=5_000,
        cache_creation_input_tokens=10_000,
        cache_read_input_tokens=100_000,
    )
    # (3.00 + 1.50 + 0.75 + 0.60) / 20, at $3 / $15 / $3.75 / $0.30 per MTok
    assert cost_usd("claude-sonnet-4-5-20250929", usage) == pytest.approx(5.85 / 20)
    # OpenAI: cached tokens at the cached price, the rest at the input price.
    assert cost_usd("gpt-4.1", Usage(500_000, 10_000, 0, 1_000_000)) == pytest.approx(1.58)


def test_long_context_prices_apply_to_the_whole_request_above_the_threshold() -> None:
    # Haiku 5.5: $0.10 / $0.50 up to 100K prompt tokens, $0.50 / $2.50 above.
    short, long = Usage(100_000, 1_000), Usage(100_001, 1_000)
    assert cost_usd("claude-haiku-5-5", short) == pytest.approx(0.01 + 0.0005)
    assert cost_usd("claude-haiku-5-5", long) == pytest.approx(100_001 * 0.5e-6 + 0.0025)
    # OpenAI's 272K tier: 2x input, 1.5x output; cache reads count towards the prompt.
    over = Usage(72_001, 1_000, 0, 200_000)
    assert cost_usd("gpt-6.2-sol", over) == pytest.approx(
        (72_001 * 4 + 1_000 * 15 + 200_000 * 0.2) / 1e6
    )


def test_the_1m_suffix_gives_the_long_window_only_where_a_beta_reaches_it() -> None:
    assert model_info("claude-sonnet-4-5[1m]", NO_ENV).context_window == 1_000_000
    assert model_info("claude-sonnet-4-5", NO_ENV).context_window == 200_000
    assert model_info("claude-haiku-4-5[1m]", NO_ENV).context_window == 200_000


def test_aliases_name_the_newest_current_model_of_each_line() -> None:
    from codeloop.models.catalog import newest

    assert newest("sonnet").name == "claude-sonnet-5-5"
    assert newest("opus").name == "claude-opus-5-5"
    assert newest("haiku").name == "claude-haiku-5-5"


def test_a_deprecated_model_names_its_replacement_in_one_line() -> None:
    from codeloop.models.catalog import deprecation_notice

    notice = deprecation_notice("claude-sonnet-4-5-20250929")
    assert notice is not None and "\n" not in notice
    assert "2026-11-30" in notice and notice.endswith("claude-sonnet-5-5")
    assert deprecation_notice("claude-sonnet-5-5") is None


def test_a_misspelt_name_gets_the_closest_known_ones() -> None:
    from codeloop.models.catalog import closest

    assert closest("claude-sonet-5-5")[0] == "claude-sonnet-5-5"
    assert closest("gpt-6.2-sool")[0] == "gpt-6.2-sol"
    assert closest("completely-different") == []
