"""Per-model facts the loop and the session need: context window, output limits, prices.

A known name matches with a snapshot suffix too (`claude-sonnet-4-20250514`, `gpt-4o-2024-08-06`,
`claude-3-7-sonnet-latest`, Vertex `@20250514`, Bedrock `-v1:0`), but never a newer version
(`claude-opus-4-6` is not `claude-opus-4`: prices change between versions). A model we do not
know gets conservative limits and a zero price flagged as unknown, rather than a guess.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from codeloop.errors import ConfigError
from codeloop.types import Usage

# The first request asks for this many output tokens at most (the model's own cap if lower);
# the loop escalates to max_output_tokens only when an answer is cut short. Reserving less
# output leaves more of the window for context.
DEFAULT_OUTPUT_TOKENS = 8_192


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """Limits in tokens; prices in USD per million tokens."""

    name: str
    context_window: int
    max_output_tokens: int
    input_price: float = 0.0
    output_price: float = 0.0
    cache_write_price: float = 0.0
    cache_read_price: float = 0.0
    # False when the model is not in the catalog: limits are guesses and prices are unknown.
    known: bool = True

    @property
    def default_output_tokens(self) -> int:
        return min(DEFAULT_OUTPUT_TOKENS, self.max_output_tokens)


def _claude(name: str, max_output: int, price_in: float, price_out: float) -> ModelInfo:
    # Anthropic bills a 5-minute cache write at 1.25× input and a cache read at 0.1× input.
    return ModelInfo(name, 200_000, max_output, price_in, price_out, price_in * 1.25, price_in / 10)


def _openai(
    name: str, window: int, max_output: int, price_in: float, price_out: float, cached: float
) -> ModelInfo:
    # OpenAI caches automatically: writing costs the normal input price.
    return ModelInfo(name, window, max_output, price_in, price_out, price_in, cached)


_MODELS = (
    _claude("claude-opus-4", 32_000, 15.0, 75.0),
    _claude("claude-opus-4-1", 32_000, 15.0, 75.0),
    _claude("claude-opus-4-5", 64_000, 5.0, 25.0),
    _claude("claude-sonnet-4", 64_000, 3.0, 15.0),
    _claude("claude-sonnet-4-5", 64_000, 3.0, 15.0),
    _claude("claude-3-7-sonnet", 64_000, 3.0, 15.0),
    _claude("claude-haiku-4-5", 64_000, 1.0, 5.0),
    _claude("claude-3-5-sonnet", 8_192, 3.0, 15.0),
    _claude("claude-3-5-haiku", 8_192, 0.8, 4.0),
    _claude("claude-3-opus", 4_096, 15.0, 75.0),
    _claude("claude-3-haiku", 4_096, 0.25, 1.25),
    _openai("gpt-4o", 128_000, 16_384, 2.5, 10.0, 1.25),
    _openai("gpt-4o-mini", 128_000, 16_384, 0.15, 0.6, 0.075),
    _openai("gpt-4.1", 1_047_576, 32_768, 2.0, 8.0, 0.5),
    _openai("gpt-4.1-mini", 1_047_576, 32_768, 0.4, 1.6, 0.1),
    _openai("gpt-4.1-nano", 1_047_576, 32_768, 0.1, 0.4, 0.025),
    # gpt-5: 400K in all, but input stops at 272K and output has its own 128K; the input limit
    # is the one compaction must respect.
    _openai("gpt-5", 272_000, 128_000, 1.25, 10.0, 0.125),
    _openai("gpt-5-mini", 272_000, 128_000, 0.25, 2.0, 0.025),
    _openai("gpt-5-nano", 272_000, 128_000, 0.05, 0.4, 0.005),
    _openai("gpt-5-pro", 272_000, 128_000, 15.0, 120.0, 15.0),
    _openai("gpt-5-codex", 272_000, 128_000, 1.25, 10.0, 0.125),
    _openai("gpt-5.1", 272_000, 128_000, 1.25, 10.0, 0.125),
    _openai("o1", 200_000, 100_000, 15.0, 60.0, 7.5),
    _openai("o1-mini", 128_000, 65_536, 1.1, 4.4, 0.55),
    _openai("o1-pro", 200_000, 100_000, 150.0, 600.0, 150.0),
    _openai("o3", 200_000, 100_000, 2.0, 8.0, 0.5),
    _openai("o3-mini", 200_000, 100_000, 1.1, 4.4, 0.55),
    _openai("o3-pro", 200_000, 100_000, 20.0, 80.0, 20.0),
    _openai("o4-mini", 200_000, 100_000, 1.1, 4.4, 0.275),
    # The bundled offline demo model (local:): an 8K context, runs for free.
    ModelInfo("smollm2-135m-instruct", 8_192, 1_024),
)
_BY_NAME = {info.name: info for info in _MODELS}
# What may follow a known name: a snapshot date (Anthropic, OpenAI, Vertex), `-latest`, the
# `-0` of aliases like claude-sonnet-4-0, then Bedrock's version tag.
_SNAPSHOT = re.compile(r"(-\d{8}|-\d{4}-\d{2}-\d{2}|@\d{8}|-latest|-0)?(-v\d+(:\d+)?)?")

UNKNOWN = ModelInfo("unknown", 128_000, 8_192, known=False)


def model_info(model: str, env: Mapping[str, str] | None = None) -> ModelInfo:
    """Facts for `model`, with CODELOOP_CONTEXT_WINDOW / CODELOOP_MAX_OUTPUT_TOKENS applied
    (for local models, whose limits are whatever the server was started with)."""
    env = os.environ if env is None else env
    info = _lookup(model)
    window = _env_tokens(env, "CODELOOP_CONTEXT_WINDOW")
    max_output = _env_tokens(env, "CODELOOP_MAX_OUTPUT_TOKENS")
    if window is not None:
        info = replace(info, context_window=window)
    if max_output is not None:
        info = replace(info, max_output_tokens=max_output)
    return info


def cost_usd(model: str, usage: Usage) -> float:
    """What `usage` cost on `model`; 0.0 for a model whose price is unknown."""
    info = _lookup(model)
    return (
        usage.input_tokens * info.input_price
        + usage.output_tokens * info.output_price
        + usage.cache_creation_input_tokens * info.cache_write_price
        + usage.cache_read_input_tokens * info.cache_read_price
    ) / 1_000_000


def _lookup(model: str) -> ModelInfo:
    # Gateways and clouds prefix the vendor: "anthropic/claude-…", "us.anthropic.claude-…".
    name = model.lower().rpartition("/")[2].rpartition("anthropic.")[2]
    for known, info in _BY_NAME.items():
        if name.startswith(known) and _SNAPSHOT.fullmatch(name, len(known)):
            return info
    return UNKNOWN


def _env_tokens(env: Mapping[str, str], key: str) -> int | None:
    raw = env.get(key, "").strip()
    if not raw:
        return None
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        value = 0
    if value <= 0:
        raise ConfigError(f"{key} must be a positive number of tokens, got {raw!r}")
    return value
