"""Would the Messages API accept this history? The rules a resumed session most easily breaks.

Checks the `messages` of an Anthropic request body: the first message is the user's, none is
empty, tool_use ids are unique, and every tool_use is answered exactly once by a tool_result at
the start of the very next (user) message, which answers nothing else. Consecutive messages of
one role are allowed: the API merges them.
"""

from __future__ import annotations

from typing import Any


def history_problems(messages: list[dict[str, Any]]) -> list[str]:
    """What is wrong with `messages`, one line each; empty when the API would take them."""
    if not messages:
        return ["no messages"]
    problems = []
    if messages[0].get("role") != "user":
        problems.append("the first message is not the user's")
    seen: set[str] = set()
    calls: list[str] = []  # the previous message's tool_use ids
    for i, message in enumerate(messages):
        blocks = _blocks(message)
        if not blocks:
            problems.append(f"message {i} is empty")
        uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        results = [b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"]
        if message.get("role") == "assistant" and results:
            problems.append(f"message {i}: tool_result in an assistant message")
        if message.get("role") == "user" and uses:
            problems.append(f"message {i}: tool_use in a user message")
        problems += [f"message {i}: tool_use id {u} used before" for u in uses if u in seen]
        seen.update(uses)
        problems += _answer_problems(i, blocks, calls, results)
        calls = uses
    if calls:
        problems.append(f"the last message calls tools no result answers: {calls}")
    return problems


def _answer_problems(
    i: int, blocks: list[dict[str, Any]], calls: list[str], results: list[str]
) -> list[str]:
    problems = []
    missing = [c for c in calls if c not in results]
    if missing:
        problems.append(f"message {i}: no tool_result for {missing}")
    orphans = [r for r in results if r not in calls]
    if orphans:
        problems.append(f"message {i}: tool_result for no call of the message before: {orphans}")
    if len(set(results)) != len(results):
        problems.append(f"message {i}: a tool_use answered twice")
    first_other = next(
        (j for j, b in enumerate(blocks) if b.get("type") != "tool_result"), len(blocks)
    )
    if any(b.get("type") == "tool_result" for b in blocks[first_other:]):
        problems.append(f"message {i}: other content before the tool results")
    return problems


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content or [])
