"""Every hook event Claude Code documents, and what each one means to a hook.

A leaf vocabulary (it imports nothing of ours): the settings parser checks event names against
it, and the runner reads each event's matcher field, blocking power and defaults from it.
codeloop fires every one of them.
"""

from __future__ import annotations

from typing import Literal

from codeloop.system.valueclass import valueclass

HookType = Literal["command", "http", "prompt", "agent", "mcp_tool"]
ALL_TYPES: frozenset[str] = frozenset({"command", "http", "prompt", "agent", "mcp_tool"})
_NO_MODEL = frozenset({"command", "http", "mcp_tool"})
_COMMAND_ONLY = frozenset({"command", "mcp_tool"})


@valueclass
class EventSpec:
    name: str
    # The input field the matcher is tested against; None: the event ignores matchers.
    matcher_field: str | None = None
    # Exit 2 (or `decision: block`) stops something; elsewhere it is only shown to the user.
    blocks: bool = False
    # Plain stdout of a successful hook is context for the model.
    stdout_is_context: bool = False
    # Hook types the event runs (Claude Code's table); others are refused with a warning.
    types: frozenset[str] = ALL_TYPES
    # Seconds for command/http hooks when the hook sets no `timeout`.
    default_timeout: float = 600.0
    # The hook gets CLAUDE_ENV_FILE: what it exports reaches every later Bash command.
    env_file: bool = False


_TOOL = "tool_name"

EVENTS: dict[str, EventSpec] = {
    spec.name: spec
    for spec in (
        EventSpec(
            "SessionStart", "source", stdout_is_context=True, types=_COMMAND_ONLY, env_file=True
        ),
        EventSpec("Setup", "trigger", types=_COMMAND_ONLY, env_file=True),
        EventSpec("InstructionsLoaded", "load_reason", types=_NO_MODEL),
        EventSpec("UserPromptSubmit", blocks=True, stdout_is_context=True, default_timeout=30.0),
        EventSpec("UserPromptExpansion", "command_name", blocks=True, stdout_is_context=True),
        EventSpec("MessageDisplay", types=_NO_MODEL, default_timeout=10.0),
        EventSpec("PreToolUse", _TOOL, blocks=True),
        EventSpec("PermissionRequest", _TOOL),
        EventSpec("PermissionDenied", _TOOL),
        EventSpec("PostToolUse", _TOOL),
        EventSpec("PostToolUseFailure", _TOOL),
        EventSpec("PostToolBatch", blocks=True),
        EventSpec("Notification", "notification_type", types=_NO_MODEL),
        EventSpec("SubagentStart", "agent_type", types=_NO_MODEL),
        EventSpec("SubagentStop", "agent_type", blocks=True),
        EventSpec("TaskCreated", blocks=True),
        EventSpec("TaskCompleted", blocks=True),
        EventSpec("Stop", blocks=True),
        EventSpec("StopFailure", "error", types=_NO_MODEL),
        EventSpec("TeammateIdle", blocks=True),
        EventSpec("ConfigChange", "source", blocks=True, types=_NO_MODEL),
        EventSpec("CwdChanged", types=_NO_MODEL, env_file=True),
        EventSpec("DirectoryAdded", "source", types=_NO_MODEL),
        EventSpec("FileChanged", "file_path", types=_NO_MODEL, env_file=True),
        EventSpec("WorktreeCreate", blocks=True, types=_NO_MODEL),
        EventSpec("WorktreeRemove", types=_NO_MODEL),
        EventSpec("PreCompact", "trigger", blocks=True, types=_NO_MODEL),
        EventSpec("PostCompact", "trigger", types=_NO_MODEL),
        EventSpec("Elicitation", "mcp_server_name", blocks=True, types=_NO_MODEL),
        EventSpec("ElicitationResult", "mcp_server_name", blocks=True, types=_NO_MODEL),
        EventSpec("SessionEnd", "reason", types=_NO_MODEL, default_timeout=1.5),
        # A switch someone asked for; a hook that times out refuses it too.
        EventSpec("PreModelSwitch", "to_model", blocks=True, default_timeout=30.0),
        # After every switch, the fallback model's too.
        EventSpec("PostModelSwitch", "to_model", stdout_is_context=True, default_timeout=30.0),
    )
}
HOOK_EVENTS: tuple[str, ...] = tuple(EVENTS)
# Tool events evaluate a handler's `if` rule; on any other event a handler with `if` never runs.
TOOL_EVENTS = frozenset(
    {"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied"}
)


def spec_of(event: str) -> EventSpec:
    return EVENTS.get(event) or EventSpec(event)
