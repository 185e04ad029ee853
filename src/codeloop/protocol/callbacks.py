"""The SDK's callbacks as codeloop's own seams, in the Agent SDK's wire shapes: a permission
callback becomes the front door's permission answer (the policy's `ask_user`), hook callbacks
become hooks of type "callback".

Both frontends use them: the CLI side of the protocol, whose callbacks are control requests
to the SDK, and the in-process API (api.py), whose callbacks are Python functions answering in
the same shapes. A callback that raises, answers nonsense or runs out of time denies the call,
with the reason; it never hangs the run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from codeloop.errors import UsageError
from codeloop.frontdoor import Conversation
from codeloop.hooks.hook_config import HookCallback, HookCommand, HookMatcher, HooksConfig
from codeloop.hooks.hook_events import EVENTS
from codeloop.permissions.modes import PERMISSION_MODES
from codeloop.permissions.policy import Answer, AskUser, PermissionRequest

# (tool name, input, the request's other fields) -> the SDK's answer:
# {"behavior": "allow", "updatedInput": {...}, "updatedPermissions": [...]} or
# {"behavior": "deny", "message": "...", "interrupt": true}.
Decide = Callable[[str, dict[str, Any], dict[str, Any]], Awaitable[Mapping[str, Any]]]
# (callback id, the hook's input, its tool_use_id) -> the hook's output object.
CallHook = Callable[[str, dict[str, Any], str | None], Awaitable[Any]]

# Seconds a permission callback may take (a person may be answering it), and a hook
# callback by default (Claude Code's): past that, a denial, or no decision.
PERMISSION_TIMEOUT = 600.0
HOOK_TIMEOUT = 60.0


def permission_prompt(
    decide: Decide, conversation: Conversation, *, timeout: float = PERMISSION_TIMEOUT
) -> AskUser:
    """The conversation's permission answer: each call that would be asked goes to `decide`,
    and the permission updates its answer carries apply to `conversation`."""

    async def ask(request: PermissionRequest) -> Answer:
        fields: dict[str, Any] = {
            "tool_use_id": request.tool_use_id,
            "permission_suggestions": suggestions(request),
            "decision_reason": request.decision.explain(),
            "display_name": request.tool_name,
        }
        try:
            answer = await asyncio.wait_for(
                decide(request.tool_name, dict(request.input), fields), timeout
            )
        except TimeoutError:
            return Answer("deny", f"the permission callback did not answer within {timeout:g} s")
        except Exception as exc:
            return Answer("deny", f"Tool permission request failed: {_said(exc)}")
        return to_answer(answer, request, conversation)

    return ask


def to_answer(answer: Any, request: PermissionRequest, conversation: Conversation) -> Answer:
    """The SDK's allow / deny object as the policy's Answer (permission updates applied)."""
    if not isinstance(answer, Mapping):
        return Answer("deny", f"the permission callback answered {type(answer).__name__}")
    behavior = answer.get("behavior")
    if behavior == "allow":
        updated = answer.get("updatedInput")
        if updated is not None and not isinstance(updated, dict):
            return Answer("deny", "the permission callback's updatedInput is not an object")
        problem = apply_updates(conversation, answer.get("updatedPermissions"))
        if problem:
            return Answer("deny", f"the permission callback's updatedPermissions: {problem}")
        if updated is None or updated == request.input:
            return Answer("allow_once")
        return Answer("allow_once", updated_input=dict(updated))
    if behavior == "deny":
        message = str(answer.get("message") or "denied by the permission callback")
        return Answer("deny", message, interrupt=answer.get("interrupt") is True)
    return Answer("deny", f"the permission callback answered behavior {behavior!r}")


def suggestions(request: PermissionRequest) -> list[dict[str, Any]]:
    """Rules that would allow the call, as the SDK's permission update objects."""
    return request.decision.suggested_updates("session")


def apply_updates(conversation: Conversation, updates: Any) -> str | None:
    """An allow's `updatedPermissions`, for the rest of the session (codeloop keeps them in
    no settings file, whatever their destination); a problem with them, or None."""
    if updates is None:
        return None
    policy = conversation.session.config.policy
    if not isinstance(updates, list):
        return "expected a list"
    for update in updates:
        if not isinstance(update, dict):
            return "expected objects"
        kind = update.get("type")
        if kind in ("addRules", "replaceRules"):
            behavior = update.get("behavior")
            if behavior not in ("allow", "deny", "ask"):
                return f"behavior {behavior!r}"
            texts = [_rule_text(r) for r in update.get("rules") or [] if isinstance(r, dict)]
            policy.add_rules(behavior, [t for t in texts if t], "the SDK's permission update")
        elif kind == "setMode":
            mode = update.get("mode")
            if mode not in PERMISSION_MODES:  # the SDK's own names only, no alias
                return f"mode {mode!r}"
            try:
                conversation.set_mode(mode)
            except UsageError:  # auto mode, which the settings disable
                return f"mode {mode!r}"
        # removeRules and directory changes: nothing codeloop keeps for a session to undo.
    return None


def callback_hooks(raw: Any, call: CallHook) -> tuple[HooksConfig, list[str]]:
    """`initialize.hooks` ({event: [{matcher, hookCallbackIds, timeout, onFailure}]}) as hooks
    of type "callback"; and a warning for each entry codeloop cannot use."""
    if raw is None:
        return {}, []
    if not isinstance(raw, dict):
        return {}, ["initialize: hooks is not an object; ignored"]
    config: dict[str, tuple[HookMatcher, ...]] = {}
    warnings: list[str] = []
    for event, entries in raw.items():
        if event not in EVENTS or not isinstance(entries, list):
            warnings.append(f"initialize: hooks for {event!r} cannot be used; ignored")
            continue
        groups = []
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            ids = [str(i) for i in entry.get("hookCallbackIds") or []]
            timeout = entry.get("timeout")
            commands = tuple(
                callback_command(
                    callback_id,
                    _forwarding(call, callback_id),
                    timeout=float(timeout) if isinstance(timeout, int | float) else None,
                    on_failure=entry.get("onFailure"),
                )
                for callback_id in ids
            )
            if commands:
                groups.append(HookMatcher(str(entry.get("matcher") or ""), commands))
        if groups:
            config[event] = tuple(groups)
    return config, warnings


def callback_command(
    name: str, callback: HookCallback, *, timeout: float | None = None, on_failure: Any = None
) -> HookCommand:
    """One function hook. Like the SDK's CLI, an unknown onFailure blocks."""
    return HookCommand(
        type="callback",
        command=name,
        timeout=timeout or HOOK_TIMEOUT,
        callback=callback,
        on_failure="continue" if on_failure in (None, "continue") else "block",
    )


def _forwarding(call: CallHook, callback_id: str) -> HookCallback:
    async def forward(body: dict[str, Any]) -> Any:
        tool_use_id = body.get("tool_use_id")
        return await call(callback_id, body, tool_use_id if isinstance(tool_use_id, str) else None)

    return forward


def _rule_text(rule: dict[str, Any]) -> str:
    tool = str(rule.get("toolName") or "")
    content = rule.get("ruleContent")
    return f"{tool}({content})" if tool and content else tool


def _said(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"Error: {text}" if text else type(exc).__name__
