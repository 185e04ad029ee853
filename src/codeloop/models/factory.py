"""From a model spec (`--model`, CODELOOP_MODEL) and the environment to a ready client.

A spec is `provider:NAME` or a bare NAME whose provider is guessed from its prefix. Each
provider is one entry in `_PROVIDERS`: a new one (say `local:`) is a builder function there.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping

from codeloop.models.base import ModelClient

DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-5"}
_OPENAI_NAMES = re.compile(r"(gpt-|chatgpt-|codex-|o\d)", re.IGNORECASE)

HOW_TO_CONFIGURE = """\
Configure a model in one of three ways:
  ANTHROPIC_API_KEY=sk-ant-...   e.g. --model claude-sonnet-4-5
  OPENAI_API_KEY=sk-...          e.g. --model gpt-5
  OPENAI_BASE_URL=http://localhost:8080/v1   a local OpenAI-compatible server (llama.cpp,
                                 vLLM, Ollama, LM Studio), e.g. --model openai:qwen3-coder
CODELOOP_MODEL sets the default for --model."""


class ConfigError(ValueError):
    """No usable model configuration; the message tells the user what to set."""


def resolve_model(
    spec: str | None = None, env: Mapping[str, str] | None = None
) -> tuple[ModelClient, str]:
    """The client for `spec` (default: CODELOOP_MODEL, then the configured provider's default)
    and the model name to put in requests. `env` defaults to the process environment."""
    env = {key: value for key, value in (os.environ if env is None else env).items() if value}
    spec = spec or env.get("CODELOOP_MODEL")
    provider, name = _split(spec, env) if spec else _default(env)
    return _PROVIDERS[provider](name, env), name


def _split(spec: str, env: Mapping[str, str]) -> tuple[str, str]:
    head, colon, rest = spec.partition(":")
    if colon and head in _PROVIDERS:
        if not rest:
            raise ConfigError(f"--model {spec}: the model name is missing after {head}:")
        return head, rest
    # Bare name (colons may belong to it, as in Ollama's `qwen3:8b`).
    if spec.lower().startswith("claude-"):
        return "anthropic", spec
    if _OPENAI_NAMES.match(spec):
        return "openai", spec
    if _has_openai(env):
        return "openai", spec
    if _has_anthropic(env):
        return "anthropic", spec
    raise ConfigError(f"cannot run model {spec!r}: no provider is configured.\n{HOW_TO_CONFIGURE}")


def _default(env: Mapping[str, str]) -> tuple[str, str]:
    if _has_anthropic(env):
        return "anthropic", DEFAULT_MODELS["anthropic"]
    if "OPENAI_API_KEY" in env:
        return "openai", DEFAULT_MODELS["openai"]
    if "OPENAI_BASE_URL" in env:
        # A local server serves whatever it loaded; its name is not ours to guess.
        raise ConfigError(
            "OPENAI_BASE_URL is set but no model is named: pass --model openai:NAME "
            "or set CODELOOP_MODEL."
        )
    raise ConfigError(f"no model is configured.\n{HOW_TO_CONFIGURE}")


def _has_anthropic(env: Mapping[str, str]) -> bool:
    return any(key in env for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"))


def _has_openai(env: Mapping[str, str]) -> bool:
    return any(key in env for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL"))


def _anthropic(model: str, env: Mapping[str, str]) -> ModelClient:
    from codeloop.models.anthropic import DEFAULT_BASE_URL, AnthropicClient

    # A custom base URL may be a gateway that needs no key of ours.
    if not _has_anthropic(env) and "ANTHROPIC_BASE_URL" not in env:
        raise ConfigError(
            f"model {model!r} needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN).\n"
            f"{HOW_TO_CONFIGURE}"
        )
    return AnthropicClient(
        base_url=env.get("ANTHROPIC_BASE_URL", DEFAULT_BASE_URL),
        api_key=env.get("ANTHROPIC_API_KEY"),
        auth_token=env.get("ANTHROPIC_AUTH_TOKEN"),
    )


def _openai(model: str, env: Mapping[str, str]) -> ModelClient:
    from codeloop.models.openai import DEFAULT_BASE_URL, OpenAIClient

    # A local server (OPENAI_BASE_URL) usually wants no key; api.openai.com always does.
    if not _has_openai(env):
        raise ConfigError(
            f"model {model!r} needs OPENAI_API_KEY, or OPENAI_BASE_URL for a local server.\n"
            f"{HOW_TO_CONFIGURE}"
        )
    return OpenAIClient(
        base_url=env.get("OPENAI_BASE_URL", DEFAULT_BASE_URL), api_key=env.get("OPENAI_API_KEY")
    )


_PROVIDERS: dict[str, Callable[[str, Mapping[str, str]], ModelClient]] = {
    "anthropic": _anthropic,
    "openai": _openai,
}
