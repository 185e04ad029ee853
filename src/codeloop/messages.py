"""What the in-process API yields: the Claude Agent SDK's message types, with its names and
fields, read from the very objects stream-json prints (protocol/json_lines.py). Code written
against the SDK's messages (`isinstance(m, ResultMessage)`, `m.total_cost_usd`, `block.text`)
reads codeloop's unchanged."""

from __future__ import annotations

from typing import Any

from codeloop.system.valueclass import valueclass


@valueclass
class TextBlock:
    text: str


@valueclass
class ThinkingBlock:
    thinking: str
    signature: str = ""


@valueclass
class ToolUseBlock:
    id: str
    name: str
    input: dict[str, Any]


@valueclass
class ToolResultBlock:
    tool_use_id: str
    content: str | list[dict[str, Any]] | None = None
    is_error: bool | None = None


ContentBlock = TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock


@valueclass
class UserMessage:
    content: str | list[ContentBlock]
    uuid: str | None = None
    parent_tool_use_id: str | None = None


@valueclass
class AssistantMessage:
    content: list[ContentBlock]
    model: str
    parent_tool_use_id: str | None = None
    usage: dict[str, Any] | None = None
    message_id: str | None = None
    stop_reason: str | None = None
    session_id: str | None = None
    uuid: str | None = None


@valueclass
class SystemMessage:
    """`init` at the start of every prompt (data: the session id, tools, model, MCP servers,
    permission mode...), and notices, retries, compactions."""

    subtype: str
    data: dict[str, Any]


@valueclass
class ResultMessage:
    """The end of one prompt: how it ended, what it cost, its answer."""

    subtype: str
    duration_ms: int
    duration_api_ms: int
    is_error: bool
    num_turns: int
    session_id: str
    total_cost_usd: float | None = None
    usage: dict[str, Any] | None = None
    result: str | None = None
    stop_reason: str | None = None
    structured_output: Any = None
    model_usage: dict[str, Any] | None = None
    permission_denials: list[Any] | None = None
    errors: list[str] | None = None
    api_error_status: int | None = None
    terminal_reason: str | None = None
    uuid: str | None = None
    # Time to first token of the prompt's first request, in ms.
    ttft_ms: int | None = None
    # The prompt's message and those sent while it ran that reached the model with it.
    user_message_uuids: list[str] | None = None


@valueclass
class StreamEvent:
    """One event of the model's stream as Anthropic's API sends it (partial messages)."""

    uuid: str
    session_id: str
    event: dict[str, Any]
    parent_tool_use_id: str | None = None


@valueclass
class ToolUseSummaryMessage:
    """A short label for the tool batch `preceding_tool_use_ids` ran
    (CLAUDE_CODE_EMIT_TOOL_USE_SUMMARIES), once the next response has finished."""

    summary: str
    preceding_tool_use_ids: list[str]
    session_id: str
    uuid: str


@valueclass
class PromptSuggestionMessage:
    """What the user might type next (Options.prompt_suggestions), after the result."""

    suggestion: str
    session_id: str
    uuid: str


Message = (
    UserMessage
    | AssistantMessage
    | SystemMessage
    | ResultMessage
    | StreamEvent
    | ToolUseSummaryMessage
    | PromptSuggestionMessage
)


def parse_message(data: dict[str, Any]) -> Message | None:
    """One stream-json object as its message type (None: a kind the SDK skips too)."""
    kind = data.get("type")
    if kind == "assistant":
        message = data["message"]
        return AssistantMessage(
            content=[b for b in map(_block, message["content"]) if b is not None],
            model=message["model"],
            parent_tool_use_id=data.get("parent_tool_use_id"),
            usage=message.get("usage"),
            message_id=message.get("id"),
            stop_reason=message.get("stop_reason"),
            session_id=data.get("session_id"),
            uuid=data.get("uuid"),
        )
    if kind == "user":
        raw = data["message"]["content"]
        content: str | list[ContentBlock] = (
            raw if isinstance(raw, str) else [b for b in map(_block, raw) if b is not None]
        )
        return UserMessage(content, data.get("uuid"), data.get("parent_tool_use_id"))
    if kind == "system":
        return SystemMessage(str(data.get("subtype", "")), data)
    if kind == "result":
        return ResultMessage(
            subtype=data["subtype"],
            duration_ms=data["duration_ms"],
            duration_api_ms=data["duration_api_ms"],
            is_error=data["is_error"],
            num_turns=data["num_turns"],
            session_id=data["session_id"],
            total_cost_usd=data.get("total_cost_usd"),
            usage=data.get("usage"),
            result=data.get("result"),
            stop_reason=data.get("stop_reason"),
            structured_output=data.get("structured_output"),
            model_usage=data.get("modelUsage"),
            permission_denials=data.get("permission_denials"),
            errors=data.get("errors"),
            api_error_status=data.get("api_error_status"),
            terminal_reason=data.get("terminal_reason"),
            uuid=data.get("uuid"),
            ttft_ms=data.get("ttft_ms"),
            user_message_uuids=data.get("user_message_uuids"),
        )
    if kind == "stream_event":
        return StreamEvent(
            data["uuid"], data["session_id"], data["event"], data.get("parent_tool_use_id")
        )
    if kind == "tool_use_summary":
        ids = list(data["preceding_tool_use_ids"])
        return ToolUseSummaryMessage(data["summary"], ids, data["session_id"], data["uuid"])
    if kind == "prompt_suggestion":
        return PromptSuggestionMessage(data["suggestion"], data["session_id"], data["uuid"])
    return None


def _block(data: dict[str, Any]) -> ContentBlock | None:
    kind = data.get("type")
    if kind == "text":
        return TextBlock(data["text"])
    if kind == "thinking":
        return ThinkingBlock(data["thinking"], data.get("signature", ""))
    if kind == "tool_use":
        return ToolUseBlock(data["id"], data["name"], data["input"])
    if kind == "tool_result":
        return ToolResultBlock(data["tool_use_id"], data.get("content"), data.get("is_error"))
    return None
