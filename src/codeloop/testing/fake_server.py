"""A local HTTP server that answers like the Anthropic and OpenAI APIs, from a scenario.

Integration tests point the real clients (ours, and the official SDKs as oracles) at it; bench
scripts and demos run it standalone (`python -m codeloop.testing.fake_server SCENARIO.json`).
It speaks HTTP/1.1 with keep-alive and chunked streaming, so clients reuse connections as they
would in production, and it records every request with monotonic arrival and finish times.

Given a mapping of scenarios instead of one, it holds several conversations at once (a batch
of tasks, or the prompts of one session): each request is served from the scenario whose key
shows in its latest message naming one, so each prompt names its conversation. Given
`summaries`, codeloop's compaction summary calls (which come whenever the context manager
decides) are answered from that scenario.

Like the real APIs, it refuses a request whose messages break their rules (the first message
the user's, every tool call answered in the next message, no empty content...: see
testing/history_check.py), or whose `tool_choice` they would not take, with a 400 worded as
theirs, before any turn is served. With `llama_cpp` its Chat Completions route plays
llama.cpp's server: answers carry `timings`, and its own request fields (`cache_prompt`,
`id_slot`) are taken, which OpenAI refuses.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import select
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

from codeloop.context.compact import SUMMARY_PROMPT
from codeloop.models.assembler import MessageAssembler
from codeloop.models.base import (
    BlockDelta,
    BlockStart,
    KeepAlive,
    MessageDelta,
    MessageStart,
    MessageStop,
    StreamEvent,
)
from codeloop.models.wire_events import anthropic_event
from codeloop.system.valueclass import valueclass
from codeloop.testing.cloud_wire import (
    TOKEN_PATH,
    bedrock_chunks,
    bedrock_exception,
    cloud_route,
    token_response,
)
from codeloop.testing.history_check import chat_problems, history_problems
from codeloop.testing.responses_wire import ResponsesEvents, responses_object
from codeloop.testing.scenario import (
    REQUEST_FAULTS,
    Fault,
    PacedEvent,
    Provider,
    Scenario,
    ScenarioPlayer,
    Serving,
    Turn,
    render_turn,
)
from codeloop.testing.server_kinds import ServerKind, is_probe, probe_answer, too_long
from codeloop.types import StopReason, ToolUseBlock, Usage, block_to_dict

ROUTES: dict[str, Provider] = {
    "/v1/messages": "anthropic",
    "/v1/chat/completions": "openai",
    "/chat/completions": "openai",
    # OpenAI's Responses API: OpenAI's errors and ids, its own events (testing/responses_wire.py).
    "/v1/responses": "openai",
    "/responses": "openai",
}
FINISH_REASONS: dict[StopReason, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}


@valueclass(frozen=False)
class RecordedRequest:
    """One request as the server saw it; `finished` is set when its response is complete."""

    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any  # parsed JSON, None if the body was not JSON
    arrived: float  # time.monotonic()
    client_port: int  # same port on two requests: the client reused its connection
    finished: float | None = None
    status: int | None = None
    turn: int | None = None  # index of the scenario turn served (or struck by a fault)
    fault: str | None = None
    conversation: str | None = None  # with several scenarios: the key that picked one
    # The usage the response reported, as far as it got on the wire (Anthropic's fields; an
    # OpenAI answer's cached prompt tokens as cache reads): what the client was billed.
    usage: Usage = field(default_factory=Usage)
    size: int = 0  # bytes of the request body


# The longest a held answer waits for its test (FakeModelServer.hold): a test that fails
# before letting it go must not leave the handler thread behind for long.
HOLD_SECONDS = 120.0


def _dumps(data: Any) -> bytes:
    return json.dumps(data, separators=(",", ":")).encode()


# --- error bodies --------------------------------------------------------------------------


@valueclass(slots=True)
class _Error:
    status: int
    body: dict[str, Any]
    headers: dict[str, str]


def _error(
    provider: Provider,
    status: int,
    kind: str,
    message: str,
    *,
    code: str | None = None,
    param: str | None = None,
    headers: dict[str, str] | None = None,
) -> _Error:
    """An error in the provider's shape; `kind` is the Anthropic error type."""
    if provider == "anthropic":
        body: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
    else:
        openai_type = {
            "overloaded_error": "server_error",
            "api_error": "server_error",
            "rate_limit_error": "requests",
        }.get(kind, "invalid_request_error")
        body = {"error": {"message": message, "type": openai_type, "param": param, "code": code}}
    return _Error(status, body, headers or {})


def _prompt_too_long(provider: Provider, actual: int, limit: int, message: str | None) -> _Error:
    if provider == "anthropic":
        text = message or f"prompt is too long: {actual} tokens > {limit} maximum"
        return _error(provider, 400, "invalid_request_error", text)
    text = message or (
        f"This model's maximum context length is {limit} tokens. However, your messages "
        f"resulted in {actual} tokens. Please reduce the length of the messages."
    )
    return _error(provider, 400, "invalid_request_error", text, code="context_length_exceeded")


def _refusal(
    provider: Provider, body: dict[str, Any], chat: bool, llama_cpp: bool = False
) -> _Error | None:
    """The 400 the real API answers a request whose messages it would refuse (see
    testing/history_check.py): the Messages API's rules, or Chat Completions' (`chat`); or
    whose tool_choice or fields it does not take."""
    if provider == "anthropic":
        problems = history_problems(body.get("messages"))
        if problems:
            return _error(provider, 400, "invalid_request_error", problems[0])
    elif chat:
        refused = chat_problems(body.get("messages"))
        if refused:
            first = refused[0]
            return _error(provider, 400, "invalid_request_error", first.message, param=first.param)
        unknown = [] if llama_cpp else [key for key in LLAMA_CPP_FIELDS if key in body]
        if unknown:
            message = f"Unrecognized request argument supplied: {unknown[0]}"
            return _error(provider, 400, "invalid_request_error", message)
    return _tool_choice_refusal(provider, body)


# What llama.cpp's server takes on its Chat Completions route beyond OpenAI's fields.
LLAMA_CPP_FIELDS = ("cache_prompt", "id_slot")
_TOOL_CHOICE_TYPES = ("auto", "any", "tool", "none")


def _tool_choice_refusal(provider: Provider, body: dict[str, Any]) -> _Error | None:
    """Anthropic takes `{"type": ...}` only; OpenAI takes a tool_choice only with tools."""
    if "tool_choice" not in body:
        return None
    choice = body["tool_choice"]
    if provider == "anthropic":
        if isinstance(choice, dict) and choice.get("type") in _TOOL_CHOICE_TYPES:
            return None
        message = "tool_choice: Input should be a valid dictionary or object to extract fields from"
        return _error(provider, 400, "invalid_request_error", message)
    if not body.get("tools"):
        message = (
            "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are "
            "specified."
        )
        return _error(provider, 400, "invalid_request_error", message, param="tool_choice")
    return None


# Request fields the Messages API takes only under a beta: field → the beta it needs.
_BETA_FIELDS = {"task_budget": "task-budgets-2026-03-13"}


def _beta_refusal(
    provider: Provider, body: dict[str, Any], headers: dict[str, str]
) -> _Error | None:
    """The 400 the Messages API answers a beta field sent without its beta (in the
    anthropic-beta header, or Bedrock's body `anthropic_beta`), or sent malformed."""
    if provider != "anthropic":
        return None
    output_config = body.get("output_config")
    if not isinstance(output_config, dict):
        return None
    betas = {b.strip() for b in headers.get("anthropic-beta", "").split(",")}
    betas |= set(body.get("anthropic_beta") or ())
    for name, beta in _BETA_FIELDS.items():
        if name not in output_config:
            continue
        if beta not in betas:
            text = f"output_config.{name}: Extra inputs are not permitted"
            return _error(provider, 400, "invalid_request_error", text)
    budget = output_config.get("task_budget")
    if budget is not None and not _valid_task_budget(budget):
        text = "output_config.task_budget: expected {type: tokens, total: int >= 1, remaining?}"
        return _error(provider, 400, "invalid_request_error", text)
    return None


def _valid_task_budget(budget: Any) -> bool:
    if not isinstance(budget, dict) or budget.get("type") != "tokens":
        return False
    if not set(budget) <= {"type", "total", "remaining"}:
        return False
    numbers = [budget.get("total"), budget.get("remaining", 0)]
    return all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in numbers) and (
        budget["total"] >= 1
    )


def _fault_error(provider: Provider, fault: Fault) -> _Error:
    headers: dict[str, str] = {}
    if fault.retry_after is not None:
        headers["retry-after"] = f"{fault.retry_after:g}"
    if fault.retry_after_ms is not None:
        headers["retry-after-ms"] = str(fault.retry_after_ms)
    msg = fault.message
    match fault.kind:
        case "overloaded":
            # OpenAI-compatible servers say "overloaded" with a 503; Anthropic has its own 529.
            status = 529 if provider == "anthropic" else 503
            return _error(
                provider, status, "overloaded_error", msg or "Overloaded", headers=headers
            )
        case "rate_limited":
            text = msg or "Rate limit reached for requests. Please try again later."
            return _error(
                provider, 429, "rate_limit_error", text, code="rate_limit_exceeded", headers=headers
            )
        case "server_error":
            return _error(provider, 500, "api_error", msg or "Internal server error")
        case "prompt_too_long":
            return _prompt_too_long(provider, fault.actual, fault.limit, msg)
        case "media":
            text = msg or (
                "messages.0.content.0.image.source.base64: image exceeds 5 MB maximum: "
                "7340032 bytes > 5242880 bytes"
            )
            return _error(provider, 400, "invalid_request_error", text, code="invalid_image")
        case "auth":
            text = msg or "invalid x-api-key"
            return _error(provider, 401, "authentication_error", text, code="invalid_api_key")
        case "not_found":
            text = msg or "model: the model does not exist"
            return _error(provider, 404, "not_found_error", text, code="model_not_found")
    # A mid-stream fault hitting a non-streaming request: the whole answer fails.
    status = 529 if fault.error_type == "overloaded_error" else 500
    return _error(provider, status, fault.error_type, msg or "Overloaded")


# --- wire renderings of the normalized events ----------------------------------------------


def _sse(name: str, data: dict[str, Any]) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + _dumps(data) + b"\n\n"


def _anthropic_event(event: StreamEvent) -> bytes:
    data = anthropic_event(event)
    sent = _sse(data["type"], data)
    if isinstance(event, MessageStart):  # Anthropic pings right after the message starts
        sent += _sse("ping", {"type": "ping"})
    return sent


def _billed(provider: Provider, usage: Usage) -> Usage:
    """What a client reading `usage` off this provider's wire sees."""
    if provider == "anthropic":
        return usage
    cached = usage.cache_read_input_tokens
    return Usage(usage.context_tokens - cached, usage.output_tokens, 0, cached)


def _openai_usage(usage: Usage) -> dict[str, Any]:
    """OpenAI counts cached tokens inside prompt_tokens; cache writes are not reported."""
    prompt = usage.context_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_input_tokens},
    }


def _timings(usage: Usage) -> dict[str, int]:
    """llama.cpp's account of an answer (tokens taken from its cache, processed, generated)."""
    cached = usage.cache_read_input_tokens
    return {
        "cache_n": cached,
        "prompt_n": usage.context_tokens - cached,
        "predicted_n": usage.output_tokens,
    }


class _OpenAIChunks:
    """Chat Completions chunks for one stream: tool calls are numbered apart from blocks;
    llama.cpp's `timings` on the last one that has choices, with `llama_cpp`."""

    def __init__(self, model: str, include_usage: bool, llama_cpp: bool = False) -> None:
        self.model = model
        self.include_usage = include_usage
        self.llama_cpp = llama_cpp
        self.created = int(time.time())
        self.id = ""
        self.tool_index: dict[int, int] = {}
        self.usage = Usage()

    def _chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        chunk: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [
                {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
            ],
        }
        if self.include_usage:
            chunk["usage"] = None
        if finish_reason is not None and self.llama_cpp:
            chunk["timings"] = _timings(self.usage)
        return b"data: " + _dumps(chunk) + b"\n\n"

    def render(self, event: StreamEvent) -> bytes:
        match event:
            case MessageStart(id_):
                self.id = id_
                return self._chunk({"role": "assistant", "content": ""})
            case BlockStart(index, ToolUseBlock(call_id, name)):
                self.tool_index[index] = len(self.tool_index)
                call = {
                    "index": self.tool_index[index],
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": ""},
                }
                return self._chunk({"tool_calls": [call]})
            case BlockDelta(_, "text", value):
                return self._chunk({"content": value})
            case BlockDelta(_, "thinking", value):
                return self._chunk({"reasoning_content": value})
            case BlockDelta(index, "input_json", value):
                call = {"index": self.tool_index[index], "function": {"arguments": value}}
                return self._chunk({"tool_calls": [call]})
            case MessageDelta(stop_reason, usage):
                self.usage = usage
                return self._chunk({}, FINISH_REASONS[stop_reason or "end_turn"])
            case MessageStop():
                tail = b""
                if self.include_usage:
                    final = {
                        "id": self.id,
                        "object": "chat.completion.chunk",
                        "created": self.created,
                        "model": self.model,
                        "choices": [],
                        "usage": _openai_usage(self.usage),
                    }
                    tail = b"data: " + _dumps(final) + b"\n\n"
                return tail + b"data: [DONE]\n\n"
            case KeepAlive():
                return b": keep-alive\n\n"
        return b""  # block starts and stops, signatures: nothing on this wire

    @staticmethod
    def error(fault: Fault) -> bytes:
        err = _error("openai", 500, fault.error_type, fault.message or "Overloaded")
        return b"data: " + _dumps(err.body) + b"\n\n"


def _anthropic_message(events: list[PacedEvent]) -> dict[str, Any]:
    assembler = MessageAssembler()
    for paced in events:
        assembler.feed(paced.event)
    return {
        "id": assembler.id,
        "type": "message",
        "role": "assistant",
        "model": assembler.model,
        "content": [block_to_dict(b) for b in assembler.blocks],
        "stop_reason": assembler.stop_reason,
        "stop_sequence": assembler.stop_sequence,
        "usage": assembler.usage.to_dict(),
    }


def _openai_completion(
    events: list[PacedEvent], model: str, llama_cpp: bool = False
) -> dict[str, Any]:
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    completion_id, finish, usage = "", "stop", Usage()
    for paced in events:
        match paced.event:
            case MessageStart(id_):
                completion_id = id_
            case BlockStart(index, ToolUseBlock(call_id, name)):
                function = {"name": name, "arguments": ""}
                calls[index] = {"id": call_id, "type": "function", "function": function}
            case BlockDelta(_, "text", value):
                content.append(value)
            case BlockDelta(_, "thinking", value):
                reasoning.append(value)
            case BlockDelta(index, "input_json", value):
                calls[index]["function"]["arguments"] += value
            case MessageDelta(stop_reason, final_usage):
                finish, usage = FINISH_REASONS[stop_reason or "end_turn"], final_usage
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(content) or None,
        "refusal": None,
    }
    if reasoning:
        message["reasoning_content"] = "".join(reasoning)
    if calls:
        message["tool_calls"] = list(calls.values())
    completion = {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": _openai_usage(usage),
    }
    return completion | ({"timings": _timings(usage)} if llama_cpp else {})


def _reported(provider: Provider, so_far: Usage, event: StreamEvent, final: Usage) -> Usage:
    """The usage a stream has reported once `event` is sent: Anthropic's at the start, updated
    by message_delta; OpenAI's (`final`, when the client asked for it) in the last chunk."""
    if provider == "openai":
        return _billed(provider, final) if isinstance(event, MessageStop) else so_far
    if isinstance(event, MessageStart):
        return event.usage
    if isinstance(event, MessageDelta):
        return so_far.merged(event.usage)
    return so_far


def _final_usage(events: list[PacedEvent]) -> Usage:
    return next((p.event.usage for p in events if isinstance(p.event, MessageDelta)), Usage())


# --- the server ----------------------------------------------------------------------------


def _is_summary_call(body: dict[str, Any]) -> bool:
    """Whether the request's last message carries codeloop's summary instructions."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return False
    return _SUMMARY_MARK in json.dumps(messages[-1], ensure_ascii=False)


_SUMMARY_MARK = SUMMARY_PROMPT.splitlines()[0]


class _ClientGone(Exception):
    """The client hung up (or the server is closing): stop answering this request."""


class _HTTPServer(ThreadingHTTPServer):
    def __init__(self, address: tuple[str, int], fake: FakeModelServer) -> None:
        super().__init__(address, _Handler)
        self.fake = fake

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-answer (a killed CLI, a cut test) is expected here."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Real API servers send each SSE event at once; Nagle would hold small writes for an ACK.
    disable_nagle_algorithm = True
    server: _HTTPServer
    _player: ScenarioPlayer  # the conversation of the request being answered
    arrived: float  # when the request being answered arrived (its first line)
    responses_api = False  # this request is for OpenAI's Responses API
    bedrock = False  # ... or for Bedrock, which frames the Messages API events in binary

    def setup(self) -> None:
        super().setup()
        self.server.fake._track(self.connection, open_=True)

    def finish(self) -> None:
        self.server.fake._track(self.connection, open_=False)
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read `requests`, not stderr."""

    def parse_request(self) -> bool:
        """A request arrives with its first line: parsing its headers is the server's time
        (and, with another request's handler holding the GIL, not the client's)."""
        self.arrived = time.monotonic()
        return super().parse_request()

    def do_POST(self) -> None:
        self._exchange()

    def do_GET(self) -> None:
        self._exchange()

    def _exchange(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        record = RecordedRequest(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            arrived=self.arrived,
            client_port=self.client_address[1],
            size=len(raw),
        )
        fake = self.server.fake
        probe = is_probe(self.path)
        fake._record(record, probe=probe)
        try:
            if probe:
                self._answer_probe(record)
            else:
                self._respond(record, len(raw))
        except (_ClientGone, OSError):
            self.close_connection = True
        finally:
            if not fake.keep_bodies:
                record.body = None
            fake._finish(record)

    def _answer_probe(self, record: RecordedRequest) -> None:
        """A local server's own endpoint (testing/server_kinds.py), or a 404."""
        answer = probe_answer(self.server.fake.server_kind, self.command, self.path, record.body)
        if answer is None:
            message = f"fake server: no route for {self.command} {self.path}"
            return self._send_error(record, _error("openai", 404, "not_found_error", message))
        self._send(record, 200, _dumps(answer), {"content-type": "application/json"})

    def _respond(self, record: RecordedRequest, size: int) -> None:
        path = self.path.split("?", 1)[0]
        provider = ROUTES.get(path)
        self.responses_api = path.endswith("/responses")
        if path == TOKEN_PATH and self.command == "POST":
            return self._send(record, 200, token_response(), {"content-type": "application/json"})
        body = record.body
        cloud = cloud_route(path)
        if cloud is not None and isinstance(body, dict):
            provider = "anthropic"
            self.bedrock = cloud[0] == "bedrock"
            # The model is in the URL (and on Bedrock, whether to stream).
            body = {**body, "model": cloud[1]}
            if self.bedrock:
                body["stream"] = cloud[2]
        if provider is None or self.command != "POST":
            message = f"fake server: no route for {self.command} {self.path}"
            return self._send_error(record, _error("anthropic", 404, "not_found_error", message))
        if not isinstance(body, dict):
            message = "fake server: the request body is not a JSON object"
            return self._send_error(record, _error(provider, 400, "invalid_request_error", message))
        fake = self.server.fake
        refusal = _refusal(provider, body, not self.responses_api, fake.llama_cpp) or _beta_refusal(
            provider, body, record.headers
        )
        if refusal is not None:
            return self._send_error(record, refusal)
        estimate = math.ceil(size / 4)
        if fake.max_prompt_tokens is not None and estimate > fake.max_prompt_tokens:
            own = too_long(fake.server_kind, estimate) if fake.server_kind else None
            if own is not None:
                status, answer = own
                return self._send(
                    record, status, _dumps(answer), {"content-type": "application/json"}
                )
            error = _prompt_too_long(provider, estimate, fake.max_prompt_tokens, None)
            return self._send_error(record, error)
        player = fake.player_for(body, record)
        if player is None:
            message = "fake server: the messages name none of the conversations"
            return self._send_error(record, _error(provider, 400, "invalid_request_error", message))
        self._player = player
        model = body.get("model")
        serving = player.take(model if isinstance(model, str) else None)
        if serving is None:
            turns = len(player.scenario.turns)
            message = f"fake server: scenario exhausted after {turns} turns"
            return self._send_error(record, _error(provider, 400, "invalid_request_error", message))
        record.turn = serving.index
        fault = serving.fault
        record.fault = fault.kind if fault else None
        if fault is not None and fault.kind in REQUEST_FAULTS:
            return self._send_error(record, _fault_error(provider, fault))
        raw = serving.turn.raw
        if raw is not None:
            headers = {"content-type": raw.content_type, **raw.headers}
            return self._send(record, raw.status, raw.body.encode(), headers)
        model = str(body.get("model") or "fake-model")
        events = render_turn(serving.turn, serving.index, model=model, provider=provider)
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            render = (
                (lambda event: bedrock_chunks(_anthropic_event(event)))
                if self.bedrock
                else _anthropic_event
                if provider == "anthropic"
                else ResponsesEvents(model).render
                if self.responses_api
                else _OpenAIChunks(model, include_usage, fake.llama_cpp).render
            )
            return self._stream(record, provider, serving, events, render, include_usage)
        return self._answer_whole(record, provider, serving, events, model)

    def _send(
        self, record: RecordedRequest, status: int, data: bytes, headers: dict[str, str]
    ) -> None:
        record.status = status
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, record: RecordedRequest, error: _Error) -> None:
        headers = {"content-type": "application/json", **error.headers}
        self._send(record, error.status, _dumps(error.body), headers)

    def _wait(self, seconds: float) -> None:
        if not self.server.fake._client_stays(self.connection, seconds):
            raise _ClientGone

    def _answer_whole(
        self,
        record: RecordedRequest,
        provider: Provider,
        serving: Serving,
        events: list[PacedEvent],
        model: str,
    ) -> None:
        """Non-streaming: the answer takes as long as its stream would have, then comes whole."""
        fault = serving.fault
        if fault is not None:
            if fault.kind == "cut":
                self.close_connection = True  # hang up without answering
                return
            if fault.kind == "sse_error":
                return self._send_error(record, _fault_error(provider, fault))
            self._wait(fault.seconds)
            self._player.served(serving)
        self._wait(sum(p.pause for p in events))
        if provider == "anthropic":
            data = _anthropic_message(events)
        elif self.responses_api:
            data = responses_object([paced.event for paced in events], model)
        else:
            data = _openai_completion(events, model, self.server.fake.llama_cpp)
        self._send(record, 200, _dumps(data), {"content-type": "application/json"})
        record.usage = _billed(provider, _final_usage(events))

    def _stream(
        self,
        record: RecordedRequest,
        provider: Provider,
        serving: Serving,
        events: list[PacedEvent],
        render: Callable[[StreamEvent], bytes],
        include_usage: bool,
    ) -> None:
        record.status = 200
        final = _final_usage(events) if provider == "anthropic" or include_usage else Usage()
        self.send_response(200)
        kind = "application/vnd.amazon.eventstream" if self.bedrock else "text/event-stream"
        self.send_header("content-type", f"{kind}; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        fault = serving.fault
        for i, paced in enumerate(events):
            if (
                fault is not None
                and i == fault.after
                and not self._strike(provider, serving, fault, render)
            ):
                return
            self._chunk(render(paced.event))
            record.usage = _reported(provider, record.usage, paced.event, final)
            if i == 0 and (hold := self.server.fake.held(serving.index)) is not None:
                hold.wait(HOLD_SECONDS)
            if paced.pause:
                self._wait(paced.pause)
        if (
            fault is not None
            and fault.after >= len(events)
            and not self._strike(provider, serving, fault, render)
        ):
            return
        self.wfile.write(b"0\r\n\r\n")

    def _strike(
        self,
        provider: Provider,
        serving: Serving,
        fault: Fault,
        render: Callable[[StreamEvent], bytes],
    ) -> bool:
        """Apply a mid-stream fault; True if the stream goes on afterwards (a stall)."""
        if fault.kind == "stall":
            self._stall(fault, render)
            self._player.served(serving)
            return True
        if fault.kind == "sse_error":
            if self.bedrock:
                name = "serviceUnavailableException"
                if fault.error_type != "overloaded_error":
                    name = "modelStreamErrorException"
                self._chunk(bedrock_exception(name, fault.message or "Overloaded"))
            elif provider == "anthropic":
                message = fault.message or "Overloaded"
                error = {"type": "error", "error": {"type": fault.error_type, "message": message}}
                self._chunk(_sse("error", error))
            elif self.responses_api:
                message = fault.message or "Overloaded"
                error = {"type": "error", "code": fault.error_type, "message": message}
                self._chunk(_sse("error", error))
            else:
                self._chunk(_OpenAIChunks.error(fault))
            self.wfile.write(b"0\r\n\r\n")
        else:  # cut: hang up without the last chunk
            self.close_connection = True
        return False

    def _stall(self, fault: Fault, render: Callable[[StreamEvent], bytes]) -> None:
        """Send nothing for `fault.seconds`, or only keep-alives every `fault.ping_every`."""
        left = fault.seconds
        while fault.ping_every is not None and left > fault.ping_every:
            self._wait(fault.ping_every)
            self._chunk(render(KeepAlive()))
            left -= fault.ping_every
        self._wait(left)

    def _chunk(self, data: bytes) -> None:
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))


class FakeModelServer:
    """`with FakeModelServer(scenario) as srv:` then point a client at `srv.anthropic_base_url`.

    `scenario` may also map keys to scenarios: one conversation per key (see the module)."""

    def __init__(
        self,
        scenario: Scenario | Iterable[Turn] | Mapping[str, Scenario],
        *,
        port: int = 0,
        max_prompt_tokens: int | None = None,
        summaries: Scenario | Iterable[Turn] | None = None,
        keep_bodies: bool = True,
        server_kind: ServerKind | None = None,
        llama_cpp: bool = False,
    ) -> None:
        """`server_kind`: answer a local server's own endpoints as that kind of server, and
        refuse prompts past its window (testing/server_kinds.py)."""
        self.conversations: dict[str, ScenarioPlayer] = {}
        self.summaries: ScenarioPlayer | None = None
        if summaries is not None:
            turns = (
                summaries if isinstance(summaries, Scenario) else Scenario(turns=tuple(summaries))
            )
            self.summaries = ScenarioPlayer(turns)
        if isinstance(scenario, Mapping):
            self.conversations = {key: ScenarioPlayer(s) for key, s in scenario.items()}
            scenario = Scenario(turns=())
        self.scenario = (
            scenario if isinstance(scenario, Scenario) else Scenario(turns=tuple(scenario))
        )
        self.player = ScenarioPlayer(self.scenario)
        # Requests whose body is larger than this many tokens (4 characters each) get the
        # provider's "prompt is too long" error, as a real context window would.
        self.server_kind = server_kind
        if max_prompt_tokens is None and server_kind is not None:
            max_prompt_tokens = server_kind.window
        self.max_prompt_tokens = max_prompt_tokens
        # False: a request's body is dropped once answered (its size stays), so a session of
        # thousands of big requests does not fill the memory of the process serving it.
        self.keep_bodies = keep_bodies
        self.llama_cpp = llama_cpp  # the Chat Completions route plays llama.cpp's server
        self._port = port
        self._cond = threading.Condition()
        self._requests: list[RecordedRequest] = []
        self._probes: list[RecordedRequest] = []
        self._connections: set[socket.socket] = set()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._wake = (-1, -1)  # the accept loop's wake pipe (read end, write end)
        # Scenario turns whose answer stops after its message_start until the test says (hold).
        self._holds: dict[int, threading.Event] = {}

    # lifecycle

    def start(self) -> Self:
        httpd = self._httpd = _HTTPServer(("127.0.0.1", self._port), self)
        wake_r, _ = self._wake = os.pipe()
        self._thread = threading.Thread(
            target=self._accept_loop, args=(httpd, wake_r), name="fake-model-server", daemon=True
        )
        self._thread.start()
        return self

    @staticmethod
    def _accept_loop(httpd: _HTTPServer, wake: int) -> None:
        """serve_forever polls every 0.5 s for shutdown; a wake pipe makes close instant."""
        while True:
            readable, _, _ = select.select([httpd.fileno(), wake], [], [])
            if wake in readable:
                return
            httpd.handle_request()

    def hold(self, turn: int) -> threading.Event:
        """The answer to scenario turn `turn` stops after its message_start until the event
        returned is set: the model is at work while a test does what must happen meanwhile."""
        with self._cond:
            return self._holds.setdefault(turn, threading.Event())

    def held(self, turn: int) -> threading.Event | None:
        with self._cond:
            return self._holds.get(turn)

    def close(self) -> None:
        """Stop accepting, and hang up on open connections so no handler thread lingers."""
        if self._httpd is None or self._thread is None:
            return
        for hold in list(self._holds.values()):
            hold.set()
        os.write(self._wake[1], b"x")
        self._thread.join()
        self._httpd.server_close()
        for fd in self._wake:
            os.close(fd)
        with self._cond:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        self._httpd = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # addresses

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the fake server is not running")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def anthropic_base_url(self) -> str:
        return self.url  # the Anthropic SDK appends /v1/messages

    @property
    def openai_base_url(self) -> str:
        return self.url + "/v1"  # the OpenAI SDK appends /chat/completions

    # what happened

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._cond:
            return list(self._requests)

    @property
    def probes(self) -> list[RecordedRequest]:
        """Requests to a local server's own endpoints (/props, /api/show, /v1/models...)."""
        with self._cond:
            return list(self._probes)

    @property
    def remaining(self) -> int:
        """Turns not served yet."""
        players = self.conversations.values() if self.conversations else [self.player]
        return sum(player.remaining for player in players)

    def player_for(self, body: dict[str, Any], record: RecordedRequest) -> ScenarioPlayer | None:
        """The conversation a request belongs to: the summaries' for a compaction's summary
        call, else the key found in its latest message that names one (so each prompt of a
        multi-turn session can pick its own), earliest in that message (the longer key when one
        contains another), noted on its record."""
        if self.summaries is not None and _is_summary_call(body):
            record.conversation = "summaries"
            return self.summaries
        if not self.conversations:
            return self.player
        # Chat and Messages bodies say `messages`; the Responses API says `input`.
        given = body.get("messages", body.get("input"))
        for message in reversed(given if isinstance(given, list) else [given]):
            text = json.dumps(message, ensure_ascii=False)
            found = [(text.find(k), -len(k), k) for k in self.conversations if k in text]
            if found:
                record.conversation = min(found)[2]
                return self.conversations[record.conversation]
        return None

    def wait_for_requests(
        self, count: int, *, finished: bool = False, timeout: float = 10.0
    ) -> list[RecordedRequest]:
        """Block until `count` requests arrived (and, if `finished`, were fully answered)."""

        def ready() -> bool:
            first = self._requests[:count]
            return len(first) == count and (
                not finished or all(r.finished is not None for r in first)
            )

        with self._cond:
            if not self._cond.wait_for(ready, timeout):
                raise TimeoutError(
                    f"fake server: {len(self._requests)} requests, waited for {count}"
                )
            return list(self._requests)

    def _record(self, record: RecordedRequest, *, probe: bool = False) -> None:
        with self._cond:
            (self._probes if probe else self._requests).append(record)
            self._cond.notify_all()

    def _track(self, conn: socket.socket, *, open_: bool) -> None:
        with self._cond:
            if open_:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def _finish(self, record: RecordedRequest) -> None:
        with self._cond:
            record.finished = time.monotonic()
            self._cond.notify_all()

    def _client_stays(self, conn: socket.socket, seconds: float) -> bool:
        """Wait `seconds`; False as soon as the peer hangs up or `close` shuts the socket."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select([conn], [], [], left)
            if not readable:
                continue
            try:
                if not conn.recv(1, socket.MSG_PEEK):
                    return False
            except OSError:
                return False
            # Bytes of a pipelined request, not a hang-up: just let the time pass.
            time.sleep(max(0.0, deadline - time.monotonic()))
        return True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m codeloop.testing.fake_server",
        description="Serve a scenario as the Anthropic and OpenAI APIs on 127.0.0.1.",
    )
    parser.add_argument("scenario", help="scenario JSON file")
    parser.add_argument("--port", type=int, default=0, help="default: a free port")
    parser.add_argument("--max-prompt-tokens", type=int, default=None)
    args = parser.parse_args(argv)
    server = FakeModelServer(
        Scenario.load(args.scenario), port=args.port, max_prompt_tokens=args.max_prompt_tokens
    )
    with server:
        print(server.url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
