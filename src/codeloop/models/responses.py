"""OpenAI's Responses API over httpx (`openai-responses:NAME`, the default for OpenAI's
reasoning models): Anthropic-shaped history out as input items, output items back as the
normalized event sequence.

Reasoning items come back as thinking blocks whose signature holds what the API needs to
take them back (`{"id", "summary", "encrypted_content"}` as JSON): requests set
`store: false` (codeloop keeps the history) and ask for the encrypted reasoning, and the next
request sends the items back unchanged, so the model keeps its chain of thought across tool
calls. Thinking blocks of other origins have no such signature and stay home. Errors and
retries are the shared ones.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import replace
from typing import Any

from codeloop.history_fold import HistoryFold
from codeloop.models.base import (
    BlockDelta,
    BlockStart,
    BlockStop,
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
from codeloop.models.openai import AUTH_HINT, DEFAULT_BASE_URL, tool_choice_field
from codeloop.models.sse import HEARTBEAT
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

RESPONSES_PATH = "/responses"


class ResponsesClient:
    provider = "openai-responses"

    def __init__(
        self,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        timeout: float = 600.0,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        auth = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = HttpTransport(
            base_url, {**auth, **(headers or {})}, timeout=timeout, auth_hint=AUTH_HINT
        )
        self._encoded = encoded_items()
        self._prompt = encoded_prompt()

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        body = encode_body(request, self._encoded.each, self._prompt)
        headers = {"content-type": "application/json", **request.headers}
        converter = ItemConverter(self._http.url(RESPONSES_PATH))
        if request.stream:
            sse = self._http.post_sse(RESPONSES_PATH, body, model=request.model, headers=headers)
            async with aclosing(sse) as events:
                async for raw in events:
                    converted = (
                        []
                        if raw is HEARTBEAT
                        else converter.feed(event_json(raw, url=converter.url))
                    )
                    for event in converted:
                        yield event
                    if not converted:  # a comment, an event that changes nothing: still alive
                        yield KeepAlive()
        else:
            response = await self._http.post_json(
                RESPONSES_PATH, body, model=request.model, headers=headers
            )
            for data in replay(response):
                for event in converter.feed(data):
                    yield event
        converter.finish()

    async def aclose(self) -> None:
        await self._http.aclose()


# --- request: Anthropic-shaped history → input items ---------------------------------------


def request_body(request: ModelRequest) -> dict[str, Any]:
    """The Responses API request (without `stream`, which the caller adds when streaming)."""
    body: dict[str, Any] = {
        "model": request.model,
        "input": to_input_items(request.messages),
        "max_output_tokens": request.max_tokens,
        "store": False,
        "include": ["reasoning.encrypted_content"],
    }
    body |= _prompt(request.system, request.tools)
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.effort:
        body["reasoning"] = {"effort": request.effort, "summary": "auto"}
    body.update(tool_choice_field(request))
    body.update(request.extra)
    return body


def encode_body(
    request: ModelRequest,
    encoded: Callable[[Sequence[Message]], Sequence[bytes]] | None = None,
    prompt: Callable[[Prompt], Mapping[str, bytes]] | None = None,
) -> bytes:
    """`request_body`, with `stream` when streaming, as JSON bytes: each message's input
    items made once (Message.cached) and spliced in, as the other clients do. `encoded` gives
    them (a client keeps them as the history grows: history_fold.py), `prompt` the
    instructions' and the tools' JSON (`encoded_prompt`)."""
    streaming = {"stream": True} if request.stream else {}
    if "input" in request.extra:  # a requestOverrides body replaces the history
        return dumps(request_body(request) | streaming)
    bare = replace(request, messages=(), system="", tools=())
    body = tool_choice_field(request) | request_body(bare) | streaming
    del body["input"]
    fields = (prompt or encoded_prompt())((request.system, request.tools))
    kept = {key: value for key, value in fields.items() if key not in body}
    parts = encoded(request.messages) if encoded else map(input_json, request.messages)
    return spliced(body, kept | {"input": [p for p in parts if p]})


def encoded_items() -> HistoryFold[bytes]:
    """Each message's input items, kept as a history grows: `encode_body`'s `encoded`."""
    return HistoryFold(b"", lambda _, message: input_json(message))


def encoded_prompt() -> LastEncoded[Prompt]:
    """The instructions' and the tools' JSON, made again only when they change."""
    return LastEncoded(lambda prompt: {k: dumps(v) for k, v in _prompt(*prompt).items()})


def input_json(message: Message) -> bytes:
    """A message's input items, encoded and comma-joined (b"" for none), made once."""
    return message.cached("responses json", lambda m: b",".join(map(dumps, _items(m))))


def _prompt(system: str, tools: Sequence[ToolSpec]) -> dict[str, Any]:
    body: dict[str, Any] = {"instructions": system} if system else {}
    if tools:
        body["tools"] = [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
            }
            for t in tools
        ]
    return body


def to_input_items(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    return [item for message in messages for item in _items(message)]


def _items(message: Message) -> list[dict[str, Any]]:
    return _assistant_items(message) if message.role == "assistant" else _user_items(message)


def _assistant_items(message: Message) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ThinkingBlock) and (item := reasoning_item(block)):
            items.append(item)
        elif isinstance(block, TextBlock) and block.text:
            items.append({"role": "assistant", "content": block.text})
        elif isinstance(block, ToolUseBlock):
            arguments = json.dumps(block.input)
            items.append(
                {
                    "type": "function_call",
                    "call_id": block.id,
                    "name": block.name,
                    "arguments": arguments,
                }
            )
    return items


def _user_items(message: Message) -> list[dict[str, Any]]:
    """Tool outputs first (right after their calls), then what the user said; images from
    tool results ride along in that user message."""
    items: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            text = f"Error: {block.text}" if block.is_error else block.text
            items.append(
                {"type": "function_call_output", "call_id": block.tool_use_id, "output": text}
            )
            for image in () if isinstance(block.content, str) else block.content:
                if isinstance(image, ImageBlock):
                    note = f"(image returned by tool call {block.tool_use_id})"
                    parts += [{"type": "input_text", "text": note}, _image_part(image)]
        elif isinstance(block, TextBlock):
            parts.append({"type": "input_text", "text": block.text})
        elif isinstance(block, ImageBlock):
            parts.append(_image_part(block))
    if parts:
        items.append({"role": "user", "content": parts})
    return items


def _image_part(image: ImageBlock) -> dict[str, Any]:
    return {"type": "input_image", "image_url": f"data:{image.media_type};base64,{image.data}"}


def reasoning_item(block: ThinkingBlock) -> dict[str, Any] | None:
    """The reasoning item a thinking block came from, or None for another vendor's thinking."""
    try:
        carried = json.loads(block.signature) if block.signature.startswith("{") else None
    except ValueError:
        carried = None
    if not isinstance(carried, dict) or not isinstance(carried.get("id"), str):
        return None
    summary = carried.get("summary")
    if not isinstance(summary, list):
        summary = [{"type": "summary_text", "text": block.thinking}] if block.thinking else []
    item: dict[str, Any] = {"type": "reasoning", "id": carried["id"], "summary": summary}
    if carried.get("encrypted_content"):
        item["encrypted_content"] = carried["encrypted_content"]
    return item


def reasoning_signature(item: Mapping[str, Any]) -> str:
    """What a thinking block keeps of its reasoning item, to send it back unchanged."""
    kept = {key: item.get(key) for key in ("id", "summary", "encrypted_content")}
    return json.dumps(kept, separators=(",", ":"))


# --- response: stream events → normalized events --------------------------------------------


class ItemConverter:
    """Feed Responses stream events (decoded JSON) in order; `finish()` once it has ended."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.done = False
        self._started = False
        self._next = 0
        self._blocks: dict[str, int] = {}  # item id → block index
        self._args: dict[str, bool] = {}  # function-call item id → saw argument deltas
        self._summaries: dict[str, int] = {}  # reasoning item id → summary parts seen
        self._tools = False

    def feed(self, data: Mapping[str, Any]) -> list[StreamEvent]:
        kind = str(data.get("type", ""))
        events: list[StreamEvent] = []
        if kind == "error":
            raise error_from_stream_event(data, url=self.url)
        if kind == "response.failed":
            raise error_from_stream_event(
                (data.get("response") or {}).get("error") or {}, url=self.url
            )
        if not self._started and kind.startswith("response."):
            self._started = True
            response = data.get("response") or {}
            events.append(MessageStart(response.get("id", ""), response.get("model", ""), Usage()))
        item = data.get("item") or {}
        item_id = str(data.get("item_id") or item.get("id") or "")
        match kind:
            case "response.output_item.added":
                if (block := _opening(item)) is not None:
                    self._blocks[item_id] = index = self._next
                    self._next += 1
                    self._tools |= isinstance(block, ToolUseBlock)
                    events.append(BlockStart(index, block))
            case "response.output_text.delta" | "response.refusal.delta":
                events += self._delta(item_id, "text", data.get("delta", ""))
            case "response.reasoning_summary_text.delta" | "response.reasoning_text.delta":
                events += self._delta(item_id, "thinking", data.get("delta", ""))
            case "response.reasoning_summary_part.added":
                seen = self._summaries.get(item_id, 0)
                self._summaries[item_id] = seen + 1
                if seen:
                    events += self._delta(item_id, "thinking", "\n\n")
            case "response.function_call_arguments.delta":
                self._args[item_id] = True
                events += self._delta(item_id, "input_json", data.get("delta", ""))
            case "response.output_item.done":
                events += self._close(item_id, item)
            case "response.completed" | "response.incomplete":
                response = data.get("response") or {}
                events += [
                    MessageDelta(self._stop(response), _usage(response.get("usage"))),
                    MessageStop(),
                ]
                self.done = True
        return events

    def finish(self) -> None:
        if not self.done:
            raise Transient(f"the stream from {self.url} ended before response.completed")

    def _delta(self, item_id: str, kind: Any, value: str) -> list[StreamEvent]:
        index = self._blocks.get(item_id)
        return [BlockDelta(index, kind, value)] if index is not None and value else []

    def _close(self, item_id: str, item: Mapping[str, Any]) -> list[StreamEvent]:
        index = self._blocks.get(item_id)
        if index is None:
            return []
        events: list[StreamEvent] = []
        if item.get("type") == "reasoning":
            events.append(BlockDelta(index, "signature", reasoning_signature(item)))
        elif item.get("type") == "function_call" and not self._args.get(item_id):
            # Some servers send the whole arguments only with the finished item.
            events += self._delta(item_id, "input_json", item.get("arguments") or "")
        del self._blocks[item_id]
        return [*events, BlockStop(index)]

    def _stop(self, response: Mapping[str, Any]) -> StopReason:
        reason = (response.get("incomplete_details") or {}).get("reason")
        if reason == "max_output_tokens":
            return "max_tokens"
        if reason == "content_filter":
            return "refusal"
        return "tool_use" if self._tools else "end_turn"


def _opening(item: Mapping[str, Any]) -> ContentBlock | None:
    match item.get("type"):
        case "message":
            return TextBlock("")
        case "reasoning":
            return ThinkingBlock("")
        case "function_call":
            return ToolUseBlock(
                item.get("call_id") or item.get("id") or "", item.get("name", ""), {}
            )
    return None  # web search calls and other server-side items: not ours to run


def _usage(usage: Mapping[str, Any] | None) -> Usage:
    """Cached tokens are inside input_tokens, reasoning tokens inside output_tokens."""
    usage = usage or {}
    cached = int((usage.get("input_tokens_details") or {}).get("cached_tokens") or 0)
    return Usage(
        input_tokens=int(usage.get("input_tokens") or 0) - cached,
        output_tokens=int(usage.get("output_tokens") or 0),
        cache_read_input_tokens=cached,
    )


def replay(response: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """A complete (non-streaming) response as the stream events that would have built it."""
    yield {"type": "response.created", "response": {**response, "output": []}}
    for item in response.get("output") or []:
        item_id = item.get("id", "")
        yield {"type": "response.output_item.added", "item": {**item, "arguments": ""}}
        if item.get("type") == "message":
            for part in item.get("content") or []:
                text = part.get("text") or part.get("refusal") or ""
                yield {"type": "response.output_text.delta", "item_id": item_id, "delta": text}
        elif item.get("type") == "reasoning":
            for i, part in enumerate(item.get("summary") or []):
                yield {
                    "type": "response.reasoning_summary_part.added",
                    "item_id": item_id,
                    "summary_index": i,
                }
                yield {
                    "type": "response.reasoning_summary_text.delta",
                    "item_id": item_id,
                    "delta": part.get("text", ""),
                }
        elif item.get("type") == "function_call":
            yield {
                "type": "response.function_call_arguments.delta",
                "item_id": item_id,
                "delta": item.get("arguments", ""),
            }
        yield {"type": "response.output_item.done", "item": item}
    yield {"type": "response.completed", "response": response}
