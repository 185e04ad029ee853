"""The normalized stream events as Anthropic's Messages API puts them on the wire: the `data`
object of each server-sent event. The fake server streams them; the Agent SDK frontend passes
them on as `stream_event` lines (partial messages), so both speak the same shape."""

from __future__ import annotations

from typing import Any

from codeloop.models.base import (
    BlockDelta,
    BlockStart,
    BlockStop,
    KeepAlive,
    MessageDelta,
    MessageStart,
    MessageStop,
    StreamEvent,
)
from codeloop.types import block_to_dict

# A delta's kind and the field Anthropic carries its value in.
_DELTA_FIELDS = {"text": "text", "input_json": "partial_json", "thinking": "thinking"}


def anthropic_event(event: StreamEvent) -> dict[str, Any]:
    """`{"type": "content_block_delta", "index": 0, "delta": {...}}` and its siblings; a
    keep-alive is Anthropic's `ping`."""
    match event:
        case MessageStart(id_, model, usage):
            message: dict[str, Any] = {
                "id": id_,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": usage.to_dict(),
            }
            return {"type": "message_start", "message": message}
        case BlockStart(index, block):
            opening = block_to_dict(block)
            return {"type": "content_block_start", "index": index, "content_block": opening}
        case BlockDelta(index, kind, value):
            delta = {"type": f"{kind}_delta", _DELTA_FIELDS.get(kind, kind): value}
            return {"type": "content_block_delta", "index": index, "delta": delta}
        case BlockStop(index):
            return {"type": "content_block_stop", "index": index}
        case MessageDelta(stop_reason, usage, stop_sequence):
            return {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": stop_sequence},
                "usage": usage.to_dict(),
            }
        case MessageStop():
            return {"type": "message_stop"}
        case KeepAlive():
            return {"type": "ping"}
    raise TypeError(f"not a stream event: {event!r}")
