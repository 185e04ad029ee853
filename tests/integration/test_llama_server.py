"""The openai provider against llama.cpp's own OpenAI-compatible server (llama-cpp-python's
`python -m llama_cpp.server`), running the bundled SmolLM2 on 127.0.0.1.

What that server does with tools (llama-cpp-python 0.3.x): it answers with tool calls only
when the request names one in `tool_choice`; it then constrains the arguments with a grammar
made from the tool's schema, and streams them as `tool_calls` deltas. Without tool_choice (what
codeloop sends) or with "auto", tools are ignored under the model's own chat template; the
`chatml-function-calling` format takes "auto" but cannot stream it. So this test names the tool,
which makes every turn a call: structure only, the loop must end at its turn limit.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from codeloop.models.base import ModelClient, ModelRequest, StreamEvent
from codeloop.models.factory import resolve_model
from codeloop.models.window_discovery import discover_window
from codeloop.tools.registry import default_tools
from tests import needs
from tests.unit.context_history import assert_paired
from tests.unit.test_loop import make_session, run

GGUF = needs.local_model(server=True)

LISTENING = re.compile(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    """Start the server on a free port and wait until it says it listens; stop it after."""
    options = ["--host", "127.0.0.1", "--port", "0", "--n_ctx", "4096", "--verbose", "False"]
    process = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(GGUF), *options],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    ports: list[int] = []
    said: list[str] = []
    settled = threading.Event()

    def read_stderr() -> None:
        assert process.stderr is not None
        for line in process.stderr:  # drained to the end, so the pipe never fills
            said.append(line)
            if not ports and (listening := LISTENING.search(line)):
                ports.append(int(listening[1]))
                settled.set()
        settled.set()  # the server exited

    threading.Thread(target=read_stderr, daemon=True).start()
    try:
        settled.wait(timeout=120)
        if not ports:
            pytest.fail("llama_cpp.server did not start:\n" + "".join(said[-20:]))
        yield f"http://127.0.0.1:{ports[0]}/v1"
    finally:
        process.terminate()
        process.wait(timeout=30)


class NamedToolChoice:
    """Passes requests through with `tool_choice` naming one tool, as this server needs."""

    provider = "openai"

    def __init__(self, inner: ModelClient, tool: str) -> None:
        self.inner = inner
        self.requests: list[ModelRequest] = []
        self._choice = {"type": "function", "function": {"name": tool}}

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        request = replace(request, extra={**request.extra, "tool_choice": self._choice})
        self.requests.append(request)
        return self.inner.stream(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_tool_calls_round_trip_until_the_turn_limit(server_url: str, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("print('hello')\n")
    client, name = resolve_model("openai:smollm2", {"OPENAI_BASE_URL": server_url})
    model = NamedToolChoice(client, "Glob")
    session = make_session(model, tmp_path, max_turns=2, mode="default", model_name=name)  # type: ignore[arg-type]
    try:
        _, end = await run(session, "List the Python files here.")
    finally:
        await session.aclose()

    assert end.reason == "max_turns", end.error
    assert_paired(end.messages)
    glob = default_tools()["Glob"]
    calls = [m.tool_uses for m in end.messages if m.role == "assistant"]
    assert len(calls) == 2
    for (call,) in calls:
        assert call.name == "Glob" and call.input_error is None
        glob.parse(call.input)  # the server's grammar kept it valid for the tool's schema
    first_result = model.requests[1].messages[-1].tool_results[0]
    assert first_result.tool_use_id == calls[0][0].id  # it went back to the server


async def test_the_window_probe_fails_soft_on_a_server_that_does_not_say(server_url: str) -> None:
    """llama-cpp-python's server has no /props and lists its model without a window: nothing
    is found (the catalog's guess stands, with a note for --verbose), nothing breaks."""
    found = await discover_window("openai", "smollm2-gguf", {"OPENAI_BASE_URL": server_url})
    assert found.window is None
    assert found.note is not None and "did not say its context window" in found.note
