"""Content blocks, messages and usage: the one vocabulary every layer speaks.

The shapes follow Anthropic's Messages API, because it is the richest of the wire formats we
speak; the OpenAI adapter converts to and from them. Everything is frozen so that a State can
share messages between iterations without copying them defensively.
"""

from __future__ import annotations

import json
import uuid as _uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import Any, Generic, Literal, TypeVar

from codeloop.system.valueclass import valueclass

Role = Literal["user", "assistant"]
StopReason = Literal["end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal"]


@valueclass(slots=True)
class TextBlock:
    text: str
    type: Literal["text"] = "text"


@valueclass(slots=True)
class ThinkingBlock:
    thinking: str
    signature: str = ""
    type: Literal["thinking"] = "thinking"


@valueclass(slots=True)
class RedactedThinkingBlock:
    data: str
    type: Literal["redacted_thinking"] = "redacted_thinking"


@valueclass(slots=True)
class ImageBlock:
    media_type: str
    data: str  # base64
    type: Literal["image"] = "image"


@valueclass(slots=True)
class ToolUseBlock:
    id: str
    name: str
    input: dict[str, Any]
    # Set when the streamed input was not valid JSON; the executor answers with an error result
    # instead of running the tool. Never sent on the wire.
    input_error: str | None = None
    type: Literal["tool_use"] = "tool_use"


@valueclass(slots=True)
class ToolResultBlock:
    tool_use_id: str
    content: str | tuple[TextBlock | ImageBlock, ...]
    is_error: bool = False
    type: Literal["tool_result"] = "tool_result"

    @property
    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "\n".join(b.text for b in self.content if isinstance(b, TextBlock))


ContentBlock = (
    TextBlock | ThinkingBlock | RedactedThinkingBlock | ImageBlock | ToolUseBlock | ToolResultBlock
)


def new_uuid() -> str:
    return str(_uuid.uuid4())


T = TypeVar("T")
K = TypeVar("K")


@valueclass(slots=True)
class Message:
    role: Role
    content: tuple[ContentBlock, ...]
    uuid: str = field(default_factory=new_uuid)
    # Synthetic messages the loop adds (recovery prompts, reminders): sent to the model, not
    # shown to the user as if they had typed them.
    is_meta: bool = False
    # What `cached` computed from this message; not part of it (equality, repr and replace()
    # leave it out: a replaced message starts afresh).
    _derived: dict[str, Any] | None = field(
        default=None, init=False, repr=False, compare=False, hash=False
    )

    @staticmethod
    def user(text: str, *, is_meta: bool = False) -> Message:
        return Message("user", (TextBlock(text),), is_meta=is_meta)

    def cached(self, key: str, compute: Callable[[Message], T]) -> T:
        """`compute(self)`, computed once per message: a message never changes, so neither
        does what is derived from it alone (its token estimate, its JSON on the wire). That is
        what keeps a turn's work independent of the length of the history before it."""
        derived = self._derived
        if derived is None:
            derived = {}
            object.__setattr__(self, "_derived", derived)
        if key in derived:
            value: T = derived[key]
            return value
        value = derived[key] = compute(self)
        return value

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_uses(self) -> tuple[ToolUseBlock, ...]:
        return tuple(b for b in self.content if isinstance(b, ToolUseBlock))

    @property
    def tool_results(self) -> tuple[ToolResultBlock, ...]:
        return tuple(b for b in self.content if isinstance(b, ToolResultBlock))


@valueclass(slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
        )

    def merged(self, update: Usage) -> Usage:
        """Anthropic's message_delta usage is cumulative: later non-zero fields win."""
        return Usage(
            update.input_tokens or self.input_tokens,
            update.output_tokens or self.output_tokens,
            update.cache_creation_input_tokens or self.cache_creation_input_tokens,
            update.cache_read_input_tokens or self.cache_read_input_tokens,
        )

    @property
    def context_tokens(self) -> int:
        """Tokens the prompt occupied: what counts against the context window."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def to_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }

    @staticmethod
    def from_dict(data: dict[str, Any] | None) -> Usage:
        data = data or {}
        return Usage(
            int(data.get("input_tokens") or 0),
            int(data.get("output_tokens") or 0),
            int(data.get("cache_creation_input_tokens") or 0),
            int(data.get("cache_read_input_tokens") or 0),
        )


# --- wire (Anthropic JSON) conversion: used by the Anthropic adapter, transcripts, stream-json


def block_to_dict(block: ContentBlock) -> dict[str, Any]:
    match block:
        case TextBlock(text):
            return {"type": "text", "text": text}
        case ThinkingBlock(thinking, signature):
            return {"type": "thinking", "thinking": thinking, "signature": signature}
        case RedactedThinkingBlock(data):
            return {"type": "redacted_thinking", "data": data}
        case ImageBlock(media_type, data):
            return {
                "type": "image",
                "source": {"type": "base64", "media_type": media_type, "data": data},
            }
        case ToolUseBlock(id_, name, input_):
            return {"type": "tool_use", "id": id_, "name": name, "input": input_}
        case ToolResultBlock(tool_use_id, content, is_error):
            out: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id}
            out["content"] = (
                content if isinstance(content, str) else [block_to_dict(b) for b in content]
            )
            if is_error:
                out["is_error"] = True
            return out
    raise TypeError(f"not a content block: {block!r}")


def block_from_dict(data: dict[str, Any]) -> ContentBlock:
    kind = data.get("type")
    if kind == "text":
        return TextBlock(data.get("text", ""))
    if kind == "thinking":
        return ThinkingBlock(data.get("thinking", ""), data.get("signature", ""))
    if kind == "redacted_thinking":
        return RedactedThinkingBlock(data.get("data", ""))
    if kind == "image":
        source = data.get("source", {})
        return ImageBlock(source.get("media_type", ""), source.get("data", ""))
    if kind == "tool_use":
        return ToolUseBlock(data["id"], data["name"], dict(data.get("input") or {}))
    if kind == "tool_result":
        raw = data.get("content", "")
        content: str | tuple[TextBlock | ImageBlock, ...]
        if isinstance(raw, str):
            content = raw
        else:
            parts = [block_from_dict(b) for b in raw]
            content = tuple(b for b in parts if isinstance(b, TextBlock | ImageBlock))
        return ToolResultBlock(data["tool_use_id"], content, bool(data.get("is_error", False)))
    raise ValueError(f"unknown content block type: {kind!r}")


def message_to_dict(message: Message) -> dict[str, Any]:
    """The Messages API form of a message (no codeloop-only fields)."""
    return {"role": message.role, "content": [block_to_dict(b) for b in message.content]}


def message_json(message: Message) -> bytes:
    """`message_to_dict` as compact UTF-8 JSON, made once per message: requests and the
    transcript splice it in rather than encode the history again."""
    return message.cached("json", _encode_message)


def dumps(data: Any) -> bytes:
    """Compact UTF-8 JSON, the form requests and transcripts are written in."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


def spliced(body: dict[str, Any], encoded: Mapping[str, bytes | Sequence[bytes]]) -> bytes:
    """`dumps(body | encoded)` with `encoded`'s values already JSON: bytes are a value, a
    sequence of bytes the items of a list. A request body made of messages each encoded once
    (`message_json`), a transcript line of its message's JSON: nothing is encoded twice."""
    parts = [dumps(body)[:-1]]
    for key, value in encoded.items():
        parts += (b"," if len(parts) > 1 or len(parts[0]) > 1 else b"", dumps(key), b":")
        if isinstance(value, bytes):
            parts.append(value)
        else:
            items = [b","] * (2 * len(value) - 1) if value else []
            items[::2] = value
            parts += (b"[", *items, b"]")
    parts.append(b"}")
    return b"".join(parts)


class LastEncoded(Generic[K]):
    """`encode(key)`'s fields of JSON, made again only when `key` differs from the last one:
    what every request of a session repeats (its system prompt, ~20 KB of tools) is encoded
    once. The same objects compare in C, without their `__eq__`."""

    def __init__(self, encode: Callable[[K], Mapping[str, bytes]]) -> None:
        self._encode = encode
        self._last: tuple[K, Mapping[str, bytes]] | None = None

    def __call__(self, key: K) -> Mapping[str, bytes]:
        last = self._last
        if last is None or last[0] != key:
            last = self._last = (key, self._encode(key))
        return last[1]


def _encode_message(message: Message) -> bytes:
    return dumps(message_to_dict(message))


def message_from_dict(data: dict[str, Any]) -> Message:
    raw = data.get("content", "")
    blocks: tuple[ContentBlock, ...]
    if isinstance(raw, str):
        blocks = (TextBlock(raw),)
    else:
        blocks = tuple(block_from_dict(b) for b in raw)
    kwargs: dict[str, Any] = {}
    if "uuid" in data:
        kwargs["uuid"] = data["uuid"]
    return Message(data["role"], blocks, is_meta=bool(data.get("is_meta", False)), **kwargs)


# --- what is asked of a model (the events that report a request carry it too) ------------


@valueclass(slots=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]


@valueclass(slots=True)
class ModelRequest:
    model: str
    messages: tuple[Message, ...]
    system: str = ""
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int = 8192
    temperature: float | None = None
    # Anthropic extended thinking budget; None leaves thinking off.
    thinking_budget: int | None = None
    # Anthropic adaptive thinking (the model decides how much to think).
    adaptive_thinking: bool = False
    # How hard to work: Anthropic `output_config.effort`, OpenAI's reasoning effort.
    effort: str | None = None
    # Anthropic beta features (the anthropic-beta header) and extra headers for this request.
    betas: tuple[str, ...] = ()
    headers: Mapping[str, str] = field(default_factory=dict)
    stop_sequences: tuple[str, ...] = ()
    # Ask for a non-streaming answer, replayed as events (recovery after an SSE error event).
    stream: bool = True
    # "none": the answer may call no tool, though the tools are sent (a compaction's summary
    # call keeps the session's tools, and so the prompt's cached prefix). Each client says it
    # its API's way; requestOverrides (`extra`) still have the last word.
    tool_choice: Literal["auto", "none"] = "auto"
    extra: dict[str, Any] = field(default_factory=dict)
    # Anthropic's task budget (--task-budget): output_config.task_budget, under its beta.
    task_budget: TaskBudget | None = None


@valueclass(slots=True)
class TaskBudget:
    """Tokens the whole task may take (`total`) and, once a compaction has hidden what the
    history spent, what is left of them (`remaining`)."""

    total: int
    remaining: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "tokens", "total": self.total}
        if self.remaining is not None:
            out["remaining"] = self.remaining
        return out


# --- the model's normalized stream (models/base: every provider's wire format becomes it) ---


@valueclass(slots=True)
class MessageStart:
    id: str
    model: str
    usage: Usage
    type: Literal["message_start"] = "message_start"


@valueclass(slots=True)
class BlockStart:
    index: int
    # The block as it opens: text/thinking empty, tool_use with id and name and empty input.
    block: ContentBlock
    type: Literal["block_start"] = "block_start"


DeltaKind = Literal["text", "input_json", "thinking", "signature"]


@valueclass(slots=True)
class BlockDelta:
    index: int
    kind: DeltaKind
    value: str
    type: Literal["block_delta"] = "block_delta"


@valueclass(slots=True)
class BlockStop:
    index: int
    type: Literal["block_stop"] = "block_stop"


@valueclass(slots=True)
class MessageDelta:
    stop_reason: StopReason | None
    usage: Usage
    stop_sequence: str | None = None
    type: Literal["message_delta"] = "message_delta"


@valueclass(slots=True)
class MessageStop:
    type: Literal["message_stop"] = "message_stop"


@valueclass(slots=True)
class KeepAlive:
    """Bytes came that carry no content (a ping, a comment, part of an event): the stream is
    alive, whatever the watchdog thought. Everything but the watchdog ignores it."""

    type: Literal["keep_alive"] = "keep_alive"


StreamEvent = (
    MessageStart | BlockStart | BlockDelta | BlockStop | MessageDelta | MessageStop | KeepAlive
)


__all__ = [
    "BlockDelta",
    "BlockStart",
    "BlockStop",
    "ContentBlock",
    "DeltaKind",
    "ImageBlock",
    "KeepAlive",
    "LastEncoded",
    "Message",
    "MessageDelta",
    "MessageStart",
    "MessageStop",
    "ModelRequest",
    "RedactedThinkingBlock",
    "Role",
    "StopReason",
    "StreamEvent",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolSpec",
    "ToolUseBlock",
    "Usage",
    "block_from_dict",
    "block_to_dict",
    "dumps",
    "message_from_dict",
    "message_json",
    "message_to_dict",
    "new_uuid",
    "spliced",
]
