"""What the fake model server says on the endpoints local servers add beside the OpenAI API:
llama.cpp's `/props`, Ollama's `/api/show`, vLLM's `/v1/models` with `max_model_len`: the
endpoints codeloop probes for the window (models/window_discovery.py). A fake server given a
`ServerKind` answers them as that server does, and refuses a prompt past its window as it does
(llama.cpp with its own error type; Ollama and vLLM as OpenAI's context_length_exceeded).

Any other path is not a probe: the server answers it as before. Probes are recorded apart from
the model requests (`FakeModelServer.probes`), so tests that count requests count model calls.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from codeloop.system.valueclass import valueclass

Kind = Literal["llama.cpp", "ollama", "vllm"]
# The paths servers of some kind answer for the window (and /v1/models, which all list).
_PROBE = re.compile(r"^(/props|/api/show|/api/ps|/api/v0/models/.*|(/v1)?/models)$")
# llama.cpp's /v1/models reports the trained window, larger than the server's: never the one.
TRAINED_WINDOW = 131_072
# The model these servers hold (Ollama lists it in /api/ps once loaded).
MODEL_NAME = "qwen2.5-coder-7b"


@valueclass
class ServerKind:
    """A local server's kind and window (`n_ctx`); for Ollama, the `num_ctx` parameter its
    Modelfile sets, or the context it loaded the model with (/api/ps): either is then the
    window, and model_info's context_length (`n_ctx`) the trained one; and the architecture
    its model_info is keyed by."""

    kind: Kind
    n_ctx: int
    num_ctx: int | None = None
    loaded_ctx: int | None = None
    architecture: str = "qwen2"

    @property
    def window(self) -> int:
        return self.num_ctx or self.loaded_ctx or self.n_ctx


def is_probe(path: str) -> bool:
    return _PROBE.match(path.split("?", 1)[0]) is not None


def probe_answer(
    server: ServerKind | None, method: str, path: str, body: Any
) -> dict[str, Any] | None:
    """The JSON the server answers a probe with (None: a 404, as a server of another kind)."""
    if server is None:
        return None
    path, kind = path.split("?", 1)[0], server.kind
    model = body.get("model") if isinstance(body, dict) else None
    if kind == "llama.cpp" and method == "GET" and path == "/props":
        settings = {"n_ctx": server.n_ctx, "n_predict": -1, "temperature": 0.8}
        return {"default_generation_settings": settings, "total_slots": 1}
    if kind == "ollama" and method == "POST" and path == "/api/show":
        key = f"{server.architecture}.context_length"
        shown: dict[str, Any] = {
            "modelfile": f"FROM {model}",
            "details": {"family": server.architecture, "format": "gguf"},
            "model_info": {"general.architecture": server.architecture, key: server.n_ctx},
        }
        if server.num_ctx is not None:
            shown["parameters"] = f'num_ctx    {server.num_ctx}\nstop    "<|im_end|>"'
        return shown
    if kind == "ollama" and method == "GET" and path == "/api/ps":
        loaded = {"name": MODEL_NAME, "model": MODEL_NAME, "context_length": server.loaded_ctx}
        return {"models": [loaded] if server.loaded_ctx else []}
    if method == "GET" and path in ("/v1/models", "/models"):
        entry: dict[str, Any] = {"id": MODEL_NAME, "object": "model", "owned_by": kind}
        if kind == "vllm":
            entry["max_model_len"] = server.n_ctx
        elif kind == "llama.cpp":
            entry["meta"] = {"n_ctx_train": TRAINED_WINDOW, "n_vocab": 151_936}
        return {"object": "list", "data": [entry]}
    return None


def too_long(server: ServerKind, actual: int) -> tuple[int, dict[str, Any]] | None:
    """llama.cpp's own refusal of a prompt past n_ctx (None: the OpenAI-shaped one)."""
    if server.kind != "llama.cpp":
        return None
    error = {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": actual,
        "n_ctx": server.n_ctx,
    }
    return 400, {"error": error}
