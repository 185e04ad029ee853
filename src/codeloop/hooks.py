"""Command hooks from settings, in Claude Code's format, so a Claude Code user's hooks just work.

A hook is a shell command that receives one JSON object on stdin (session_id, transcript_path,
cwd, hook_event_name and the event's own fields) and answers with its exit code and output:

- exit 0: success; stdout may be a JSON object (`decision`, `reason`, `continue`, `stopReason`,
  `systemMessage`, `suppressOutput`, `hookSpecificOutput` with `permissionDecision`,
  `permissionDecisionReason`, `updatedInput`, `additionalContext`). Plain stdout of a
  UserPromptSubmit or SessionStart hook is context for the model.
- exit 2: block; stderr says why (to the model for tool and stop events, to the user otherwise).
- any other exit, or a timeout: an error shown to the user; nothing is blocked.

Every hook whose matcher fits runs, in parallel; their answers are folded into one `HookOutcome`
that the caller (session, loop, executor) acts on.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from codeloop.procs import Finished, run_bounded
from codeloop.settings import HookCommand, HookEvent, HooksConfig

PermissionBehavior = Literal["allow", "deny", "ask"]

DEFAULT_TIMEOUT = 60.0
# A Stop hook may send the model back to work this many times in one run, then the run ends:
# a hook that blocks on every stop must not keep the loop going forever.
MAX_STOP_HOOK_CONTINUATIONS = 3

# The payload field each event's matcher is tested against; other events ignore matchers.
_MATCH_FIELDS: dict[str, str] = {
    "PreToolUse": "tool_name",
    "PostToolUse": "tool_name",
    "SessionStart": "source",
    "SessionEnd": "reason",
    "PreCompact": "trigger",
    "Notification": "notification_type",
}
# Events where exit 2 (or `decision: block`) stops something; elsewhere it is only shown.
_BLOCKING = frozenset({"PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop"})
# Events whose plain stdout is context for the model.
_STDOUT_IS_CONTEXT = frozenset({"UserPromptSubmit", "SessionStart"})
_SIMPLE_MATCHER = re.compile(r"[A-Za-z0-9_|]+")
_PERMISSION_RANK: dict[PermissionBehavior, int] = {"allow": 0, "ask": 1, "deny": 2}
_LEGACY_DECISIONS: dict[str, PermissionBehavior] = {"approve": "allow", "block": "deny"}
_MODEL_LABELS = {"PreToolUse": "A PreToolUse hook blocked this tool call"}


@dataclass(frozen=True, slots=True)
class HookRun:
    """What one command did."""

    command: str
    exit_code: int | None  # None: it timed out, or could not be started
    stdout: str
    stderr: str
    timed_out: bool = False


@dataclass(frozen=True)
class HookOutcome:
    """Every matching hook's answer to one event, folded together.

    `blocked` + `reason`: stop the tool call (PreToolUse), tell the model (PostToolUse), refuse
    the prompt (UserPromptSubmit: `reason` is for the user), keep working (Stop: `reason` is the
    model's next instruction). `stop` (`continue: false`) ends the run, `stop_reason` for the
    user. `additional_context` goes to the model, `system_messages` to the user only.
    """

    event: str
    runs: tuple[HookRun, ...] = ()
    blocked: bool = False
    reason: str = ""
    permission: PermissionBehavior | None = None
    permission_reason: str = ""
    updated_input: dict[str, Any] | None = None
    additional_context: tuple[str, ...] = ()
    stop: bool = False
    stop_reason: str = ""
    system_messages: tuple[str, ...] = ()

    def for_model(self) -> str:
        """The text the model should read: why it was blocked (unless the reason is the
        user's, as for a refused prompt), then any added context."""
        parts = []
        if self.blocked and self.reason and self.event != "UserPromptSubmit":
            label = _MODEL_LABELS.get(self.event, f"{self.event} hook feedback")
            parts.append(f"{label}:\n{self.reason}")
        parts.extend(self.additional_context)
        return "\n\n".join(parts)


@dataclass
class _Fold:
    blocked: bool = False
    reasons: list[str] = field(default_factory=list)
    permission: PermissionBehavior | None = None
    permission_reason: str = ""
    updated_input: dict[str, Any] | None = None
    context: list[str] = field(default_factory=list)
    stop: bool = False
    stop_reasons: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)


class HookRunner:
    """Runs the settings' hooks for one session."""

    def __init__(
        self,
        hooks: HooksConfig,
        session_id: str,
        transcript_path: str | Path | None,
        cwd: Path,
        *,
        project_dir: Path | None = None,
        env: Mapping[str, str] | None = None,
        default_timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.hooks = hooks
        self.session_id = session_id
        self.transcript_path = str(transcript_path or "")
        self.cwd = cwd
        self.project_dir = project_dir or cwd
        self._env = {
            **(os.environ if env is None else env),
            "CLAUDE_PROJECT_DIR": str(self.project_dir),
        }
        self.default_timeout = default_timeout

    def commands(
        self,
        event: HookEvent,
        payload: Mapping[str, Any] | None = None,
        tool_name: str | None = None,
    ) -> list[HookCommand]:
        """The commands that would run, each once (the same command from two files runs once)."""
        query = tool_name if tool_name is not None else _query(event, payload or {})
        matchable = event in _MATCH_FIELDS
        seen: dict[str, HookCommand] = {}
        for entry in self.hooks.get(event, ()):
            if matchable and not matches(entry.matcher, query):
                continue
            for command in entry.hooks:
                seen.setdefault(command.command, command)
        return list(seen.values())

    async def run(
        self,
        event: HookEvent,
        payload: Mapping[str, Any] | None = None,
        tool_name: str | None = None,
    ) -> HookOutcome:
        """Run every matching hook for `event`. The common fields are added to `payload` (a `cwd`
        in `payload` wins: the shell may have moved); `tool_name` is the matcher's
        subject for tool events and is added to the payload too. Hooks run in the project
        directory."""
        commands = self.commands(event, payload, tool_name)
        if not commands:
            return HookOutcome(event)
        body: dict[str, Any] = {
            "session_id": self.session_id,
            "transcript_path": self.transcript_path,
            "cwd": str(self.cwd),
            "hook_event_name": event,
        }
        if tool_name is not None:
            body["tool_name"] = tool_name
        body.update(payload or {})
        stdin = json.dumps(body, ensure_ascii=False).encode()
        runs = await asyncio.gather(*(self._run_one(c, stdin) for c in commands))
        return _fold(event, runs)

    async def pre_compact(self, trigger: str, instructions: str | None) -> str | None:
        """The compactor's PreCompact seam: what the hooks add to the summary instructions.
        Claude Code knows two triggers; a reactive compaction is an automatic one."""
        outcome = await self.run(
            "PreCompact",
            {
                "trigger": "manual" if trigger == "manual" else "auto",
                "custom_instructions": instructions or "",
            },
        )
        return outcome.for_model() or None

    async def _run_one(self, command: HookCommand, stdin: bytes) -> HookRun:
        # In the project directory, so `.claude/hooks/x.sh` works wherever the shell has moved.
        timeout = command.timeout or self.default_timeout
        try:
            done: Finished = await run_bounded(
                command.command,
                time_limit=timeout,
                cwd=self.project_dir,
                env=self._env,
                stdin=stdin,
            )
        except OSError as exc:
            return HookRun(command.command, None, "", f"could not start: {exc}")
        if done.timed_out:
            return HookRun(command.command, None, "", f"timed out after {timeout:g} s", True)
        return HookRun(command.command, done.returncode, done.stdout, done.stderr)


def matches(matcher: str, query: str | None) -> bool:
    """Claude Code's matcher: empty or `*` matches everything, `Edit|Write` is a list of exact
    names, anything else is a regular expression searched in the name."""
    if matcher in ("", "*"):
        return True
    if query is None:
        return False
    if _SIMPLE_MATCHER.fullmatch(matcher):
        return query in (part.strip() for part in matcher.split("|"))
    try:
        return re.search(matcher, query) is not None
    except re.error:
        return False


def _query(event: str, payload: Mapping[str, Any]) -> str | None:
    name = _MATCH_FIELDS.get(event)
    value = payload.get(name) if name else None
    return value if isinstance(value, str) else None


def _fold(event: str, runs: Sequence[HookRun]) -> HookOutcome:
    fold = _Fold()
    for run in runs:
        _take(event, run, fold)
    if fold.permission == "deny":
        fold.blocked = True
        fold.reasons.append(fold.permission_reason or "Denied by a PreToolUse hook.")
    if fold.blocked and event not in _BLOCKING:
        fold.messages.extend(fold.reasons)
        fold.blocked, fold.reasons = False, []
    return HookOutcome(
        event=event,
        runs=tuple(runs),
        blocked=fold.blocked,
        reason="\n".join(r for r in fold.reasons if r),
        permission=fold.permission,
        permission_reason=fold.permission_reason,
        updated_input=fold.updated_input,
        additional_context=tuple(fold.context),
        stop=fold.stop,
        stop_reason="\n".join(fold.stop_reasons),
        system_messages=tuple(fold.messages),
    )


def _take(event: str, run: HookRun, fold: _Fold) -> None:
    label = f"{event} hook `{run.command}`"
    if run.exit_code is None:
        fold.messages.append(f"{label} {run.stderr}")
    elif run.exit_code == 2:
        fold.blocked = True
        fold.reasons.append(run.stderr.strip() or f"Blocked by {label}.")
    elif run.exit_code != 0:
        detail = run.stderr.strip() or run.stdout.strip()
        failed = f"{label} failed (exit {run.exit_code})"
        fold.messages.append(f"{failed}: {detail}" if detail else failed)
    else:
        answer = _json_object(run.stdout)
        if answer is not None:
            _take_json(event, answer, fold)
        elif event in _STDOUT_IS_CONTEXT and run.stdout.strip():
            fold.context.append(run.stdout.strip())


def _json_object(stdout: str) -> dict[str, Any] | None:
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None  # not JSON after all: plain output, as Claude Code treats it
    return data if isinstance(data, dict) else None


def _take_json(event: str, answer: Mapping[str, Any], fold: _Fold) -> None:
    specific = answer.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    if answer.get("continue") is False:
        fold.stop = True
        if stop_reason := _str(answer.get("stopReason")):
            fold.stop_reasons.append(stop_reason)
    if message := _str(answer.get("systemMessage")):
        fold.messages.append(message)
    decision = answer.get("decision")
    reason = _str(answer.get("reason"))
    if event == "PreToolUse" and decision in _LEGACY_DECISIONS:
        _permission(fold, _LEGACY_DECISIONS[decision], reason)
    elif decision == "block":
        fold.blocked = True
        fold.reasons.append(reason or f"Blocked by a {event} hook.")
    behavior = specific.get("permissionDecision")
    if event == "PreToolUse" and behavior in _PERMISSION_RANK:
        _permission(fold, behavior, _str(specific.get("permissionDecisionReason")))
    updated = specific.get("updatedInput", answer.get("updatedInput"))
    if event == "PreToolUse" and isinstance(updated, dict):
        fold.updated_input = updated
    context = _str(specific.get("additionalContext", answer.get("additionalContext")))
    if context:
        fold.context.append(context)


def _permission(fold: _Fold, behavior: PermissionBehavior, reason: str) -> None:
    """deny beats ask beats allow, whichever hook said it."""
    current = fold.permission
    if current is None or _PERMISSION_RANK[behavior] > _PERMISSION_RANK[current]:
        fold.permission, fold.permission_reason = behavior, reason


def _str(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def tool_response(
    tool_name: str, tool_input: Mapping[str, Any], text: str, is_error: bool
) -> dict[str, Any]:
    """A PostToolUse `tool_response` in the shape Claude Code's hook scripts read."""
    response: dict[str, Any] = {"content": text, "is_error": is_error, "success": not is_error}
    if tool_name == "Bash":
        response |= {"stdout": text, "stderr": "", "interrupted": False, "isImage": False}
    if isinstance(path := tool_input.get("file_path"), str):
        response["filePath"] = path
    return response
