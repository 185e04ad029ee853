"""Scripted model conversations: one format for the in-process fake model and the fake server.

A scenario is a list of turns, served in order, one per model request. Faults attached to a
turn fail the requests that come before it is served, so retry paths are scripted in the same
file as the conversation. `render_turn` turns a turn into the normalized stream events of
`codeloop.models.base`; `ScriptedModel` yields them directly and `FakeModelServer` puts them on
the wire, so both doubles answer the same scenario the same way.

JSON form (a bare list of turns is accepted too)::

    {"turns": [
      {"blocks": [{"text": "Let me look."},
                  {"tool_use": {"name": "Bash", "input": {"command": "ls"}}}],
       "faults": [{"kind": "overloaded", "times": 2}]},
      {"blocks": [{"thinking": "done", "signature": "sig"}, {"text": "All good."}],
       "usage": {"input_tokens": 1200, "output_tokens": 40},
       "chunk_chars": 4, "delay": 0.01}
    ]}
"""

from __future__ import annotations

import json
import threading
from collections import deque
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    Tag,
    model_validator,
)

from codeloop.models.base import (
    BlockDelta,
    BlockStart,
    BlockStop,
    MessageDelta,
    MessageStart,
    MessageStop,
    StreamEvent,
)
from codeloop.system.valueclass import valueclass
from codeloop.types import StopReason, TextBlock, ThinkingBlock, ToolUseBlock, Usage

Provider = Literal["anthropic", "openai"]
FaultKind = Literal[
    "overloaded",
    "rate_limited",
    "server_error",
    "prompt_too_long",
    "media",
    "auth",
    # A 404 for the model asked for (a model the API does not know).
    "not_found",
    "cut",
    "sse_error",
    "stall",
]
# Faults that fail a request before any byte of the answer; the others strike mid-stream.
REQUEST_FAULTS: frozenset[str] = frozenset(
    {
        "overloaded",
        "rate_limited",
        "server_error",
        "prompt_too_long",
        "media",
        "auth",
        "not_found",
    }
)


class _Spec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextSpec(_Spec):
    text: str
    delay_after: NonNegativeFloat = 0.0


class ThinkingSpec(_Spec):
    thinking: str
    signature: str = ""
    delay_after: NonNegativeFloat = 0.0


class ToolCall(_Spec):
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
    # Streamed verbatim instead of json.dumps(input): malformed or cut-short tool input.
    raw_input: str | None = None


class ToolUseSpec(_Spec):
    tool_use: ToolCall
    delay_after: NonNegativeFloat = 0.0


def _block_kind(value: Any) -> str | None:
    fields = value if isinstance(value, dict) else getattr(value, "__dict__", {})
    return next((k for k in ("tool_use", "thinking", "text") if k in fields), None)


BlockSpec = Annotated[
    Annotated[TextSpec, Tag("text")]
    | Annotated[ThinkingSpec, Tag("thinking")]
    | Annotated[ToolUseSpec, Tag("tool_use")],
    Discriminator(_block_kind),
]


class UsageSpec(_Spec):
    input_tokens: NonNegativeInt = 100
    # None: estimated from the turn's content (4 characters a token).
    output_tokens: NonNegativeInt | None = None
    cache_creation_input_tokens: NonNegativeInt = 0
    cache_read_input_tokens: NonNegativeInt = 0


class Fault(_Spec):
    kind: FaultKind
    # Consecutive requests this fault fails before the turn (or its next fault) is served.
    times: PositiveInt = 1
    # rate_limited / overloaded: the retry-after and retry-after-ms headers.
    retry_after: NonNegativeFloat | None = None
    retry_after_ms: NonNegativeInt | None = None
    # prompt_too_long: the token counts in the message.
    actual: PositiveInt = 250_000
    limit: PositiveInt = 200_000
    # cut / sse_error / stall: normalized events served before the fault strikes.
    after: NonNegativeInt = 1
    # stall: how long nothing is sent; with ping_every, nothing but a keep-alive (Anthropic's
    # ping event, an SSE comment for OpenAI) every so many seconds.
    seconds: NonNegativeFloat = 30.0
    ping_every: PositiveFloat | None = None
    # sse_error: the error type in the event; any kind: overrides the default message.
    error_type: str = "overloaded_error"
    message: str | None = None
    # Strike only requests for this model (a fallback model then gets the turn at once).
    model: str | None = None
    # The struck request uses up its turn: the next request gets the next turn (a client that
    # keeps the part of a cut answer it received moves on rather than asking again).
    consume: bool = False

    @property
    def retry_after_seconds(self) -> float | None:
        """What a client should wait: retry-after-ms wins, as in the official SDKs."""
        if self.retry_after_ms is not None:
            return self.retry_after_ms / 1000
        return self.retry_after


class RawResponse(_Spec):
    """Exact bytes to answer with, e.g. a recorded SSE stream for conformance tests."""

    body: str
    status: int = 200
    content_type: str = "text/event-stream; charset=utf-8"
    headers: dict[str, str] = Field(default_factory=dict)


class Turn(_Spec):
    blocks: tuple[BlockSpec, ...] = ()
    stop_reason: StopReason | None = None
    usage: UsageSpec = UsageSpec()
    # Pacing: text, thinking and tool JSON are split into deltas of chunk_chars characters,
    # and the stream pauses `delay` seconds after every event.
    chunk_chars: PositiveInt | None = None
    delay: NonNegativeFloat = 0.0
    faults: tuple[Fault, ...] = ()
    raw: RawResponse | None = None

    @model_validator(mode="after")
    def _check_raw(self) -> Turn:
        if self.raw is not None:
            if self.blocks:
                raise ValueError("a turn has either blocks or raw, not both")
            if any(f.kind not in REQUEST_FAULTS for f in self.faults):
                raise ValueError("a raw turn only takes request faults (no cut/sse_error/stall)")
        return self

    @property
    def effective_stop_reason(self) -> StopReason:
        if self.stop_reason is not None:
            return self.stop_reason
        has_tool = any(isinstance(b, ToolUseSpec) for b in self.blocks)
        return "tool_use" if has_tool else "end_turn"


class Scenario(_Spec):
    turns: tuple[Turn, ...]

    @staticmethod
    def from_json(text: str) -> Scenario:
        data = json.loads(text)
        return Scenario.model_validate({"turns": data} if isinstance(data, list) else data)

    @staticmethod
    def load(path: str | Path) -> Scenario:
        return Scenario.from_json(Path(path).read_text(encoding="utf-8"))


# --- helpers that keep Python-written scenarios short -------------------------------------


def text(value: str, *, delay_after: float = 0.0) -> TextSpec:
    return TextSpec(text=value, delay_after=delay_after)


def thinking(value: str, signature: str = "", *, delay_after: float = 0.0) -> ThinkingSpec:
    return ThinkingSpec(thinking=value, signature=signature, delay_after=delay_after)


def tool_use(
    name: str,
    input: dict[str, Any] | None = None,
    *,
    id: str | None = None,
    raw_input: str | None = None,
    delay_after: float = 0.0,
) -> ToolUseSpec:
    call = ToolCall(name=name, input=input or {}, id=id, raw_input=raw_input)
    return ToolUseSpec(tool_use=call, delay_after=delay_after)


def turn(
    *blocks: TextSpec | ThinkingSpec | ToolUseSpec | str,
    text: str | None = None,
    stop_reason: StopReason | None = None,
    usage: UsageSpec | None = None,
    chunk_chars: int | None = None,
    delay: float = 0.0,
    faults: tuple[Fault, ...] | list[Fault] = (),
) -> Turn:
    """`turn("hi")`, `turn(text="hi")`, `turn(tool_use("Bash", {"command": "ls"}))`."""
    specs = [TextSpec(text=b) if isinstance(b, str) else b for b in blocks]
    if text is not None:
        specs.append(TextSpec(text=text))
    return Turn(
        blocks=tuple(specs),
        stop_reason=stop_reason,
        usage=usage or UsageSpec(),
        chunk_chars=chunk_chars,
        delay=delay,
        faults=tuple(faults),
    )


def fault(kind: FaultKind, **fields: Any) -> Fault:
    return Fault(kind=kind, **fields)


def earlier_calls(count: int = 3) -> tuple[Turn, ...]:
    """Turns of small Bash calls (`echo`) for a script to open with, so that a compaction
    later has something to summarize: it keeps the latest request and the recent turns word
    for word (3 of them), and a history of nothing else is not compacted at all."""
    return tuple(turn(tool_use("Bash", {"command": f"echo step {i}"})) for i in range(count))


# --- rendering -----------------------------------------------------------------------------


def message_id(provider: Provider, turn_index: int) -> str:
    prefix = "msg_01" if provider == "anthropic" else "chatcmpl-"
    return f"{prefix}scripted{turn_index:08d}"


def tool_use_id(provider: Provider, turn_index: int, block_index: int) -> str:
    prefix = "toolu_01" if provider == "anthropic" else "call_"
    return f"{prefix}scripted{turn_index:05d}{block_index:03d}"


def tool_input_json(call: ToolCall) -> str:
    return call.raw_input if call.raw_input is not None else json.dumps(call.input)


@valueclass(slots=True)
class PacedEvent:
    event: StreamEvent
    pause: float  # seconds to wait after sending this event


def _pieces(value: str, size: int | None) -> list[str]:
    if not value:
        return []
    if size is None:
        return [value]
    return [value[i : i + size] for i in range(0, len(value), size)]


def turn_usage(t: Turn) -> Usage:
    spec = t.usage
    output = spec.output_tokens
    if output is None:
        chars = 0
        for b in t.blocks:
            if isinstance(b, TextSpec):
                chars += len(b.text)
            elif isinstance(b, ThinkingSpec):
                chars += len(b.thinking)
            else:
                chars += len(tool_input_json(b.tool_use))
        output = max(1, chars // 4)
    return Usage(
        spec.input_tokens, output, spec.cache_creation_input_tokens, spec.cache_read_input_tokens
    )


def render_turn(
    t: Turn, turn_index: int, *, model: str, provider: Provider = "anthropic"
) -> list[PacedEvent]:
    """The normalized events a turn streams as, each with the pause that follows it."""
    if t.raw is not None:
        raise ValueError("a raw turn has no normalized rendering; serve it with FakeModelServer")
    usage = turn_usage(t)
    start_usage = Usage(
        usage.input_tokens,
        min(1, usage.output_tokens),
        usage.cache_creation_input_tokens,
        usage.cache_read_input_tokens,
    )
    events: list[PacedEvent] = []

    def emit(event: StreamEvent, extra_pause: float = 0.0) -> None:
        events.append(PacedEvent(event, t.delay + extra_pause))

    emit(MessageStart(message_id(provider, turn_index), model, start_usage))
    for i, spec in enumerate(t.blocks):
        if isinstance(spec, TextSpec):
            emit(BlockStart(i, TextBlock("")))
            for piece in _pieces(spec.text, t.chunk_chars):
                emit(BlockDelta(i, "text", piece))
        elif isinstance(spec, ThinkingSpec):
            emit(BlockStart(i, ThinkingBlock("")))
            for piece in _pieces(spec.thinking, t.chunk_chars):
                emit(BlockDelta(i, "thinking", piece))
            if spec.signature:
                emit(BlockDelta(i, "signature", spec.signature))
        else:
            call = spec.tool_use
            call_id = call.id or tool_use_id(provider, turn_index, i)
            emit(BlockStart(i, ToolUseBlock(call_id, call.name, {})))
            for piece in _pieces(tool_input_json(call), t.chunk_chars):
                emit(BlockDelta(i, "input_json", piece))
        emit(BlockStop(i), spec.delay_after)
    emit(MessageDelta(t.effective_stop_reason, usage))
    events.append(PacedEvent(MessageStop(), 0.0))
    return events


# --- serving state -------------------------------------------------------------------------


@valueclass(slots=True)
class Serving:
    """What one request gets: a turn, and the fault (if any) that strikes instead of it."""

    index: int
    turn: Turn
    fault: Fault | None


class ScenarioPlayer:
    """Hands out turns in order, thread-safely; shared by both doubles.

    A request takes its turn when it arrives, unless a fault strikes: a failed request leaves
    the turn for the retry. A stalled response takes the turn only once the stall is over
    (`served`), so a client whose watchdog gave up gets the same turn on its next request.
    """

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self._lock = threading.Lock()
        self._index = 0
        self._faults: deque[Fault] | None = None

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self.scenario.turns) - self._index

    def take(self, model: str | None = None) -> Serving | None:
        """The next serving for a request for `model`, or None when the scenario has run out."""
        with self._lock:
            if self._index >= len(self.scenario.turns):
                return None
            current = self.scenario.turns[self._index]
            if self._faults is None:
                self._faults = deque(f for f in current.faults for _ in range(f.times))
            strikes = self._faults and self._faults[0].model in (None, model)
            serving = Serving(self._index, current, self._faults.popleft() if strikes else None)
            if serving.fault is None or serving.fault.consume:
                self._advance()
            return serving

    def served(self, serving: Serving) -> None:
        """A stalled response went through: its turn is used up."""
        with self._lock:
            if self._index == serving.index:
                self._advance()

    def _advance(self) -> None:
        self._index += 1
        self._faults = None


__all__ = [
    "REQUEST_FAULTS",
    "BlockSpec",
    "Fault",
    "FaultKind",
    "PacedEvent",
    "Provider",
    "RawResponse",
    "Scenario",
    "ScenarioPlayer",
    "Serving",
    "TextSpec",
    "ThinkingSpec",
    "ToolCall",
    "ToolUseSpec",
    "Turn",
    "UsageSpec",
    "fault",
    "message_id",
    "render_turn",
    "text",
    "thinking",
    "tool_input_json",
    "tool_use",
    "tool_use_id",
    "turn",
    "turn_usage",
]
