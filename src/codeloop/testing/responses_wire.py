"""The fake server's rendering of a scenario turn as OpenAI's Responses API: the streamed
events (`response.created` … `response.completed`) and the whole response object.

Thinking blocks become reasoning items with a summary; the scenario's signature is the item's
encrypted content. The completed event carries the full output, as the real API's does (the
SDK's stream accumulator takes its final response from it).
"""

from __future__ import annotations

import json
import time
from typing import Any

from codeloop.models.base import (
    BlockDelta,
    BlockStart,
    BlockStop,
    MessageDelta,
    MessageStart,
    MessageStop,
    StreamEvent,
)
from codeloop.types import TextBlock, ThinkingBlock, ToolUseBlock, Usage


def _dumps(data: Any) -> bytes:
    return json.dumps(data, separators=(",", ":")).encode()


class ResponsesEvents:
    """Render one turn's normalized events as Responses stream events, in order."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.created = int(time.time())
        self.sequence = 0
        self.id = ""
        self.output: list[dict[str, Any]] = []
        self._items: dict[int, dict[str, Any]] = {}  # block index → the item it builds
        self._usage = Usage()
        self._stop: str | None = None

    def render(self, event: StreamEvent) -> bytes:
        return b"".join(self._sse(data) for data in self.events(event))

    def events(self, event: StreamEvent) -> list[dict[str, Any]]:
        match event:
            case MessageStart(id_):
                self.id = "resp_" + id_.removeprefix("chatcmpl-")
                return [
                    {"type": "response.created", "response": self.response("in_progress")},
                    {"type": "response.in_progress", "response": self.response("in_progress")},
                ]
            case BlockStart(index, block):
                return self._open(index, block)
            case BlockDelta(index, kind, value):
                return self._delta(index, kind, value)
            case BlockStop(index):
                return self._close(index)
            case MessageDelta(stop_reason, usage):
                self._usage, self._stop = usage, stop_reason
            case MessageStop():
                status = "incomplete" if self._stop == "max_tokens" else "completed"
                return [{"type": f"response.{status}", "response": self.response(status)}]
        return []

    def response(self, status: str) -> dict[str, Any]:
        done = status != "in_progress"
        cached = self._usage.cache_read_input_tokens
        usage = {
            "input_tokens": self._usage.input_tokens + cached,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": self._usage.output_tokens,
            "output_tokens_details": {
                "reasoning_tokens": sum(
                    len(part["text"]) // 4
                    for item in self.output
                    if item["type"] == "reasoning"
                    for part in item["summary"]
                )
            },
            "total_tokens": self._usage.input_tokens + cached + self._usage.output_tokens,
        }
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.created,
            "status": status,
            "model": self.model,
            "output": list(self.output) if done else [],
            "incomplete_details": {"reason": "max_output_tokens"}
            if status == "incomplete"
            else None,
            "error": None,
            "usage": usage if done else None,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "store": False,
        }

    def _sse(self, data: dict[str, Any]) -> bytes:
        self.sequence += 1
        data = {**data, "sequence_number": self.sequence}
        name = str(data["type"]).encode()
        return b"event: " + name + b"\ndata: " + _dumps(data) + b"\n\n"

    def _open(self, index: int, block: Any) -> list[dict[str, Any]]:
        position = len(self.output) + len(self._items)
        if isinstance(block, ToolUseBlock):
            item: dict[str, Any] = {
                "id": f"fc_{block.id}",
                "type": "function_call",
                "status": "in_progress",
                "call_id": block.id,
                "name": block.name,
                "arguments": "",
            }
        elif isinstance(block, ThinkingBlock):
            item = {"id": f"rs_{index:08d}", "type": "reasoning", "summary": []}
        elif isinstance(block, TextBlock):
            item = {
                "id": f"msg_{self.id}_{index}",
                "type": "message",
                "status": "in_progress",
                "role": "assistant",
                "content": [],
            }
        else:
            return []
        item["_position"] = position
        self._items[index] = item
        shown = {k: v for k, v in item.items() if k != "_position"}
        events = [{"type": "response.output_item.added", "output_index": position, "item": shown}]
        part = {"item_id": item["id"], "output_index": position}
        if item["type"] == "message":
            item["content"] = [{"type": "output_text", "text": "", "annotations": []}]
            events.append(
                {
                    "type": "response.content_part.added",
                    **part,
                    "content_index": 0,
                    "part": {"type": "output_text", "text": "", "annotations": []},
                }
            )
        elif item["type"] == "reasoning":
            item["summary"] = [{"type": "summary_text", "text": ""}]
            events.append(
                {
                    "type": "response.reasoning_summary_part.added",
                    **part,
                    "summary_index": 0,
                    "part": {"type": "summary_text", "text": ""},
                }
            )
        return events

    def _delta(self, index: int, kind: str, value: str) -> list[dict[str, Any]]:
        item = self._items.get(index)
        if item is None:
            return []
        part = {"item_id": item["id"], "output_index": item["_position"]}
        if kind == "text":
            item["content"][0]["text"] += value
            return [
                {
                    "type": "response.output_text.delta",
                    **part,
                    "content_index": 0,
                    "delta": value,
                    "logprobs": [],
                }
            ]
        if kind == "thinking":
            item["summary"][0]["text"] += value
            return [
                {
                    "type": "response.reasoning_summary_text.delta",
                    **part,
                    "summary_index": 0,
                    "delta": value,
                }
            ]
        if kind == "signature":
            item["encrypted_content"] = item.get("encrypted_content", "") + value
            return []
        item["arguments"] += value
        return [{"type": "response.function_call_arguments.delta", **part, "delta": value}]

    def _close(self, index: int) -> list[dict[str, Any]]:
        item = self._items.pop(index, None)
        if item is None:
            return []
        position = item.pop("_position")
        part = {"item_id": item["id"], "output_index": position}
        events: list[dict[str, Any]] = []
        if item["type"] == "message":
            item["status"] = "completed"
            text = item["content"][0]
            events += [
                {
                    "type": "response.output_text.done",
                    **part,
                    "content_index": 0,
                    "text": text["text"],
                    "logprobs": [],
                },
                {"type": "response.content_part.done", **part, "content_index": 0, "part": text},
            ]
        elif item["type"] == "reasoning":
            summary = item["summary"][0]
            events += [
                {
                    "type": "response.reasoning_summary_text.done",
                    **part,
                    "summary_index": 0,
                    "text": summary["text"],
                },
                {
                    "type": "response.reasoning_summary_part.done",
                    **part,
                    "summary_index": 0,
                    "part": summary,
                },
            ]
        else:
            item["status"] = "completed"
            events.append(
                {
                    "type": "response.function_call_arguments.done",
                    **part,
                    "arguments": item["arguments"],
                }
            )
        self.output.append(item)
        events.append({"type": "response.output_item.done", "output_index": position, "item": item})
        return events


def responses_object(events: list[StreamEvent], model: str) -> dict[str, Any]:
    """A whole (non-streaming) response, built from the same events."""
    renderer = ResponsesEvents(model)
    final: dict[str, Any] = {}
    for event in events:
        for data in renderer.events(event):
            if data["type"] in ("response.completed", "response.incomplete"):
                final = data["response"]
    return final
