"""The window found by probing the server, before the first request (issue 37): llama.cpp's
/props, Ollama's /api/show, vLLM's /v1/models, through the fake server speaking each; the
compact profile a small window then gets, and the full tool set a large one keeps."""

from __future__ import annotations

import json
import math
import os
import socket
from pathlib import Path
from typing import Any

import pytest

from codeloop import Options, ResultMessage, SystemMessage, query
from codeloop.builder import build_session
from codeloop.commands.reports import context_report
from codeloop.models import window_discovery
from codeloop.models.window_discovery import FoundWindow, discover_window
from codeloop.testing.fake_server import FakeModelServer, RecordedRequest
from codeloop.testing.long_session import summary_turns
from codeloop.testing.scenario import tool_use, turn
from codeloop.testing.server_kinds import MODEL_NAME, TRAINED_WINDOW, ServerKind
from codeloop.tools.profile import CORE_TOOLS
from tests import needs
from tests.e2e.cli import run_cli

MODEL = MODEL_NAME  # not in the catalog: its window is the server's to say


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    """Each test's server is a new one (the cache is per server address and model)."""
    window_discovery._CACHE.clear()


def env_for(server: FakeModelServer, tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "CODELOOP_HOME": str(tmp_path / ".codeloop"),
        "OPENAI_BASE_URL": server.openai_base_url,
        "CODELOOP_MODEL": f"openai:{MODEL}",
        **extra,
    }


TRAINED = "the trained window: no num_ctx set, Ollama's default may be smaller"


@pytest.mark.parametrize(
    ("kind", "source"),
    [
        (ServerKind("llama.cpp", 12_288), "llama.cpp /props n_ctx"),
        (ServerKind("ollama", 12_288), f"Ollama /api/show qwen2.context_length, {TRAINED}"),
        (
            ServerKind("ollama", 12_288, architecture="llama"),
            f"Ollama /api/show llama.context_length, {TRAINED}",
        ),
        (ServerKind("ollama", 131_072, num_ctx=12_288), "Ollama /api/show num_ctx"),
        (ServerKind("ollama", 131_072, loaded_ctx=12_288), "Ollama /api/ps"),
        (ServerKind("vllm", 12_288), "/v1/models max_model_len"),
    ],
)
async def test_each_server_says_its_window(kind: ServerKind, source: str) -> None:
    with FakeModelServer([], server_kind=kind) as server:
        env = {"OPENAI_BASE_URL": server.openai_base_url}
        found = await discover_window("openai", MODEL, env)
        again = await discover_window("openai", MODEL, env)
        asked = len(server.probes)
    assert found.window is not None
    assert (found.window.tokens, found.window.source) == (12_288, source)
    assert again == found and asked <= 5  # asked once: the second answer is the cached one


async def test_llama_cpp_trained_window_is_not_taken_for_the_servers() -> None:
    """/v1/models' n_ctx_train (131,072) is what the model was trained with; /props says 12K."""
    with FakeModelServer([], server_kind=ServerKind("llama.cpp", 12_288)) as server:
        found = await discover_window("openai", MODEL, {"OPENAI_BASE_URL": server.openai_base_url})
        models = next(p for p in server.probes if p.path == "/v1/models")
    assert models.status == 200
    assert found.window is not None and found.window.tokens == 12_288 != TRAINED_WINDOW


async def test_a_server_that_says_nothing_leaves_the_guess_with_a_note() -> None:
    with FakeModelServer([]) as server:
        found = await discover_window("openai", MODEL, {"OPENAI_BASE_URL": server.openai_base_url})
    assert found.window is None and found.note and "did not say" in found.note


async def test_nothing_listening_fails_soft() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    found = await discover_window(
        "openai", MODEL, {"OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1"}
    )
    assert found.window is None and found.note


async def test_known_models_and_vendor_apis_are_not_asked() -> None:
    with FakeModelServer([], server_kind=ServerKind("llama.cpp", 12_288)) as server:
        env = {"OPENAI_BASE_URL": server.openai_base_url}
        known = await discover_window("openai", "gpt-5.4", env)
        claude = await discover_window("anthropic", MODEL, env)
        probes = server.probes
    assert known.window is None and claude.window is None and probes == []


# --- whole sessions -------------------------------------------------------------------------


def reading_session(root: Path, reads: int) -> list[Any]:
    """`reads` Reads of distinct ~6 KB files, then an answer: reads + 1 requests, about
    1,700 tokens more each, far past 12K unless the window is managed."""
    turns = []
    for n in range(reads):
        path = root / f"module_{n}.py"
        lines = [f"def handler_{n}_{i}(value):  # step {i} of module {n}" for i in range(120)]
        path.write_text("\n".join(lines) + "\n")
        turns.append(turn(f"Reading module {n}.", tool_use("Read", {"file_path": str(path)})))
    turns.append(turn("Every module defines handlers; none logs."))
    return turns


async def run_session(
    server: FakeModelServer, tmp_path: Path, **env: str
) -> tuple[list[Any], ResultMessage]:
    work = tmp_path / "work"
    options = Options(cwd=work, env=env_for(server, tmp_path, **env), max_turns=30)
    messages = [m async for m in query("What do these modules do?", options)]
    result = messages[-1]
    assert isinstance(result, ResultMessage)
    return messages, result


def rejected(requests: list[RecordedRequest]) -> list[RecordedRequest]:
    return [r for r in requests if r.status != 200]


@pytest.mark.parametrize(
    "kind", [ServerKind("llama.cpp", 12_288), ServerKind("ollama", 12_288)], ids=lambda k: k.kind
)
async def test_a_12_turn_session_fits_the_discovered_window(
    kind: ServerKind, tmp_path: Path
) -> None:
    (tmp_path / "work").mkdir()
    turns = reading_session(tmp_path / "work", 11)
    with FakeModelServer(turns, server_kind=kind, summaries=summary_turns(12)) as server:
        _, result = await run_session(server, tmp_path)
        requests = server.requests
    assert not result.is_error, result.result
    assert rejected(requests) == []
    assert len([r for r in requests if r.conversation != "summaries"]) == 12
    biggest = max(math.ceil(r.size / 4) for r in requests)
    assert biggest <= 12_288


async def test_without_discovery_the_same_session_is_refused(tmp_path: Path) -> None:
    """The control: the same server refusing past 12K, but saying nothing of its window."""
    (tmp_path / "work").mkdir()
    turns = reading_session(tmp_path / "work", 11)
    with FakeModelServer(turns, max_prompt_tokens=12_288, summaries=summary_turns(12)) as server:
        await run_session(server, tmp_path)
        requests = server.requests
    assert rejected(requests)


def fixed_part(request: RecordedRequest) -> int:
    """The system message and tools of a Chat Completions request, at 4 bytes a token."""
    body = request.body
    system = [m for m in body["messages"] if m["role"] == "system"]
    return math.ceil(len(json.dumps([system, body.get("tools", [])])) / 4)


async def test_at_16k_the_compact_profile_and_no_warning(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    with FakeModelServer([turn("Done.")], server_kind=ServerKind("llama.cpp", 16_384)) as server:
        messages, result = await run_session(server, tmp_path)
        (request,) = server.requests
    offered = [tool["function"]["name"] for tool in request.body["tools"]]
    assert set(CORE_TOOLS) <= set(offered) <= {*CORE_TOOLS, "TodoWrite"}
    assert fixed_part(request) <= 1_600
    warnings = [m for m in messages if isinstance(m, SystemMessage) and "too small" in str(m.data)]
    assert warnings == [] and not result.is_error


async def test_at_200k_the_full_tool_set(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    with FakeModelServer([turn("Done.")], server_kind=ServerKind("vllm", 200_000)) as server:
        await run_session(server, tmp_path)
        (request,) = server.requests
    offered = {tool["function"]["name"] for tool in request.body["tools"]}
    assert {"WebFetch", "Agent", "NotebookEdit"} <= offered and len(offered) > 10


async def test_an_explicit_window_wins_and_nothing_is_asked(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    kind = ServerKind("llama.cpp", 12_288)
    with FakeModelServer([turn("Done.")], server_kind=kind) as server:
        await run_session(server, tmp_path, CODELOOP_CONTEXT_WINDOW="200000")
        probes, (request,) = server.probes, server.requests
    assert probes == [] and len(request.body["tools"]) > 10


async def test_a_local_gguf_says_its_window(tmp_path: Path) -> None:
    model = tmp_path / "my-model.gguf"  # a name the catalog does not know
    model.symlink_to(needs.local_model())
    found = await discover_window("local", str(model), {})
    assert found.window == FoundWindow(8_192, "my-model.gguf: GGUF context_length")


async def test_context_shows_the_window_and_where_it_was_read(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    with FakeModelServer([], server_kind=ServerKind("ollama", 24_576)) as server:
        options = Options(cwd=tmp_path / "work", env=env_for(server, tmp_path))
        session = await build_session(options)
        try:
            report = context_report(session)
        finally:
            await session.aclose()
    assert "of 24,576 tokens" in report
    assert f"Window: 24,576 tokens (Ollama /api/show qwen2.context_length, {TRAINED})" in report


def test_verbose_says_the_window(tmp_path: Path) -> None:
    with FakeModelServer([turn("Done.")], server_kind=ServerKind("llama.cpp", 12_288)) as server:
        env = env_for(server, tmp_path)
        run = run_cli(["-p", "hi", "--verbose"], cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stderr
    assert "info: context window: 12,288 tokens (llama.cpp /props n_ctx)" in run.stderr
    assert "info: compact profile: Bash, Read, Edit, Write, Grep, Glob" in run.stderr
