"""The context window a model really has, asked of what serves it before the first request.

The catalog knows the windows of Claude's and OpenAI's models; a local model's is whatever its
server was started with, and guessing (128K) gets prompts refused, or, on Ollama, silently cut.
So, for a model the catalog does not know:

- `local:PATH.gguf`: the GGUF header's `<architecture>.context_length` (the window the
  in-process llama.cpp opens, which takes the trained one);
- an OpenAI-compatible server: every endpoint that can say is asked at once, and the first in
  this order that answers wins: llama.cpp's `/props` (`default_generation_settings.n_ctx`, the
  server's window), Ollama's (the model's `num_ctx` parameter from `/api/show`, past which
  Ollama truncates silently; else the `context_length` `/api/ps` shows for the model while it
  is loaded; else `/api/show`'s `model_info["<general.architecture>.context_length"]`, the
  trained window, which Ollama's own default may undercut: said so), LM Studio's
  `/api/v0/models/NAME` (`loaded_context_length`), vLLM's `/v1/models` (`max_model_len`).
  llama.cpp's `/v1/models` also says `n_ctx_train`: the trained window, not the server's, so
  it is not read. Which server it is shows from what answers, not from its port.

Probes are short (PROBE_TIMEOUT for them all) and fail soft: nothing found leaves the
catalog's guess, with a line for --verbose. Each server's answer is kept for the process, so
a session's sub-agents and model switches ask once. CODELOOP_CONTEXT_WINDOW, when set, wins
and nothing is asked (the caller checks).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import quote, urlsplit

from codeloop.models.catalog import lookup
from codeloop.models.gguf_header import gguf_context_length
from codeloop.system.valueclass import valueclass

PROBE_TIMEOUT = 2.0
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)


@valueclass(slots=True)
class FoundWindow:
    """A window and where it was read, for --verbose and /context."""

    tokens: int
    source: str


@valueclass(slots=True)
class Discovery:
    """What the probes found (None: nothing) and a line saying so, or why not."""

    window: FoundWindow | None
    note: str | None = None


_CACHE: dict[tuple[str, str], Discovery] = {}


async def discover_window(
    provider: str, model: str, env: Mapping[str, str], *, patience: float = PROBE_TIMEOUT
) -> Discovery:
    """The window of `model` as its server or file says; nothing is asked for a model the
    catalog knows (Claude's, OpenAI's, the bundled one) or on a vendor's own API."""
    if lookup(model).known:
        return Discovery(None)
    if provider == "local":
        return _from_gguf(model)
    base = env.get("OPENAI_BASE_URL")
    if provider != "openai" or not base or urlsplit(base).hostname == "api.openai.com":
        return Discovery(None)
    key = (base.rstrip("/"), model)
    if key not in _CACHE:
        _CACHE[key] = await _probe_server(key[0], model, env.get("OPENAI_API_KEY"), patience)
    return _CACHE[key]


def _from_gguf(model: str) -> Discovery:
    from codeloop.models.local import locate  # imports no llama.cpp

    try:
        path = locate(model)
    except LookupError:
        return Discovery(None)  # the client said why when it was built
    tokens = gguf_context_length(path)
    if tokens is None:
        return Discovery(None, f"{path.name} does not say its context length")
    return Discovery(FoundWindow(tokens, f"{path.name}: GGUF context_length"))


async def _probe_server(base: str, model: str, api_key: str | None, patience: float) -> Discovery:
    from codeloop.models.transport import load_httpx

    load_httpx()
    import httpx

    parts = urlsplit(base)
    root = f"{parts.scheme}://{parts.netloc}"
    headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
    async with httpx.AsyncClient(headers=headers, timeout=patience) as client:

        async def ask(method: str, url: str, body: dict[str, Any] | None = None) -> Any:
            try:
                response = await client.request(method, url, json=body)
                return response.json() if response.status_code == 200 else None
            except (httpx.HTTPError, ValueError):
                return None

        probes: tuple[Callable[[], Awaitable[FoundWindow | None]], ...] = (
            lambda: _llama_cpp(ask, root),
            lambda: _ollama(ask, root, model),
            lambda: _lm_studio(ask, root, model),
            lambda: _vllm(ask, base, model),
        )
        try:
            found = await asyncio.wait_for(
                asyncio.gather(*(probe() for probe in probes)), patience * 2
            )
        except TimeoutError:
            found = []
    for window in found:
        if window is not None:
            return Discovery(window)
    return Discovery(None, f"{root} did not say its context window (/props, /api/show, ...)")


_Ask = Callable[..., Awaitable[Any]]


async def _llama_cpp(ask: _Ask, root: str) -> FoundWindow | None:
    props = await ask("GET", f"{root}/props")
    settings = props.get("default_generation_settings") if isinstance(props, dict) else None
    n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
    return _window(n_ctx, "llama.cpp /props n_ctx")


async def _ollama(ask: _Ask, root: str, model: str) -> FoundWindow | None:
    shown, running = await asyncio.gather(
        ask("POST", f"{root}/api/show", {"model": model}), ask("GET", f"{root}/api/ps")
    )
    if not isinstance(shown, dict):
        return None
    parameters = shown.get("parameters")
    if isinstance(parameters, str) and (num_ctx := _NUM_CTX.search(parameters)):
        return _window(int(num_ctx[1]), "Ollama /api/show num_ctx")
    loaded = running.get("models") if isinstance(running, dict) else None
    for entry in loaded if isinstance(loaded, list) else ():
        named = isinstance(entry, dict) and model in (entry.get("name"), entry.get("model"))
        if named and (found := _window(entry.get("context_length"), "Ollama /api/ps")):
            return found
    info = shown.get("model_info")
    if not isinstance(info, dict):
        return None
    key = f"{info.get('general.architecture')}.context_length"
    trained = "the trained window: no num_ctx set, Ollama's default may be smaller"
    return _window(info.get(key), f"Ollama /api/show {key}, {trained}")


async def _lm_studio(ask: _Ask, root: str, model: str) -> FoundWindow | None:
    listed = await ask("GET", f"{root}/api/v0/models/{quote(model, safe='')}")
    loaded = listed.get("loaded_context_length") if isinstance(listed, dict) else None
    return _window(loaded, "LM Studio loaded_context_length")


async def _vllm(ask: _Ask, base: str, model: str) -> FoundWindow | None:
    listed = await ask("GET", f"{base}/models")
    entries = listed.get("data") if isinstance(listed, dict) else None
    if not isinstance(entries, list):
        return None
    entries = [e for e in entries if isinstance(e, dict)]
    named = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    return _window(named[0].get("max_model_len") if named else None, "/v1/models max_model_len")


def _window(value: Any, source: str) -> FoundWindow | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return FoundWindow(value, source)
    return None
