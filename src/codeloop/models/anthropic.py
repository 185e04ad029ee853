"""Anthropic Messages API over httpx: our normalized events are its SSE events, one to one.

Works with any server speaking the same format (Anthropic, Claude-compatible gateways, the local
fake server in tests). Non-streaming answers are replayed as the same event sequence, so callers
handle one shape. Requests mark prompt-cache breakpoints (system prompt, last tool, latest
messages); the usage reports cache reads and writes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import aclosing
from typing import Any

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
from codeloop.models.sse import HEARTBEAT
from codeloop.models.transport import HttpTransport, event_json
from codeloop.types import (
    ContentBlock,
    LastEncoded,
    Message,
    RedactedThinkingBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
    dumps,
    message_json,
    message_to_dict,
    spliced,
)

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
MESSAGES_PATH = "/v1/messages"
AUTH_HINT = "ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)"
# The beta output_config.task_budget needs (the value Claude Code sends).
TASK_BUDGET_BETA = "task-budgets-2026-03-13"
# A prompt-cache breakpoint: the prefix up to here is cached for five minutes, refreshed on use.
EPHEMERAL = {"type": "ephemeral"}

# delta type → (our delta kind, the field holding its text)
_DELTAS: dict[str, tuple[DeltaKind, str]] = {
    "text_delta": ("text", "text"),
    "input_json_delta": ("input_json", "partial_json"),
    "thinking_delta": ("thinking", "thinking"),
    "signature_delta": ("signature", "signature"),
}
_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "tool_use": "tool_use",
    "pause_turn": "pause_turn",
    "refusal": "refusal",
    # Output cut short because the context window filled up: to the loop, a truncation.
    "model_context_window_exceeded": "max_tokens",
}


class AnthropicClient:
    provider = "anthropic"

    def __init__(
        self,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        auth_token: str | None = None,
        timeout: float = 600.0,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """`auth_token` (ANTHROPIC_AUTH_TOKEN) is sent as a Bearer token, for gateways."""
        auth: dict[str, str] = {}
        if api_key:
            auth["x-api-key"] = api_key
        if auth_token:
            auth["authorization"] = f"Bearer {auth_token}"
        self._http = HttpTransport(
            base_url,
            {"anthropic-version": API_VERSION, **auth, **(headers or {})},
            timeout=timeout,
            auth_hint=AUTH_HINT,
        )
        self._encoded = encoded_messages()
        self._prompt = encoded_prompt()

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        headers = {"content-type": "application/json", **request_headers(request)}
        body = encode_body(request, self._encoded.each, self._prompt)
        return message_events(self._http, MESSAGES_PATH, body, request, headers)

    async def aclose(self) -> None:
        await self._http.aclose()


async def message_events(
    http: HttpTransport,
    path: str,
    body: Mapping[str, Any] | bytes,
    request: ModelRequest,
    headers: Mapping[str, str],
) -> AsyncIterator[StreamEvent]:
    """POST a Messages API body to `path` and yield its normalized events, from the SSE
    stream or from the whole message (a JSON body gains `stream: true` when streaming). Shared
    by every server that answers in the Messages API's shape (Anthropic, Vertex, Bedrock's
    non-streaming answers)."""
    mapper = EventMapper(http.url(path))
    if request.stream:
        streaming = body if isinstance(body, bytes) else {**body, "stream": True}
        sse = http.post_sse(path, streaming, model=request.model, headers=headers)
        async with aclosing(sse) as events:
            async for raw in events:
                if raw is HEARTBEAT:
                    yield KeepAlive()
                    continue
                data = event_json(raw, url=mapper.url)
                kind = str(data.get("type") or raw.event)
                # A ping (or an event this code does not know) still proves the stream alive.
                yield mapper.feed(kind, data) or KeepAlive()
    else:
        message = await http.post_json(path, body, model=request.model, headers=headers)
        for kind, data in replay(message):
            if (event := mapper.feed(kind, data)) is not None:
                yield event
    mapper.finish()


def encoded_messages() -> HistoryFold[bytes]:
    """Each message's JSON, kept as a history grows: `encode_body`'s `encoded`."""
    return HistoryFold(b"", lambda _, message: message_json(message))


def encoded_prompt() -> LastEncoded[Prompt]:
    """The system prompt's and the tools' JSON, made again only when they change: a client's
    `encode_body` `prompt` (the same for every request of a session, ~20 KB of tools)."""
    return LastEncoded(lambda prompt: {k: dumps(v) for k, v in _prompt(*prompt).items()})


def request_body(request: ModelRequest) -> dict[str, Any]:
    """The Messages API request (without `stream`, which the caller adds when streaming), with
    prompt-cache breakpoints (see `cache_points`)."""
    messages = [message_to_dict(m) for m in request.messages]
    for index in cache_points(request.messages):
        if (block := breakpoint_block(request.messages[index].content)) is not None:
            messages[index]["content"][block]["cache_control"] = EPHEMERAL
    head = {"model": request.model, "max_tokens": request.max_tokens, "messages": messages}
    return head | _prompt(request.system, request.tools) | _options(request)


def encode_body(
    request: ModelRequest,
    encoded: Callable[[Sequence[Message]], Sequence[bytes]] | None = None,
    prompt: Callable[[Prompt], Mapping[str, bytes]] | None = None,
) -> bytes:
    """`request_body(request)`, with `stream` when streaming, as JSON bytes. A message's JSON
    is made once for the session (Message.cached) and spliced in, a breakpoint spliced into
    it, so the cost of a request does not grow with the history before it. `encoded` gives
    each message's JSON (a client keeps them as the history grows: history_fold.py), `prompt`
    the system prompt's and tools' (`encoded_prompt`)."""
    if "messages" in request.extra:  # a requestOverrides body replaces them
        return dumps(request_body(request) | ({"stream": True} if request.stream else {}))
    body = {"model": request.model, "max_tokens": request.max_tokens} | _options(request)
    if request.stream:
        body["stream"] = True
    fields = (prompt or encoded_prompt())((request.system, request.tools))
    parts = list(encoded(request.messages) if encoded else map(message_json, request.messages))
    for index in cache_points(request.messages):
        parts[index] = _marked_json(request.messages[index]) or parts[index]
    kept = {key: value for key, value in fields.items() if key not in body}
    return spliced(body, kept | {"messages": parts})


def _prompt(system: str, tools: Sequence[ToolSpec]) -> dict[str, Any]:
    """The system prompt and the tools, each with its breakpoint."""
    body: dict[str, Any] = {}
    if system:
        body["system"] = [{"type": "text", "text": system, "cache_control": EPHEMERAL}]
    if tools:
        specs = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in tools
        ]
        specs[-1]["cache_control"] = EPHEMERAL
        body["tools"] = specs
    return body


def _options(request: ModelRequest) -> dict[str, Any]:
    """The rest of the request (what requestOverrides give last)."""
    body: dict[str, Any] = {}
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.adaptive_thinking:
        body["thinking"] = {"type": "adaptive"}
    elif request.thinking_budget:
        body["thinking"] = {"type": "enabled", "budget_tokens": request.thinking_budget}
    output_config: dict[str, Any] = {}
    if request.effort:
        output_config["effort"] = request.effort
    if request.task_budget is not None:
        output_config["task_budget"] = request.task_budget.to_dict()
    if output_config:
        body["output_config"] = output_config
    if request.stop_sequences:
        body["stop_sequences"] = list(request.stop_sequences)
    if request.tool_choice == "none" and request.tools:
        body["tool_choice"] = {"type": "none"}
    return body | request.extra


def request_headers(request: ModelRequest) -> dict[str, str]:
    """The request's own headers: its beta features, then any extra ones."""
    betas = request_betas(request)
    headers = {"anthropic-beta": ",".join(betas)} if betas else {}
    return {**headers, **request.headers}


def request_betas(request: ModelRequest) -> tuple[str, ...]:
    """The beta features the request asks for, and those its fields need."""
    if request.task_budget is not None and TASK_BUDGET_BETA not in request.betas:
        return (*request.betas, TASK_BUDGET_BETA)
    return request.betas


def cache_points(messages: Sequence[Message]) -> set[int]:
    """Where the cache breakpoints go among the latest messages: the last one (this request's
    prefix is written to the cache) and the one that was last in the previous request (its
    prefix is read back).

    With the system prompt's and the last tool's, that is the API's limit of four. The
    previous request's last breakpoint stays where it was, so the second request of a session
    begins with the first one's exact bytes; later ones differ from their predecessor only by
    the older marker they drop (markers are not part of what the cache compares).
    """
    if not messages:
        return set()
    points = {len(messages) - 1}
    last_assistant = next(
        (i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "assistant"), None
    )
    if last_assistant:
        points.add(last_assistant - 1)
    return points


def breakpoint_block(blocks: Sequence[ContentBlock]) -> int | None:
    """Which block of a message carries its breakpoint: the last one that may (not thinking,
    not empty text); None if none may."""
    for index in range(len(blocks) - 1, -1, -1):
        block = blocks[index]
        if isinstance(block, ThinkingBlock | RedactedThinkingBlock):
            continue
        if isinstance(block, TextBlock) and not block.text:
            continue
        return index
    return None


# A breakpoint on a message's last block, spliced into its JSON: the block's closing brace,
# the content list's and the message's.
_MARKED_END = b',"cache_control":' + dumps(EPHEMERAL) + b"}]}"


def _marked_json(message: Message) -> bytes | None:
    """The message's JSON with its breakpoint (None if no block may carry one): its cached
    JSON with the marker spliced in when the block is the last one (a 30 KB tool result is
    not encoded again for it)."""
    block = breakpoint_block(message.content)
    if block is None:
        return None
    if block == len(message.content) - 1:
        return message_json(message)[: -len(b"}]}")] + _MARKED_END
    marked = message_to_dict(message)
    marked["content"][block]["cache_control"] = EPHEMERAL
    return dumps(marked)


class EventMapper:
    """One Messages API stream event (type + JSON) → at most one normalized event.

    Blocks of types we do not model (server tools, their results) are skipped with their deltas,
    so a newer API cannot break an older codeloop.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self.done = False
        self._skipped: set[int] = set()

    def feed(self, kind: str, data: Mapping[str, Any]) -> StreamEvent | None:
        index = data.get("index", -1)
        if index in self._skipped:
            return None
        match kind:
            case "message_start":
                message = data.get("message") or {}
                usage = Usage.from_dict(message.get("usage"))
                return MessageStart(message.get("id", ""), message.get("model", ""), usage)
            case "content_block_start":
                block = _start_block(data.get("content_block") or {})
                if block is None:
                    self._skipped.add(index)
                    return None
                return BlockStart(index, block)
            case "content_block_delta":
                delta = data.get("delta") or {}
                known = _DELTAS.get(delta.get("type", ""))
                return BlockDelta(index, known[0], delta.get(known[1], "")) if known else None
            case "content_block_stop":
                return BlockStop(index)
            case "message_delta":
                delta = data.get("delta") or {}
                stop = delta.get("stop_reason")
                return MessageDelta(
                    _STOP_REASONS.get(stop, "end_turn") if stop else None,
                    Usage.from_dict(data.get("usage")),
                    delta.get("stop_sequence"),
                )
            case "message_stop":
                self.done = True
                return MessageStop()
            case "error":
                raise error_from_stream_event(data, url=self.url)
        return None  # ping, and event types newer than this code

    def finish(self) -> None:
        """A stream that ends before message_stop was cut: the answer is incomplete."""
        if not self.done:
            raise Transient(f"the stream from {self.url} ended before message_stop")


def _start_block(block: Mapping[str, Any]) -> ContentBlock | None:
    match block.get("type"):
        case "text":
            return TextBlock(block.get("text", ""))
        case "thinking":
            return ThinkingBlock(block.get("thinking", ""), block.get("signature", ""))
        case "redacted_thinking":
            return RedactedThinkingBlock(block.get("data", ""))
        case "tool_use":
            return ToolUseBlock(block["id"], block["name"], dict(block.get("input") or {}))
    return None


def replay(message: Mapping[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """A complete (non-streaming) message as the stream events that would have built it."""
    usage = message.get("usage") or {}
    yield "message_start", {"message": {**message, "content": [], "usage": usage}}
    for index, block in enumerate(message.get("content") or []):
        start, deltas = _split(block)
        yield "content_block_start", {"index": index, "content_block": start}
        for delta in deltas:
            yield "content_block_delta", {"index": index, "delta": delta}
        yield "content_block_stop", {"index": index}
    delta = {key: message.get(key) for key in ("stop_reason", "stop_sequence")}
    yield "message_delta", {"delta": delta, "usage": usage}
    yield "message_stop", {}


def _split(block: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """An empty opening block plus the deltas that fill it (other block types open whole)."""
    match block.get("type"):
        case "text":
            return {"type": "text", "text": ""}, [{"type": "text_delta", "text": block["text"]}]
        case "thinking":
            return {"type": "thinking", "thinking": "", "signature": ""}, [
                {"type": "thinking_delta", "thinking": block.get("thinking", "")},
                {"type": "signature_delta", "signature": block.get("signature", "")},
            ]
        case "tool_use":
            arguments = json.dumps(block.get("input") or {})
            return {**block, "input": {}}, [{"type": "input_json_delta", "partial_json": arguments}]
    return dict(block), []
