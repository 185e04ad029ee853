"""OpenAI Chat Completions over httpx, for OpenAI and every compatible server (vLLM, llama.cpp,
Ollama, LM Studio): Anthropic-shaped history out, the normalized event sequence back.

Chunks carry no block boundaries, so the converter opens a block when the kind of content
changes (reasoning → text → each tool call) and closes the previous one right then: a tool_use
block stops as soon as the next one begins, which lets its tool start while the model streams.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from codeloop.history_fold import HistoryFold
from codeloop.models.base import (
    BlockDelta,
    BlockStart,
    BlockStop,
    DeltaKind,
    KeepAlive,
    MessageDelta,
    MessageStart,
    MessageStop,
    ModelRequest,
    Prompt,
    StreamEvent,
    ToolSpec,
    Transient,
)
from codeloop.models.http_errors import error_from_stream_event
from codeloop.models.transport import HttpTransport, event_json
from codeloop.types import (
    ContentBlock,
    ImageBlock,
    LastEncoded,
    Message,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    dumps,
    spliced,
)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
COMPLETIONS_PATH = "/chat/completions"
AUTH_HINT = "OPENAI_API_KEY"

_FINISH_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


class OpenAIClient:
    provider = "openai"

    def __init__(
        self,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        timeout: float = 600.0,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """`api_key` may be None: local servers usually want none."""
        auth = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = HttpTransport(
            base_url, {**auth, **(headers or {})}, timeout=timeout, auth_hint=AUTH_HINT
        )
        # OpenAI deprecated `max_tokens` in Chat Completions and its reasoning models (o-series,
        # gpt-5) reject it, asking for `max_completion_tokens`; the compatible servers all know
        # `max_tokens`, while several (older llama.cpp, Ollama, LM Studio) ignore the newer name
        # and would generate without a limit. So each server gets the name it honours.
        official = urlsplit(base_url).hostname == "api.openai.com"
        self._max_tokens_field = "max_completion_tokens" if official else "max_tokens"
        self._encoded = encoded_messages()
        self._prompt = encoded_prompt()
        # Set once an answer shows the server is llama.cpp's (ChunkConverter.llama_cpp).
        self._llama_cpp = False

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if self._llama_cpp:
            # Reuse the KV cache for the prompt's unchanged beginning: llama.cpp's default
            # since late 2024, off before; OpenAI refuses the field, so only llama.cpp gets it.
            request = replace(request, extra={"cache_prompt": True, **request.extra})
        body = encode_body(request, self._max_tokens_field, self._encoded.each, self._prompt)
        headers = {"content-type": "application/json", **request.headers}
        converter = ChunkConverter(self._http.url(COMPLETIONS_PATH))
        if request.stream:
            sse = self._http.post_sse(COMPLETIONS_PATH, body, model=request.model, headers=headers)
            async with aclosing(sse) as events:
                async for raw in events:
                    data = raw.data.strip()
                    converted: list[StreamEvent] = []
                    if data == "[DONE]":
                        converter.saw_done = True
                    elif data:
                        converted = converter.feed(event_json(raw, url=converter.url))
                    for event in converted:
                        yield event
                    if not converted:  # a keep-alive, a role-only chunk: the stream is alive
                        yield KeepAlive()
        else:
            completion = await self._http.post_json(
                COMPLETIONS_PATH, body, model=request.model, headers=headers
            )
            for event in converter.feed(completion_as_chunk(completion)):
                yield event
            converter.saw_done = True
        self._llama_cpp |= converter.llama_cpp
        for event in converter.finish():
            yield event

    async def aclose(self) -> None:
        await self._http.aclose()


# --- request: Anthropic-shaped history → Chat Completions ---------------------------------


def request_body(request: ModelRequest, *, max_tokens_field: str = "max_tokens") -> dict[str, Any]:
    """The Chat Completions request (without the streaming fields the caller adds)."""
    body: dict[str, Any] = {
        "model": request.model,
        "messages": to_chat_messages(request.system, request.messages),
        max_tokens_field: request.max_tokens,
    }
    if request.tools:
        body["tools"] = [tool_to_function(t) for t in request.tools]
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.stop_sequences:
        body["stop"] = list(request.stop_sequences)
    if request.effort:
        body["reasoning_effort"] = request.effort
    body.update(tool_choice_field(request))
    body.update(request.extra)
    return body


def tool_choice_field(request: ModelRequest) -> dict[str, Any]:
    """`tool_choice: "none"` when the request asks for no calls and sends tools (Chat
    Completions and the Responses API refuse a tool_choice without tools)."""
    return {"tool_choice": "none"} if request.tool_choice == "none" and request.tools else {}


STREAMING = {"stream": True, "stream_options": {"include_usage": True}}


def encode_body(
    request: ModelRequest,
    max_tokens_field: str = "max_tokens",
    encoded: Callable[[Sequence[Message]], Sequence[bytes]] | None = None,
    prompt: Callable[[Prompt], Mapping[str, bytes]] | None = None,
) -> bytes:
    """`request_body`, with the streaming fields when streaming, as JSON bytes: each message's
    part made once (Message.cached) and spliced in, as the Anthropic client does. `encoded`
    gives those parts (a client keeps them as the history grows: history_fold.py), `prompt`
    the system message's and the tools' (`encoded_prompt`)."""
    streaming = STREAMING if request.stream else {}
    if "messages" in request.extra:  # a requestOverrides body replaces them
        return dumps(request_body(request, max_tokens_field=max_tokens_field) | streaming)
    bare = replace(request, messages=(), system="", tools=())
    body = tool_choice_field(request) | request_body(bare, max_tokens_field=max_tokens_field)
    body |= streaming
    del body["messages"]
    fields = (prompt or encoded_prompt())((request.system, request.tools))
    system = [fields["system"]] if "system" in fields else []
    tools = {"tools": fields["tools"]} if "tools" in fields and "tools" not in body else {}
    parts = encoded(request.messages) if encoded else map(chat_json, request.messages)
    return spliced(body, tools | {"messages": [*system, *(p for p in parts if p)]})


def encoded_prompt() -> LastEncoded[Prompt]:
    """The system message's JSON (`system`) and the tools' (`tools`), made again only when
    they change: a client's `encode_body` `prompt`."""
    return LastEncoded(_prompt_json)


def _prompt_json(prompt: Prompt) -> dict[str, bytes]:
    system, tools = prompt
    fields = {"system": dumps({"role": "system", "content": system})} if system else {}
    if tools:
        fields["tools"] = dumps([tool_to_function(t) for t in tools])
    return fields


def encoded_messages() -> HistoryFold[bytes]:
    """Each message's Chat Completions part, kept as a history grows: `encode_body`'s."""
    return HistoryFold(b"", lambda _, message: chat_json(message))


def chat_json(message: Message) -> bytes:
    """A message as its Chat Completions messages, encoded and comma-joined (b"" for none),
    made once per message."""
    return message.cached("chat json", _chat_json)


def _chat_json(message: Message) -> bytes:
    convert = _assistant_message if message.role == "assistant" else _user_messages
    return b",".join(dumps(part) for part in convert(message))


def tool_to_function(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.input_schema,
        },
    }


def to_chat_messages(system: str, messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        if message.role == "assistant":
            out.extend(_assistant_message(message))
        else:
            out.extend(_user_messages(message))
    return out


def _assistant_message(message: Message) -> list[dict[str, Any]]:
    """Text and tool calls in one message; thinking stays home (no server takes it back)."""
    calls = [
        {
            "id": block.id,
            "type": "function",
            "function": {"name": block.name, "arguments": json.dumps(block.input)},
        }
        for block in message.tool_uses
    ]
    if not calls and not message.text:
        return []
    # "" and never null: llama.cpp's server answers a null content with HTTP 500.
    out: dict[str, Any] = {"role": "assistant", "content": message.text}
    if calls:
        out["tool_calls"] = calls
    return [out]


def _user_messages(message: Message) -> list[dict[str, Any]]:
    """Tool results first, as `tool` messages right after the assistant's calls (the API insists
    on that order), then whatever the user said; images from tool results ride along there,
    since most servers take only text in a tool message."""
    out: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            text = f"Error: {block.text}" if block.is_error else block.text
            out.append({"role": "tool", "tool_call_id": block.tool_use_id, "content": text})
            images = [] if isinstance(block.content, str) else block.content
            for image in images:
                if isinstance(image, ImageBlock):
                    note = f"(image returned by tool call {block.tool_use_id})"
                    parts += [{"type": "text", "text": note}, _image_part(image)]
        elif isinstance(block, TextBlock):
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.append(_image_part(block))
    if parts and all(part["type"] == "text" for part in parts):
        # Plain string content: the one form every server's chat template understands.
        out.append({"role": "user", "content": "\n\n".join(part["text"] for part in parts)})
    elif parts:
        out.append({"role": "user", "content": parts})
    return out


def _image_part(image: ImageBlock) -> dict[str, Any]:
    url = f"data:{image.media_type};base64,{image.data}"
    return {"type": "image_url", "image_url": {"url": url}}


# --- response: chunks → normalized events --------------------------------------------------


class ChunkConverter:
    """Feed `chat.completion.chunk` objects in order; `finish()` once the stream has ended."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.saw_done = False  # the `data: [DONE]` sentinel arrived
        self._started = False
        self._next_index = 0
        self._open: tuple[str, int] | None = None  # (what the block holds, its index)
        self._tools: dict[int, tuple[str, int]] = {}  # tool_calls index → (call id, block index)
        self._finish_reason: str | None = None
        self._usage = Usage()
        self.llama_cpp = False  # the answer carried llama.cpp's `timings`

    def feed(self, chunk: Mapping[str, Any]) -> list[StreamEvent]:
        if chunk.get("error"):
            raise error_from_stream_event(chunk, url=self.url)
        self.llama_cpp |= isinstance(chunk.get("timings"), Mapping)
        events: list[StreamEvent] = []
        if not self._started:
            self._started = True
            events.append(MessageStart(chunk.get("id") or "", chunk.get("model") or "", Usage()))
        if chunk.get("usage"):
            self._usage = _usage(chunk["usage"])
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue  # we never ask for n > 1
            delta = choice.get("delta") or {}
            # vLLM and llama.cpp say reasoning_content, OpenRouter and newer vLLM say reasoning.
            if reasoning := delta.get("reasoning_content") or delta.get("reasoning"):
                events += self._append("thinking", ThinkingBlock(""), "thinking", reasoning)
            if content := delta.get("content"):
                events += self._append("text", TextBlock(""), "text", content)
            for call in delta.get("tool_calls") or []:
                events += self._tool_call(call)
            if choice.get("finish_reason"):
                self._finish_reason = choice["finish_reason"]
        return events

    def finish(self) -> list[StreamEvent]:
        """Close the last block and the message; a stream that just stopped was cut."""
        if not self._started or (self._finish_reason is None and not self.saw_done):
            raise Transient(f"the stream from {self.url} ended before its finish_reason")
        stop = _FINISH_REASONS.get(self._finish_reason or "stop", "end_turn")
        if stop == "end_turn" and self._tools:
            stop = "tool_use"  # some servers (older Ollama) say "stop" after tool calls
        return [*self._close(), MessageDelta(stop, self._usage), MessageStop()]

    def _append(
        self, holds: str, start: ContentBlock, kind: DeltaKind, text: str
    ) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if self._open is not None and self._open[0] == holds:
            index = self._open[1]
        else:
            index = self._begin(events, holds, start)
        events.append(BlockDelta(index, kind, text))
        return events

    def _tool_call(self, call: Mapping[str, Any]) -> list[StreamEvent]:
        position = call.get("index", 0)
        function = call.get("function") or {}
        call_id = call.get("id") or ""
        holds = f"tool_call {position}"
        known = self._tools.get(position)
        events: list[StreamEvent] = []
        # A new id at a known position is a new call: some servers number every call 0.
        if known is None or (call_id and call_id != known[0]):
            call_id = call_id or f"call_{uuid.uuid4().hex[:24]}"
            start = ToolUseBlock(call_id, function.get("name") or "", {})
            self._tools[position] = (call_id, self._begin(events, holds, start))
        elif self._open != (holds, known[1]):
            raise Transient(
                f"the stream from {self.url} continued tool call {position} after a later "
                "block had started"
            )
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # a few servers send the object itself
            arguments = json.dumps(arguments)
        if arguments:
            events.append(BlockDelta(self._tools[position][1], "input_json", arguments))
        return events

    def _begin(self, events: list[StreamEvent], holds: str, start: ContentBlock) -> int:
        """Close the open block and open the next one, appending both events; its index."""
        events += self._close()
        index = self._next_index
        self._next_index += 1
        self._open = (holds, index)
        events.append(BlockStart(index, start))
        return index

    def _close(self) -> list[StreamEvent]:
        if self._open is None:
            return []
        index, self._open = self._open[1], None
        return [BlockStop(index)]


def _usage(usage: Mapping[str, Any]) -> Usage:
    """OpenAI counts cached tokens inside prompt_tokens; Anthropic counts them apart."""
    prompt = int(usage.get("prompt_tokens") or 0)
    details = usage.get("prompt_tokens_details") or {}
    cached = int(details.get("cached_tokens") or 0)
    return Usage(
        input_tokens=prompt - cached,
        output_tokens=int(usage.get("completion_tokens") or 0),
        cache_read_input_tokens=cached,
    )


def completion_as_chunk(completion: Mapping[str, Any]) -> dict[str, Any]:
    """A non-streaming `chat.completion` as one big chunk, so one converter handles both."""
    choices = []
    for choice in completion.get("choices") or []:
        message = choice.get("message") or {}
        delta = {key: message.get(key) for key in ("reasoning_content", "reasoning", "content")}
        calls = message.get("tool_calls") or []
        delta["tool_calls"] = [{**call, "index": i} for i, call in enumerate(calls)]
        choices.append(
            {
                "index": choice.get("index", 0),
                "delta": delta,
                "finish_reason": choice.get("finish_reason"),
            }
        )
    return {**completion, "choices": choices}
