"""Claude Code's model aliases, read wherever a model is named: `--model`, CODELOOP_MODEL,
ANTHROPIC_MODEL, settings `model`, and a custom agent's or command's frontmatter.

`sonnet`, `opus` and `haiku` are the newest current model of their line in the catalog (or
ANTHROPIC_DEFAULT_SONNET_MODEL / _OPUS_MODEL / _HAIKU_MODEL when set, as Claude Code reads
them; ANTHROPIC_SMALL_FAST_MODEL is the older name of the haiku one); `sonnet[1m]` is the
long-context variant; `opusplan` is opus while planning and sonnet otherwise; `default` is
the default model. Anything else is a model name and passes through unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from codeloop.models.catalog import LONG_CONTEXT_SUFFIX, newest

ALIASES = ("default", "sonnet", "opus", "haiku", "sonnet[1m]", "opus[1m]", "opusplan")
_OVERRIDES = {
    "sonnet": ("ANTHROPIC_DEFAULT_SONNET_MODEL",),
    "opus": ("ANTHROPIC_DEFAULT_OPUS_MODEL",),
    "haiku": ("ANTHROPIC_DEFAULT_HAIKU_MODEL", "ANTHROPIC_SMALL_FAST_MODEL"),
}


def resolve_alias(
    name: str, env: Mapping[str, str] | None = None, *, plan_mode: bool = False
) -> str:
    """The full model name an alias stands for; any other name is returned as given.

    A `provider:` prefix is kept (`anthropic:opus` → `anthropic:claude-opus-5-5`). `plan_mode`
    picks opusplan's model. This is the one resolver every place that names a model calls.
    """
    env = os.environ if env is None else env
    head, colon, rest = name.partition(":")
    if colon and head in ("anthropic", "bedrock", "vertex"):
        return f"{head}:{resolve_alias(rest, env, plan_mode=plan_mode)}"
    key = name.strip().lower()
    if key == "default":
        key = "sonnet"
    if key == "opusplan":
        key = "opus" if plan_mode else "sonnet"
    long_context = key.endswith(LONG_CONTEXT_SUFFIX)
    line = key.removesuffix(LONG_CONTEXT_SUFFIX)
    if line not in _OVERRIDES:
        return name
    full = _family_model(line, env)
    return full + LONG_CONTEXT_SUFFIX if long_context else full


def small_fast_model(env: Mapping[str, str] | None = None) -> str:
    """The model for quick background work (Claude Code's haiku-class model)."""
    return resolve_alias("haiku", env)


def _family_model(line: str, env: Mapping[str, str]) -> str:
    for key in _OVERRIDES[line]:
        if value := env.get(key, "").strip():
            return value
    return newest(line).name
