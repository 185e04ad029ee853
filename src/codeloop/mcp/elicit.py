"""A server asking the user for input in the middle of a call (an MCP elicitation), answered as
Claude Code answers it.

Elicitation hooks may answer for the user (`hookSpecificOutput.action` / `content`; exit 2
declines). Without a hook's answer the frontend's `ask` asks the user; a run nobody watches
(`-p`) has no one to ask, so the request is cancelled and the user is told why. Then
ElicitationResult hooks see the answer and may change it (exit 2 turns it into a decline)
before it goes back to the server.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal, cast

from codeloop.hooks.hook_runner import HookOutcome, Hooks
from codeloop.system.valueclass import valueclass

if TYPE_CHECKING:  # the SDK loads with the first connection, not with the manager
    from mcp import types

Action = Literal["accept", "decline", "cancel"]
ACTIONS: frozenset[str] = frozenset({"accept", "decline", "cancel"})
Content = dict[str, Any]
# (server, the request) -> the user's action and form content; None when no one can answer.
Ask = Callable[[str, "types.ElicitRequestParams"], Awaitable[tuple[Action, Content | None]]]


@valueclass(frozen=False)
class Elicitations:
    """What a session's connections need to answer elicitations; the session sets `hooks`,
    an interactive frontend sets `ask`."""

    hooks: Hooks | None = None
    ask: Ask | None = None
    notices: list[str] = field(default_factory=list)

    async def answer(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
        from mcp import types

        mode = "url" if isinstance(params, types.ElicitRequestURLParams) else "form"
        common: dict[str, Any] = {"mcp_server_name": server, "mode": mode}
        if isinstance(params, types.ElicitRequestURLParams):
            common["elicitation_id"] = params.elicitationId
        asked = {**common, "message": params.message}
        if isinstance(params, types.ElicitRequestURLParams):
            asked["url"] = params.url
        else:
            asked["requested_schema"] = params.requestedSchema
        action, content = await self._first_answer(server, params, asked)
        if self.hooks is not None:
            result = {**common, "action": action, **({"content": content} if content else {})}
            outcome = await self.hooks.run("ElicitationResult", result)
            action, content = _override(outcome, action, content)
        return types.ElicitResult(action=action, content=content if action == "accept" else None)

    async def _first_answer(
        self, server: str, params: types.ElicitRequestParams, asked: Mapping[str, Any]
    ) -> tuple[Action, Content | None]:
        if self.hooks is not None:
            outcome = await self.hooks.run("Elicitation", asked)
            if outcome.blocked:
                return "decline", None
            if (answer := _hook_answer(outcome)) is not None:
                return answer
        if self.ask is not None:
            return await self.ask(server, params)
        self.notices.append(
            f"MCP server {server} asked for input ({params.message!r}); this run has no one to "
            "ask (an Elicitation hook can answer), so the request was cancelled"
        )
        return "cancel", None


def _hook_answer(outcome: HookOutcome) -> tuple[Action, Content | None] | None:
    for specific in reversed(outcome.specific):
        action = specific.get("action")
        if action in ACTIONS:
            content = specific.get("content")
            return cast(Action, action), content if isinstance(content, dict) else None
    return None


def _override(
    outcome: HookOutcome, action: Action, content: Content | None
) -> tuple[Action, Content | None]:
    if outcome.blocked:
        return "decline", None
    answer = _hook_answer(outcome)
    if answer is None:
        return action, content
    new_action, new_content = answer
    return new_action, new_content if new_content is not None else content
