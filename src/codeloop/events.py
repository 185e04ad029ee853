"""What the loop and the session yield to frontends, in the order things happen.

Frontends render these; the session persists the ones that change the history (`AssistantTurn`,
`UserTurn`). The last event of every run is `LoopEnd`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any, Literal

from codeloop.system.valueclass import valueclass
from codeloop.types import (
    Message,
    ModelRequest,
    StreamEvent,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)

ContinueReason = Literal[
    "next_turn",
    "reactive_compact_retry",
    "max_output_tokens_escalate",
    "max_output_tokens_recovery",
    "stop_hook_blocking",
    "token_budget_continuation",
    "model_fallback",
    # A stream failed after some of its tool calls had started: the finished part of the
    # answer and those calls' results are kept, and the model is asked to go on from there.
    "stream_error_recovery",
]

EndReason = Literal[
    "completed",
    "aborted_streaming",
    "aborted_tools",
    "max_turns",
    "max_budget",
    "prompt_too_long",
    "blocking_limit",
    "model_error",
    "image_error",
    "hook_stopped",
    "stop_hook_prevented",
    # The model made the same call with the same result again and again (repetition.py).
    "repeated_calls",
]


@valueclass(slots=True)
class RequestStart:
    """A model request is about to be sent."""

    turn: int
    model: str
    attempt: int = 1


@valueclass(slots=True)
class RequestEnd:
    """A model request is over, answered or not: what it sent and what the provider reported
    it cost. Every attempt yields one (retries, discarded answers and compaction summaries
    too), so these add up to everything the session was billed for; an answer's
    `AssistantTurn` comes after its RequestEnd."""

    request: ModelRequest
    turn: int
    attempt: int
    usage: Usage
    duration_ms: float = 0.0
    response_id: str = ""
    # Set when the request failed: what went wrong, for people, and the HTTP status if any.
    error: str | None = None
    status: int | None = None
    # "summary": a compaction's summary call rather than a turn of the conversation; "hook":
    # a prompt hook's question to the model.
    purpose: Literal["turn", "summary", "hook"] = "turn"
    # Time to first token: from sending to the response's message_start (None: none came).
    ttft_ms: float | None = None


@valueclass(slots=True)
class SubAgent:
    """Which sub-agent an event came from: the Agent (Task) call that started it."""

    tool_use_id: str
    description: str = ""
    agent_type: str = "general-purpose"
    # A built-in agent (general-purpose, ...), not one the user or a plugin defined: telemetry
    # exports only built-in names (others as "custom", as Claude Code does).
    built_in: bool = True
    # Names its sidechain transcript (`<session>/subagents/agent-<id>.jsonl`).
    agent_id: str = ""


@valueclass(slots=True)
class ModelStreamed:
    """One event of the main conversation's model stream as it arrived, for a face that shows
    the raw stream (stream-json's --include-partial-messages); only when the session was
    opened to stream them (Session.stream_events)."""

    event: StreamEvent
    # On a message_start: how long after the request was sent it came (time to first token).
    ttft_ms: float | None = None


@valueclass(slots=True)
class TextDelta:
    text: str


@valueclass(slots=True)
class ThinkingDelta:
    text: str


@valueclass(slots=True)
class AssistantTurn:
    """A complete assistant message, added to the history."""

    message: Message
    model: str
    usage: Usage
    stop_reason: str | None
    message_id: str = ""
    duration_ms: float = 0.0


@valueclass(slots=True)
class ToolStarted:
    tool_use: ToolUseBlock


@valueclass(slots=True)
class ToolRunning:
    """A started call passed its checks (PreToolUse hooks, the permission decision, a person's
    answer) and runs now: what an editor shows as in progress rather than waiting."""

    tool_use_id: str


@valueclass(slots=True)
class ToolProgress:
    """Output a running tool produced, as it came; `elapsed` seconds since the tool started."""

    tool_use_id: str
    text: str
    elapsed: float = 0.0


@valueclass(slots=True)
class ToolFinished:
    """One tool result, yielded in the order the calls were made."""

    tool_use: ToolUseBlock
    result: ToolResultBlock
    duration_ms: float = 0.0
    # The permission decision and where it came from ("config": rules, the mode or the tool's
    # own safety; "hook": a PreToolUse hook); None when the call never got that far (an
    # unknown tool, invalid input, an abort before it started).
    decision: Literal["accept", "reject"] | None = None
    decision_source: Literal["config", "hook"] | None = None
    # What the tool reports to frontends beside the result (ToolResult.data): Edit and Write's
    # change as hunks. Not part of the history.
    data: Mapping[str, Any] | None = None


@valueclass(slots=True)
class UserTurn:
    """A user-role message the loop added: tool results, or a synthetic prompt."""

    message: Message


@valueclass(slots=True)
class MessagesDelivered:
    """Messages the user sent while the model worked went to it inside this turn's tool
    results (the UserTurn that follows), rather than waiting for a turn of their own."""

    uuids: tuple[str, ...]


@valueclass(slots=True)
class Notice:
    """Something the user should see that is not part of the conversation (retries, warnings)."""

    level: Literal["info", "warning", "error"]
    text: str


@valueclass(slots=True)
class Continuing:
    """The loop goes round again, and why: the `transition` of the new State."""

    reason: ContinueReason
    turn: int


@valueclass(slots=True)
class Retrying:
    """A model call failed and will be sent again after `wait_seconds`."""

    attempt: int
    max_attempts: int
    wait_seconds: float
    error: str
    status: int | None = None


@valueclass(slots=True)
class ResponseDiscarded:
    """The partial response streamed so far is void (a retry follows): frontends drop it."""

    reason: str


CompactTrigger = Literal["auto", "manual", "reactive"]
# What a context step did to a tool result the model no longer sees in full: folded it to a
# one-line stub (microcompact), saved it to a file behind a preview (too big when it was made),
# or replaced it, with the turns around it, by a summary (compaction).
ResultFate = Literal["folded", "saved", "summarized"]


@valueclass(slots=True)
class ResultRecord:
    """One tool result taken out of the model's view: which call, how big, where it went."""

    tool_use_id: str
    tool: str
    target: str  # the call's file, command or pattern, on one short line
    tokens: int  # its size when the model saw it whole
    fate: ResultFate
    path: str | None = None  # the file a saved result is in

    def to_dict(self) -> dict[str, str | int]:
        """The transcript's and stream-json's form (camelCase, as transcripts are written)."""
        data: dict[str, str | int] = {
            "toolUseId": self.tool_use_id,
            "tool": self.tool,
            "target": self.target,
            "tokens": self.tokens,
            "fate": self.fate,
        }
        if self.path is not None:
            data["path"] = self.path
        return data


@valueclass(slots=True)
class ResultsFolded:
    """Microcompact folded these results before a request (the transcript keeps them whole)."""

    results: tuple[ResultRecord, ...]


@valueclass(slots=True)
class Compacting:
    """A compaction starts (its summary call can take a while): frontends say so. It ends with
    a `CompactBoundary`, or a notice when it failed."""

    trigger: CompactTrigger
    tokens: int  # the history's size that called for it


@valueclass(slots=True)
class CompactBoundary:
    """The history before this point was replaced by a summary. Frontends show it;
    transcripts record it."""

    trigger: CompactTrigger
    tokens_before: int
    tokens_after: int
    messages_replaced: int
    summary: str = ""
    # The history from this point on: what a transcript writes at the boundary.
    messages: tuple[Message, ...] = ()
    # The uuids of the messages kept word for word (the latest request, the recent turns).
    kept: tuple[str, ...] = ()
    # Every tool result of the replaced history: folded or saved earlier, or summarized now.
    results: tuple[ResultRecord, ...] = ()


@valueclass(slots=True)
class MediaRemoved:
    """The API refused images in the history; they were replaced by a note saying so, and the
    request is sent again. Transcripts record `messages`, the history from now on."""

    removed: int
    reason: str
    messages: tuple[Message, ...]


@valueclass(slots=True)
class LoopEnd:
    reason: EndReason
    turns: int
    usage: Usage
    messages: tuple[Message, ...]
    error: str | None = None
    api_duration_ms: float = 0.0
    usage_by_model: dict[str, Usage] = field(default_factory=dict)
    # Each model's cost, priced response by response (costs.costs_by_model).
    cost_by_model: dict[str, float] = field(default_factory=dict)

    @property
    def final_text(self) -> str:
        """The text of the last assistant message: the run's answer."""
        last = next((m for m in reversed(self.messages) if m.role == "assistant"), None)
        return last.text if last is not None else ""


@valueclass(slots=True)
class SubagentEvent:
    """An event of a sub-agent's loop, as it happens: frontends show it under the call that
    started the agent (stream-json marks it with `parent_tool_use_id`); the sub-agent's own
    transcript records it, the parent's history never holds it."""

    agent: SubAgent
    event: Event


@valueclass(slots=True)
class TodosChanged:
    """The model's task list as a TodoWrite call left it (every call sends the whole list)."""

    todos: tuple[dict[str, str], ...]


@valueclass(slots=True)
class ToolUseSummary:
    """A short label for one tool batch, made beside the loop on the small fast model
    (CLAUDE_CODE_EMIT_TOOL_USE_SUMMARIES): yielded once the next response has finished."""

    summary: str
    tool_use_ids: tuple[str, ...]


@valueclass(slots=True)
class TaskProgress:
    """A few words on what a running sub-agent does now (the SDK's agentProgressSummaries),
    about every 30 s while it runs; `tool_use_id` is the Agent call that started it."""

    summary: str
    tool_use_id: str


Event = (
    RequestStart
    | RequestEnd
    | MessagesDelivered
    | ModelStreamed
    | TextDelta
    | ThinkingDelta
    | AssistantTurn
    | ToolStarted
    | ToolRunning
    | ToolProgress
    | ToolFinished
    | UserTurn
    | Notice
    | Continuing
    | Retrying
    | ResponseDiscarded
    | ResultsFolded
    | Compacting
    | CompactBoundary
    | MediaRemoved
    | LoopEnd
    | SubagentEvent
    | TodosChanged
    | ToolUseSummary
    | TaskProgress
)

# How a step that takes a while tells what it is doing as it starts (the loop yields it then).
Announce = Callable[[Event], None]
