"""Per-model facts the loop, the session and the request shaper need: windows, output limits,
prices (long-context tiers too), what the model can do, and what replaces it once deprecated.

Sources: Anthropic's model overview and pricing pages and OpenAI's model pages (December 2026);
`tests/unit/test_catalog_sdk.py` fails when the installed official SDKs name a current model
this table lacks. A known name matches with a snapshot suffix too (`claude-haiku-4-5-20251001`,
`gpt-5.5-2026-04-23`, `-latest`, Vertex `@20250514`, Bedrock `-v1:0`, gateway prefixes), but
never a newer version (`claude-opus-4-9` is not `claude-opus-4`: prices change between
versions). A model we do not know gets conservative limits and a zero price flagged unknown,
never a guess.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Literal

from codeloop.errors import ConfigError
from codeloop.system.valueclass import valueclass
from codeloop.types import Usage

# The first request asks for this many output tokens at most (the model's own cap if lower);
# the loop escalates to max_output_tokens only when an answer is cut short. Reserving less
# output leaves more of the window for context.
DEFAULT_OUTPUT_TOKENS = 8_192
# The `[1m]` suffix (Claude Code's `sonnet[1m]`) asks for the long-context variant.
LONG_CONTEXT_SUFFIX = "[1m]"
CONTEXT_1M_BETA = "context-1m-2025-08-07"

# How a model thinks, which decides the request fields (see models/thinking.py):
#   none      no thinking or reasoning control
#   extended  Anthropic `thinking: {type: enabled, budget_tokens}`
#   adaptive  Anthropic adaptive thinking with `output_config.effort` (off unless asked)
#   always    adaptive thinking that is always on; only the effort can be chosen
#   reasoning OpenAI `reasoning_effort` / `reasoning.effort`
Thinking = Literal["none", "extended", "adaptive", "always", "reasoning"]
Provider = Literal["anthropic", "openai", "local", ""]

_CLAUDE_EFFORTS = ("low", "medium", "high", "xhigh", "max")
_GPT6_EFFORTS = ("low", "medium", "high", "xhigh", "max")
_GPT5_EFFORTS = ("low", "medium", "high", "xhigh")
_O_EFFORTS = ("low", "medium", "high")


@valueclass(slots=True)
class Tier:
    """Prices (USD per million tokens) for a request whose prompt exceeds `above` tokens; the
    whole request is billed at these rates, as both vendors do."""

    above: int
    input_price: float
    output_price: float
    cache_write_price: float
    cache_read_price: float


@valueclass(slots=True)
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
    provider: Provider = ""
    # Claude Code's alias family: sonnet, opus, haiku (newest first in the table), fable, mythos.
    line: str | None = None
    thinking: Thinking = "none"
    efforts: tuple[str, ...] = ()
    tools: bool = True
    images: bool = True
    # Deprecated: the model to move to (named in a one-line notice), and when it stops working.
    replacement: str | None = None
    retires: str | None = None
    long_context: Tier | None = None
    # A window the model reaches only with a beta header (`sonnet[1m]` on 200K models).
    extended_window: int | None = None
    # OpenAI models served only by the Responses API (and the default wire format for
    # reasoning models: reasoning items carry over between turns there).
    responses_only: bool = False

    @property
    def default_output_tokens(self) -> int:
        return min(DEFAULT_OUTPUT_TOKENS, self.max_output_tokens)

    @property
    def deprecated(self) -> bool:
        return self.replacement is not None


def _claude(
    name: str,
    window: int,
    max_output: int,
    price_in: float,
    price_out: float,
    cache_read: float | None = None,
    *,
    line: str | None = None,
    thinking: Thinking = "adaptive",
    efforts: tuple[str, ...] = _CLAUDE_EFFORTS,
    **extra: object,
) -> ModelInfo:
    # Anthropic bills a 5-minute cache write at 1.25× input; a read at 0.1× unless stated.
    read = price_in / 10 if cache_read is None else cache_read
    return ModelInfo(
        name,
        window,
        max_output,
        price_in,
        price_out,
        price_in * 1.25,
        read,
        provider="anthropic",
        line=line if line is not None else _line(name),
        thinking=thinking,
        efforts=efforts if thinking in ("adaptive", "always") else (),
        **extra,  # type: ignore[arg-type]
    )


def _line(name: str) -> str | None:
    for line in ("sonnet", "opus", "haiku", "fable", "mythos"):
        if f"-{line}" in name:
            return line
    return None


def _openai(
    name: str,
    window: int,
    max_output: int,
    price_in: float,
    price_out: float,
    cached: float,
    *,
    efforts: tuple[str, ...] = _GPT6_EFFORTS,
    cache_write: float | None = None,
    **extra: object,
) -> ModelInfo:
    # OpenAI's reasoning models bill prompts over 272K tokens at 2× input and cache, 1.5×
    # output (GPT-4.1's 1M window has no such tier).
    tier = (
        Tier(272_000, price_in * 2, price_out * 1.5, (cache_write or price_in) * 2, cached * 2)
        if efforts and window > 272_000
        else None
    )
    return ModelInfo(
        name,
        window,
        max_output,
        price_in,
        price_out,
        price_in if cache_write is None else cache_write,
        cached,
        provider="openai",
        thinking="reasoning" if efforts else "none",
        efforts=efforts,
        long_context=tier,
        **extra,  # type: ignore[arg-type]
    )


_1M = 1_000_000
_K128 = 128_000
# OpenAI's GPT-5.4 and later: 1.05M in all, of which 922K input (the limit compaction keeps).
_GPT_WINDOW = 922_000
_SONNET_LONG = Tier(200_000, 6.0, 22.5, 7.5, 0.6)
_HAIKU_55_LONG = Tier(100_000, 0.5, 2.5, 0.625, 0.05)

# OpenAI's deprecated models: name, window, max output, input, output, cached input, efforts,
# replacement, retirement date.
_Row = tuple[str, int, int, float, float, float, tuple[str, ...], str, str]
# fmt: off
_DEPRECATED_OPENAI: tuple[_Row, ...] = (
    ("gpt-5.4-nano", 272_000, _K128, 0.2, 1.25, 0.02, _GPT5_EFFORTS, "gpt-6-luna", "2027-04-01"),
    ("gpt-5.3-chat-latest", 128_000, 16_384, 1.75, 14.0, 0.175, (), "gpt-6.2-sol", "2026-08-10"),
    ("gpt-5.2-chat-latest", 128_000, 16_384, 1.75, 14.0, 0.175, (), "gpt-6.2-sol", "2026-08-10"),
    ("gpt-5.1-codex", 272_000, _K128, 1.25, 10.0, 0.125, _O_EFFORTS, "gpt-5.1-codex-max",
     "2026-07-23"),
    ("gpt-5.1-chat-latest", 128_000, 16_384, 1.25, 10.0, 0.125, (), "gpt-6.2-sol", "2026-07-23"),
    ("gpt-5.1", 272_000, _K128, 1.25, 10.0, 0.125, _O_EFFORTS, "gpt-6.2-sol", "2027-04-01"),
    ("gpt-5-chat-latest", 128_000, 16_384, 1.25, 10.0, 0.125, (), "gpt-6.2-sol", "2026-07-23"),
    ("gpt-5-mini", 272_000, _K128, 0.25, 2.0, 0.025, _O_EFFORTS, "gpt-6.1-terra", "2026-12-11"),
    ("gpt-5-nano", 272_000, _K128, 0.05, 0.4, 0.005, _O_EFFORTS, "gpt-6-luna", "2026-12-11"),
    ("gpt-5", 272_000, _K128, 1.25, 10.0, 0.125, _O_EFFORTS, "gpt-6.2-sol", "2026-12-11"),
    ("gpt-4.1-mini", 1_047_576, 32_768, 0.4, 1.6, 0.1, (), "gpt-6.1-terra", "2027-01-14"),
    ("gpt-4.1-nano", 1_047_576, 32_768, 0.1, 0.4, 0.025, (), "gpt-6-luna", "2026-10-23"),
    ("gpt-4.1", 1_047_576, 32_768, 2.0, 8.0, 0.5, (), "gpt-6.2-sol", "2027-01-14"),
    ("gpt-4o-mini", 128_000, 16_384, 0.15, 0.6, 0.075, (), "gpt-6-luna", "2027-01-14"),
    ("gpt-4o", 128_000, 16_384, 2.5, 10.0, 1.25, (), "gpt-6.1-terra", "2027-01-14"),
    ("o4-mini", 200_000, 100_000, 1.1, 4.4, 0.275, _O_EFFORTS, "gpt-6.1-terra", "2026-10-23"),
    ("o3-mini", 200_000, 100_000, 1.1, 4.4, 0.55, _O_EFFORTS, "gpt-6.1-terra", "2026-10-23"),
    ("o3", 200_000, 100_000, 2.0, 8.0, 0.5, _O_EFFORTS, "gpt-6.2-sol", "2026-12-11"),
    ("o1", 200_000, 100_000, 15.0, 60.0, 7.5, _O_EFFORTS, "gpt-6.2-sol", "2026-10-23"),
)
# fmt: on

# Newest first within each line: the aliases pick the first current model of their line.
_MODELS = (
    # --- Anthropic, current -----------------------------------------------------------------
    # Fable 5.2 / Mythos 5.2: listed at $8/$40; cache reads assumed at 5.1's 0.025× of input.
    _claude("claude-fable-5-2", _1M, _K128, 8.0, 40.0, 0.2, thinking="always"),
    _claude("claude-mythos-5-2", _1M, _K128, 8.0, 40.0, 0.2, thinking="always"),
    _claude("claude-fable-5-1", _1M, _K128, 10.0, 50.0, 0.25, thinking="always"),
    _claude("claude-mythos-5-1", _1M, _K128, 10.0, 50.0, 0.25, thinking="always"),
    _claude("claude-fable-5", _1M, _K128, 10.0, 50.0, thinking="always"),
    _claude("claude-mythos-5", _1M, _K128, 10.0, 50.0, thinking="always"),
    _claude("claude-opus-5-5", _1M, _K128, 4.0, 20.0, 0.2, thinking="always"),
    _claude("claude-opus-5", _1M, _K128, 5.0, 25.0),
    _claude("claude-opus-4-8", _1M, _K128, 5.0, 25.0),
    _claude("claude-opus-4-7", _1M, _K128, 5.0, 25.0),
    _claude("claude-opus-4-6", _1M, _K128, 5.0, 25.0, efforts=("low", "medium", "high", "max")),
    _claude("claude-sonnet-5-5", _1M, _K128, 2.0, 10.0, 0.1),
    _claude("claude-sonnet-5", _1M, _K128, 2.0, 10.0),
    _claude("claude-sonnet-4-6", _1M, _K128, 3.0, 15.0, efforts=("low", "medium", "high", "max")),
    _claude("claude-haiku-5-5", _1M, _K128, 0.1, 0.5, 0.01, long_context=_HAIKU_55_LONG),
    _claude("claude-haiku-4-5", 200_000, 64_000, 1.0, 5.0, thinking="extended"),
    # --- Anthropic, deprecated or retired (still answered where they run) -------------------
    _claude(
        "claude-mythos-preview",
        _1M,
        _K128,
        10.0,
        50.0,
        thinking="always",
        replacement="claude-mythos-5-2",
        retires="2026-06-30",
    ),
    _claude(
        "claude-opus-4-5",
        200_000,
        64_000,
        5.0,
        25.0,
        thinking="extended",
        replacement="claude-opus-5-5",
        retires="2027-01-22",
    ),
    _claude(
        "claude-sonnet-4-5",
        200_000,
        64_000,
        3.0,
        15.0,
        thinking="extended",
        replacement="claude-sonnet-5-5",
        retires="2026-11-30",
        long_context=_SONNET_LONG,
        extended_window=_1M,
    ),
    _claude(
        "claude-opus-4-1",
        200_000,
        32_000,
        15.0,
        75.0,
        thinking="extended",
        replacement="claude-opus-5-5",
        retires="retired",
    ),
    _claude(
        "claude-opus-4",
        200_000,
        32_000,
        15.0,
        75.0,
        thinking="extended",
        replacement="claude-opus-5-5",
        retires="retired",
    ),
    _claude(
        "claude-sonnet-4",
        200_000,
        64_000,
        3.0,
        15.0,
        thinking="extended",
        replacement="claude-sonnet-5-5",
        retires="retired",
        long_context=_SONNET_LONG,
        extended_window=_1M,
    ),
    _claude(
        "claude-3-7-sonnet",
        200_000,
        64_000,
        3.0,
        15.0,
        line="sonnet",
        thinking="extended",
        replacement="claude-sonnet-5-5",
        retires="retired",
    ),
    _claude(
        "claude-3-5-sonnet",
        200_000,
        8_192,
        3.0,
        15.0,
        line="sonnet",
        thinking="none",
        replacement="claude-sonnet-5-5",
        retires="retired",
    ),
    _claude(
        "claude-3-opus",
        200_000,
        4_096,
        15.0,
        75.0,
        line="opus",
        thinking="none",
        replacement="claude-opus-5-5",
        retires="retired",
    ),
    _claude(
        "claude-3-5-haiku",
        200_000,
        8_192,
        0.8,
        4.0,
        line="haiku",
        thinking="none",
        replacement="claude-haiku-5-5",
        retires="retired",
    ),
    _claude(
        "claude-3-haiku",
        200_000,
        4_096,
        0.25,
        1.25,
        line="haiku",
        thinking="none",
        replacement="claude-haiku-5-5",
        retires="retired",
    ),
    # --- OpenAI, current ----------------------------------------------------------------------
    _openai("gpt-6.2-astra", _GPT_WINDOW, _K128, 8.0, 40.0, 0.4, cache_write=10.0),
    _openai("gpt-6.2-astra-law", _GPT_WINDOW, _K128, 8.0, 40.0, 0.4, responses_only=True),
    _openai("gpt-6-astra", _GPT_WINDOW, _K128, 10.0, 50.0, 1.0, cache_write=12.5),
    _openai("gpt-6.2-sol", _GPT_WINDOW, _K128, 2.0, 10.0, 0.1, cache_write=2.5),
    _openai("gpt-6.1-sol", _GPT_WINDOW, _K128, 2.0, 10.0, 0.1, cache_write=2.5),
    _openai("gpt-6-sol", _GPT_WINDOW, _K128, 2.0, 10.0, 0.2, cache_write=2.5),
    _openai("gpt-6.1-terra", _GPT_WINDOW, _K128, 1.0, 5.0, 0.05, cache_write=1.25),
    _openai("gpt-6-luna", _GPT_WINDOW, _K128, 0.1, 0.5, 0.01, cache_write=0.125),
    # Specialised models without a public price of their own: priced as their base model.
    _openai("gpt-6-cyber", _GPT_WINDOW, _K128, 10.0, 50.0, 1.0, responses_only=True),
    _openai("gpt-6-rosalind", _GPT_WINDOW, _K128, 10.0, 50.0, 1.0, responses_only=True),
    _openai("gpt-rosalind-research", _GPT_WINDOW, _K128, 10.0, 50.0, 1.0, responses_only=True),
    _openai("gpt-5.6-sol", _GPT_WINDOW, _K128, 5.0, 30.0, 0.5),
    _openai("gpt-5.6-terra", _GPT_WINDOW, _K128, 2.0, 12.0, 0.2),
    _openai("gpt-5.6-luna", _GPT_WINDOW, _K128, 0.2, 1.2, 0.02),
    _openai("gpt-5.6-cyber", _GPT_WINDOW, _K128, 5.0, 30.0, 0.5, responses_only=True),
    # Daybreak aliases: blue points at gpt-5.6-sol, red at the cyber models.
    _openai("gpt-daybreak-blue", _GPT_WINDOW, _K128, 5.0, 30.0, 0.5, responses_only=True),
    _openai("gpt-daybreak-red", _GPT_WINDOW, _K128, 5.0, 30.0, 0.5, responses_only=True),
    _openai("gpt-5.5-pro", _GPT_WINDOW, _K128, 30.0, 180.0, 3.0, responses_only=True),
    _openai("gpt-5.5", _GPT_WINDOW, _K128, 5.0, 30.0, 0.5),
    _openai("gpt-5.4-mini", 272_000, _K128, 0.75, 4.5, 0.075, efforts=_GPT5_EFFORTS),
    _openai("gpt-5.4", _GPT_WINDOW, _K128, 2.5, 15.0, 0.25, efforts=_GPT5_EFFORTS),
    _openai("gpt-5.2-pro", 272_000, _K128, 21.0, 168.0, 21.0, efforts=_GPT5_EFFORTS),
    _openai("gpt-5.2", 272_000, _K128, 1.75, 14.0, 0.175, efforts=_GPT5_EFFORTS),
    _openai("gpt-5.1-codex-max", 272_000, _K128, 1.25, 10.0, 0.125, responses_only=True),
    _openai(
        "gpt-5-codex", 272_000, _K128, 1.25, 10.0, 0.125, efforts=_O_EFFORTS, responses_only=True
    ),
    _openai(
        "gpt-5-pro", 272_000, 272_000, 15.0, 120.0, 15.0, efforts=("high",), responses_only=True
    ),
    _openai("o3-pro", 200_000, 100_000, 20.0, 80.0, 20.0, efforts=_O_EFFORTS, responses_only=True),
    _openai(
        "o1-pro", 200_000, 100_000, 150.0, 600.0, 150.0, efforts=_O_EFFORTS, responses_only=True
    ),
    # Deep research models take web search and MCP tools, not function tools.
    _openai(
        "o3-deep-research",
        200_000,
        100_000,
        10.0,
        40.0,
        2.5,
        efforts=("medium",),
        responses_only=True,
        tools=False,
    ),
    _openai(
        "o4-mini-deep-research",
        200_000,
        100_000,
        2.0,
        8.0,
        0.5,
        efforts=("medium",),
        responses_only=True,
        tools=False,
    ),
    # Computer use only: no function tools, a small window.
    _openai(
        "computer-use-preview",
        8_192,
        1_024,
        3.0,
        12.0,
        3.0,
        efforts=(),
        responses_only=True,
        tools=False,
    ),
    # --- OpenAI, deprecated ------------------------------------------------------------------
    *(
        _openai(name, window, out, i, o, cached, efforts=efforts, replacement=new, retires=when)
        for name, window, out, i, o, cached, efforts, new, when in _DEPRECATED_OPENAI
    ),
    # --- the bundled offline model (local:): runs for free --------------------------------------
    ModelInfo("smollm2-135m-instruct", 8_192, 1_024, provider="local", images=False),
)
_BY_NAME = {info.name: info for info in _MODELS}
# What may follow a known name: a snapshot date (Anthropic, OpenAI, Vertex), `-latest`, the
# `-0` of aliases like claude-sonnet-4-0, then Bedrock's version tag.
_SNAPSHOT = re.compile(r"(-\d{8}|-\d{4}-\d{2}-\d{2}|@\d{8}|-latest|-0)?(-v\d+(:\d+)?)?")

UNKNOWN = ModelInfo("unknown", 128_000, 8_192, known=False)


def catalog() -> tuple[ModelInfo, ...]:
    """Every model codeloop knows, newest first within each vendor's line."""
    return _MODELS


def newest(line: str, provider: Provider = "anthropic") -> ModelInfo:
    """The newest current model of an alias family (`sonnet`, `opus`, `haiku`, ...)."""
    for info in _MODELS:
        if info.provider == provider and info.line == line and not info.deprecated:
            return info
    raise LookupError(f"no current {line} model in the catalog")


def model_info(model: str, env: Mapping[str, str] | None = None) -> ModelInfo:
    """Facts for `model`, with CODELOOP_CONTEXT_WINDOW / CODELOOP_MAX_OUTPUT_TOKENS applied
    (for local models, whose limits are whatever the server was started with). A `[1m]`
    suffix gives the model's long-context window."""
    env = os.environ if env is None else env
    info = lookup(model)
    if model.lower().endswith(LONG_CONTEXT_SUFFIX) and info.extended_window:
        info = replace(info, context_window=info.extended_window)
    window = _env_tokens(env, "CODELOOP_CONTEXT_WINDOW")
    max_output = _env_tokens(env, "CODELOOP_MAX_OUTPUT_TOKENS")
    if window is not None:
        info = replace(info, context_window=window)
    if max_output is not None:
        info = replace(info, max_output_tokens=max_output)
    return info


def cost_usd(model: str, usage: Usage) -> float:
    """What one response cost on `model`, at the long-context rates when its prompt was over
    the tier's threshold (the whole request is billed at them, as both vendors do); 0.0 for a
    model whose price is unknown. Totals add responses' costs: a sum of usages cannot say
    which prompt was long."""
    info = lookup(model)
    tier = info.long_context
    if tier is not None and usage.context_tokens > tier.above:
        return _priced(tier, usage)
    return _priced(info, usage)


def _priced(prices: ModelInfo | Tier, usage: Usage) -> float:
    return (
        usage.input_tokens * prices.input_price
        + usage.output_tokens * prices.output_price
        + usage.cache_creation_input_tokens * prices.cache_write_price
        + usage.cache_read_input_tokens * prices.cache_read_price
    ) / 1_000_000


@functools.lru_cache(maxsize=256)
def lookup(model: str) -> ModelInfo:
    """The catalog entry for a model name as users and APIs spell it, else UNKNOWN (kept per
    name: every response is priced, and a session names few models)."""
    name = bare_name(model)
    for known, info in _BY_NAME.items():
        if name.startswith(known) and _SNAPSHOT.fullmatch(name, len(known)):
            return info
    return UNKNOWN


def bare_name(model: str) -> str:
    """Without gateway or cloud prefixes ("anthropic/…", "us.anthropic.…") and `[1m]`."""
    name = model.lower().removesuffix(LONG_CONTEXT_SUFFIX)
    return name.rpartition("/")[2].rpartition("anthropic.")[2]


def closest(model: str, *, count: int = 3) -> list[str]:
    """Known names nearest to a misspelt one, for "did you mean" messages."""
    import difflib  # "did you mean" only: not on start-up's path

    names = [info.name for info in _MODELS if not info.deprecated]
    return difflib.get_close_matches(bare_name(model), names, n=count, cutoff=0.6)


def deprecation_notice(model: str) -> str | None:
    """One line for a deprecated model, naming its replacement; None for a current one."""
    info = lookup(model)
    if info.replacement is None:
        return None
    when = (
        "is retired where its vendor no longer serves it"
        if info.retires == "retired"
        else f"retires on {info.retires}"
    )
    return f"model {model} is deprecated and {when}: switch to {info.replacement}"


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
