"""Would the model APIs accept this history? Their own validation of a request's messages.

`history_problems` checks the `messages` of a Messages API body the way Anthropic's API does,
and words each refusal as the API does (`messages.3: ...`); the fake server answers the first
one with a 400 `invalid_request_error`, so every test notices a request the real API would
refuse. The rules: at least one message; the first has the user role; no message is empty but
an optional final assistant one, and no text block is empty or only whitespace (a final
assistant message does not end with whitespace); tool_use ids are unique; each tool_use is
answered by a tool_result at the start of the very next message, and each tool_result answers a
tool_use of the message just before. Consecutive messages of one role are one turn (the API
merges them), so the pairing is judged turn by turn. Three refusals are worded here, not
quoted from the API (a tool_use in a user message, a tool_result in an assistant one, a call
answered twice): the API refuses them, the wording could not be checked against it.

`chat_problems` does the same for an OpenAI Chat Completions body: a `tool` message answers
a call of the assistant message whose tool messages it follows, and an assistant message's
calls are each answered before any other message comes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from codeloop.system.valueclass import valueclass

Block = dict[str, Any]


@valueclass
class ChatProblem:
    """An OpenAI refusal: its message and the `param` it names."""

    message: str
    param: str


def history_problems(messages: Any) -> list[str]:
    """What the Messages API would refuse in `messages`, in its words; empty when it would
    take them."""
    if messages is None:
        return ["messages: Field required"]
    if not isinstance(messages, list):
        return ["messages: Input should be a valid list"]
    if not messages:
        return ["messages: at least one message is required"]
    strays = [i for i, m in enumerate(messages) if not isinstance(m, dict)]
    if strays:
        return [f"messages.{strays[0]}: Input should be a valid dictionary"]
    problems = [*_content_problems(messages)]
    if messages[0].get("role") != "user":
        problems.append('messages: first message must use the "user" role')
    problems += _unique_id_problems(messages)
    problems += _pairing_problems(messages)
    return problems


def _blocks(message: dict[str, Any]) -> list[Block]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return [b for b in content or [] if isinstance(b, dict)]


def _content_problems(messages: list[dict[str, Any]]) -> Iterator[str]:
    last = len(messages) - 1
    for i, message in enumerate(messages):
        blocks = _blocks(message)
        final_assistant = i == last and message.get("role") == "assistant"
        if not blocks and not final_assistant:
            yield (
                f"messages.{i}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        for block in blocks:
            if block.get("type") != "text":
                continue
            text = block.get("text")
            if not text:
                yield "messages: text content blocks must be non-empty"
            elif not str(text).strip():
                yield "messages: text content blocks must contain non-whitespace text"
        tail = str(blocks[-1].get("text")) if blocks and blocks[-1].get("type") == "text" else ""
        if final_assistant and tail != tail.rstrip():
            yield "messages: final assistant content cannot end with trailing whitespace"


def _unique_id_problems(messages: list[dict[str, Any]]) -> Iterator[str]:
    seen: set[Any] = set()
    for i, message in enumerate(messages):
        for j, block in enumerate(_blocks(message)):
            if block.get("type") != "tool_use":
                continue
            if block.get("id") in seen:
                yield f"messages.{i}.content.{j}: `tool_use` ids must be unique"
            seen.add(block.get("id"))


@valueclass(frozen=False)
class _Turn:
    """Consecutive messages of one role, as the API merges them."""

    role: Any
    first: int  # index of its first message
    blocks: list[tuple[int, int, Block]]  # (message index, block index, block)


def _turns(messages: list[dict[str, Any]]) -> list[_Turn]:
    turns: list[_Turn] = []
    for i, message in enumerate(messages):
        role = message.get("role")
        if not turns or turns[-1].role != role:
            turns.append(_Turn(role, i, []))
        turns[-1].blocks += [(i, j, b) for j, b in enumerate(_blocks(message))]
    return turns


def _pairing_problems(messages: list[dict[str, Any]]) -> Iterator[str]:
    calls: dict[Any, int] = {}  # the previous turn's tool_use ids, with their message
    for turn in _turns(messages):
        leading = _leading_results(turn.blocks)
        missing = [c for c in calls if c not in leading]
        if missing:
            yield (
                f"messages.{calls[missing[0]]}: `tool_use` ids were found without "
                f"`tool_result` blocks immediately after: {', '.join(map(str, missing))}. Each "
                "`tool_use` block must have a corresponding `tool_result` block in the next "
                "message."
            )
        answered: set[Any] = set()
        for i, j, block in turn.blocks:
            kind = block.get("type")
            if kind == "tool_result":
                yield from _result_problems(turn, i, j, block.get("tool_use_id"), calls, answered)
            elif kind == "tool_use" and turn.role == "user":
                yield f"messages.{i}.content.{j}: tool_use blocks can only be in assistant messages"
        calls = {
            block.get("id"): i
            for i, _, block in turn.blocks
            if block.get("type") == "tool_use" and turn.role == "assistant"
        }
    if calls:
        ids = ", ".join(map(str, calls))
        yield (
            f"messages.{min(calls.values())}: `tool_use` ids were found without `tool_result` "
            f"blocks immediately after: {ids}. Each `tool_use` block must have a corresponding "
            "`tool_result` block in the next message."
        )


def _leading_results(blocks: list[tuple[int, int, Block]]) -> set[Any]:
    """The tool_use ids answered at the start of a turn, before anything else."""
    answered = set()
    for _, _, block in blocks:
        if block.get("type") != "tool_result":
            break
        answered.add(block.get("tool_use_id"))
    return answered


def _result_problems(
    turn: _Turn, i: int, j: int, use_id: Any, calls: dict[Any, int], answered: set[Any]
) -> Iterator[str]:
    if turn.role != "user":
        yield f"messages.{i}.content.{j}: tool_result blocks can only be in user messages"
    elif use_id not in calls:
        yield (
            f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: "
            f"{use_id}. Each `tool_result` block must have a corresponding `tool_use` block in "
            "the previous message."
        )
    elif use_id in answered:
        yield f"messages.{i}.content.{j}: `tool_use` {use_id} is answered by two `tool_result`s"
    answered.add(use_id)


def chat_problems(messages: Any) -> list[ChatProblem]:
    """What OpenAI's Chat Completions API would refuse in `messages`, in its words."""
    if not isinstance(messages, list):
        return []
    problems: list[ChatProblem] = []
    calls: list[Any] = []  # the tool_call ids of the assistant message the tool messages follow
    pending: list[Any] = []  # ... not answered yet
    answering = False  # only tool messages since that assistant message
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role == "tool":
            call_id = message.get("tool_call_id")
            if not answering:
                problems.append(_tool_without_calls(i))
            elif call_id not in calls:
                problems.append(
                    ChatProblem(
                        f"Invalid parameter: 'tool_call_id' of '{call_id}' not found in "
                        "'tool_calls' of previous message.",
                        f"messages.[{i}].tool_call_id",
                    )
                )
            if call_id in pending:
                pending.remove(call_id)
            continue
        if pending:
            problems.append(_unanswered(pending, i))
        tool_calls = message.get("tool_calls") if role == "assistant" else None
        calls = [c.get("id") for c in tool_calls or [] if isinstance(c, dict)]
        pending = list(calls)
        answering = bool(calls)
    if pending:
        problems.append(_unanswered(pending, len(messages) - 1))
    return problems


def _tool_without_calls(i: int) -> ChatProblem:
    return ChatProblem(
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
        "message with 'tool_calls'.",
        f"messages.[{i}].role",
    )


def _unanswered(pending: list[Any], i: int) -> ChatProblem:
    return ChatProblem(
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        + ", ".join(map(str, pending)),
        f"messages.[{i}].role",
    )
