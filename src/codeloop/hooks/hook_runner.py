"""Hooks from settings, plugins, agents and skills, in Claude Code's format, so a Claude Code
user's hooks just work.

A hook receives one JSON object (session_id, transcript_path, cwd, permission_mode,
hook_event_name and the event's own fields: on stdin for a command, as the body of a POST for
an http hook, as `$ARGUMENTS` for a prompt hook) and answers with its exit code and output:

- exit 0: success; stdout may be a JSON object (`decision`, `reason`, `continue`, `stopReason`,
  `systemMessage`, `hookSpecificOutput` with `permissionDecision`, `updatedInput`,
  `additionalContext`, ...). Plain stdout of a UserPromptSubmit or SessionStart hook is context
  for the model.
- exit 2: block; the JSON's reason or stderr says why (to the model for tool and stop events,
  to the user otherwise).
- any other exit: a JSON object still decides; without one it is an error shown to the user
  and nothing is blocked. A timeout decides nothing.

Every hook whose matcher (and `if` rule) fits runs, in parallel, the same handler once; their
answers fold into one `HookOutcome` that the caller (session, loop, executor) acts on. Async
hooks run in the background and their context reaches the model on the next turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any, Literal, Protocol

from codeloop.hooks.hook_config import HookCommand, HooksConfig, is_plain_matcher, merge_hooks
from codeloop.hooks.hook_events import TOOL_EVENTS, spec_of
from codeloop.hooks.hook_handlers import (
    HookRun,
    HttpPolicy,
    Judge,
    ensure_file,
    hook_env,
    run_callback,
    run_command,
    run_http,
    run_prompt,
)
from codeloop.hooks.hook_watch import ConfigFiles, FileWatch, matcher_files
from codeloop.system.jsonfile import written_here
from codeloop.system.valueclass import valueclass
from codeloop.tool_names import spellings

PermissionBehavior = Literal["allow", "deny", "ask"]
# (rule, tool name, tool input, cwd) -> whether the handler's `if` rule matches the call.
IfMatcher = Callable[[str, str, Mapping[str, Any], Path], bool]

# A Stop hook may send the model back to work this many times in a row, then the run ends
# (Claude Code's cap): a hook that blocks on every stop must not keep the loop going forever.
MAX_STOP_HOOK_CONTINUATIONS = 8

_PERMISSION_RANK: dict[PermissionBehavior, int] = {"allow": 0, "ask": 1, "deny": 2}
_LEGACY_DECISIONS: dict[str, PermissionBehavior] = {"approve": "allow", "block": "deny"}
_MODEL_LABELS = {"PreToolUse": "A PreToolUse hook blocked this tool call"}
# Events whose hooks answer with `permissionDecision` (allow, ask, deny).
_DECIDERS = frozenset({"PreToolUse", "PreModelSwitch"})
# Events a hook that times out refuses (Claude Code's: a model switch is not made unchecked).
_TIMEOUT_REFUSES = frozenset({"PreModelSwitch"})
# Events whose `continue` Claude Code discards (they cannot stop anything).
_NO_CONTINUE = frozenset({"CwdChanged", "FileChanged", "DirectoryAdded"})
# Events whose hooks may return `watchPaths`, the files FileChanged watches besides its own.
_WATCH_SETTERS = frozenset({"SessionStart", "CwdChanged", "FileChanged"})
# Events whose exit 2 is feedback for the model (the tool already ran).
_FEEDBACK = frozenset({"PostToolUse", "PostToolUseFailure"})
# Events whose systemMessage and `continue` Claude Code discards.
_QUIET = frozenset(
    {
        "Notification",
        "StopFailure",
        "InstructionsLoaded",
        "SessionEnd",
        "PreCompact",
        "PostCompact",
        "MessageDisplay",
        "ConfigChange",
        "WorktreeRemove",
        "Elicitation",
        "ElicitationResult",
    }
)


@valueclass
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
    # PostToolUse `updatedToolOutput`: what the model sees instead of the tool's output.
    updated_output: Any = None
    # PermissionRequest: a hook's `decision` (behavior allow/deny, message, interrupt).
    request_behavior: Literal["allow", "deny"] | None = None
    request_message: str = ""
    interrupt: bool = False
    # Each hook's `hookSpecificOutput`, in order, for the event's own fields (an elicitation's
    # `action`/`content`, FileChanged's `watchPaths`, ...).
    specific: tuple[Mapping[str, Any], ...] = ()
    # The hooks that failed or timed out (also first among `system_messages`).
    errors: tuple[str, ...] = ()

    def for_model(self) -> str:
        """The text the model should read: why it was blocked (unless the reason is the
        user's, as for a refused prompt), then any added context."""
        parts = []
        if self.blocked and self.reason and self.event != "UserPromptSubmit":
            label = _MODEL_LABELS.get(self.event, f"{self.event} hook feedback")
            parts.append(f"{label}:\n{self.reason}")
        parts.extend(self.additional_context)
        return "\n\n".join(parts)


@valueclass(frozen=False)
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
    # Hooks that failed or timed out: always shown to the user.
    errors: list[str] = field(default_factory=list)
    updated_output: Any = None
    request_behavior: Literal["allow", "deny"] | None = None
    request_message: str = ""
    interrupt: bool = False
    specific: list[Mapping[str, Any]] = field(default_factory=list)


@valueclass(frozen=False)
class _Shared:
    """What a session's runner and its sub-agents' runners share."""

    background: set[asyncio.Task[None]] = field(default_factory=set)
    # Context from async hooks that finished, for the model's next turn.
    pending: list[str] = field(default_factory=list)
    fired_once: set[tuple[Any, ...]] = field(default_factory=set)
    added: list[HooksConfig] = field(default_factory=list)
    watch: FileWatch = field(default_factory=FileWatch)
    # Changed config files the user was told about (once each).
    told: set[Path] = field(default_factory=set)


class Hooks(Protocol):
    """What the loop and the executor need of hooks: run the matching ones for an event."""

    async def run(
        self,
        event: str,
        payload: Mapping[str, Any] | None = None,
        tool_name: str | None = None,
    ) -> HookOutcome: ...

    def take_async_context(self) -> list[str]: ...

    async def check_watched(self) -> list[str]: ...


class HookRunner:
    """Runs the configured hooks for one session (or, through `for_agent`, one sub-agent)."""

    def __init__(
        self,
        hooks: HooksConfig,
        session_id: str,
        transcript_path: str | Path | None,
        cwd: Path,
        *,
        project_dir: Path | None = None,
        env: Mapping[str, str] | None = None,
        default_timeout: float | None = None,
        permission_mode: Callable[[], str] | None = None,
        judge: Judge | None = None,
        if_matcher: IfMatcher | None = None,
        http: HttpPolicy | None = None,
        env_file: Path | None = None,
        config_files: ConfigFiles | None = None,
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
        self.permission_mode = permission_mode or (lambda: "default")
        self.judge = judge
        # Agent hooks: a read-only sub-agent investigates before it answers (set by the
        # session's assembly, which can run agents).
        self.agent_judge: Judge | None = None
        self.if_matcher = if_matcher
        self.http = http or HttpPolicy()
        self.env_file = env_file
        self.agent: dict[str, str] = {}
        self._shared = _Shared()
        watched = [g.matcher for g in hooks.get("FileChanged", ())]
        self._shared.watch = FileWatch(matcher_files(watched, cwd), config_files)

    # --- the configuration ------------------------------------------------------------------

    def for_agent(self, agent_id: str, agent_type: str, hooks: HooksConfig) -> HookRunner:
        """The runner a sub-agent uses: the session's hooks plus its own (its Stop hooks fire
        as SubagentStop), and agent_id/agent_type in every input."""
        own = dict(hooks)
        if "Stop" in own:
            own["SubagentStop"] = (*own.get("SubagentStop", ()), *own.pop("Stop"))
        child = HookRunner.__new__(HookRunner)
        child.__dict__.update(self.__dict__)
        child.hooks = merge_hooks(self.hooks, own)
        child.agent = {"agent_id": agent_id, "agent_type": agent_type}
        return child

    def add(self, hooks: HooksConfig) -> None:
        """Hooks that apply from now on (a skill's, once it is invoked)."""
        self._shared.added.append(hooks)

    @property
    def config(self) -> HooksConfig:
        return merge_hooks(self.hooks, *self._shared.added)

    def configured(self, event: str) -> bool:
        return bool(self.config.get(event))

    def commands(
        self,
        event: str,
        payload: Mapping[str, Any] | None = None,
        tool_name: str | None = None,
    ) -> list[HookCommand]:
        """The handlers that would run, each once (the same one from two files runs once)."""
        payload = payload or {}
        spec = spec_of(event)
        query = tool_name if tool_name is not None else _query(spec.matcher_field, payload)
        seen: dict[tuple[Any, ...], HookCommand] = {}
        # A matcher naming a tool's earlier name (Task for Agent) fires for it too.
        names = spellings(query) if query is not None else (query,)
        for entry in self.config.get(event, ()):
            if spec.matcher_field is not None and not any(matches(entry.matcher, n) for n in names):
                continue
            for command in entry.hooks:
                if command.once and command.key in self._shared.fired_once:
                    continue
                if command.if_ is not None and not self._if_matches(event, command, payload):
                    continue
                seen.setdefault(command.key, command)
        return list(seen.values())

    def _if_matches(self, event: str, command: HookCommand, payload: Mapping[str, Any]) -> bool:
        if event not in TOOL_EVENTS:
            return False  # Claude Code: a handler with `if` never runs on other events
        if self.if_matcher is None or command.if_ is None:
            return True
        tool_input = payload.get("tool_input")
        cwd = Path(str(payload.get("cwd") or self.cwd))
        try:
            return self.if_matcher(
                command.if_,
                str(payload.get("tool_name", "")),
                tool_input if isinstance(tool_input, dict) else {},
                cwd,
            )
        except Exception:
            return True  # the filter fails open, as Claude Code's does

    # --- running ----------------------------------------------------------------------------

    async def run(
        self,
        event: str,
        payload: Mapping[str, Any] | None = None,
        tool_name: str | None = None,
    ) -> HookOutcome:
        """Run every matching hook for `event`. The common fields are added to `payload` (a `cwd`
        in `payload` wins: the shell may have moved); `tool_name` is the matcher's
        subject for tool events and is added to the payload too. Hooks run in the project
        directory."""
        body: dict[str, Any] = {
            "session_id": self.session_id,
            "transcript_path": self.transcript_path,
            "cwd": str(self.cwd),
            "permission_mode": self.permission_mode(),
            "hook_event_name": event,
            **self.agent,
        }
        if tool_name is not None:
            body["tool_name"] = tool_name
        body.update(payload or {})
        commands = self.commands(event, body, tool_name)
        if not commands:
            return HookOutcome(event)
        for command in commands:
            if command.once:
                self._shared.fired_once.add(command.key)
        data = json.dumps(body, ensure_ascii=False).encode()
        waited = [c for c in commands if not c.async_]
        for command in commands:
            if command.async_:
                self._start_async(event, command, body, data)
        runs = await asyncio.gather(*(self._run_one(event, c, body, data) for c in waited))
        outcome = _fold(event, list(zip(waited, runs, strict=True)))
        if event in _WATCH_SETTERS:
            for specific in outcome.specific:
                if isinstance(paths := specific.get("watchPaths"), list):
                    self._shared.watch.set_dynamic(str(p) for p in paths)
        return outcome

    async def _run_one(
        self, event: str, hook: HookCommand, body: Mapping[str, Any], data: bytes
    ) -> HookRun:
        spec = spec_of(event)
        timeout = hook.timeout or self.default_timeout or spec.default_timeout
        if hook.type == "callback":
            return await run_callback(hook, body, time_limit=timeout)
        extra = {}
        if spec.env_file and self.env_file is not None:
            ensure_file(self.env_file)
            extra["CLAUDE_ENV_FILE"] = str(self.env_file)
        env = hook_env(self._env, hook, extra)
        if hook.type == "http":
            return await run_http(hook, data, time_limit=timeout, env=env, policy=self.http)
        if hook.type in ("prompt", "agent"):
            judge = self.agent_judge if hook.type == "agent" else self.judge
            try:
                return await asyncio.wait_for(run_prompt(hook, body, judge), timeout)
            except TimeoutError:
                return HookRun(hook.label, None, "", f"timed out after {timeout:g} s", True)
        # In the project directory, so `.claude/hooks/x.sh` works wherever the shell has moved.
        return await run_command(hook, data, time_limit=timeout, cwd=self.project_dir, env=env)

    def _start_async(
        self, event: str, hook: HookCommand, body: Mapping[str, Any], data: bytes
    ) -> None:
        async def background() -> None:
            run = await self._run_one(event, hook, body, data)
            outcome = _fold(event, [(hook, run)])
            texts = [*outcome.additional_context, *outcome.system_messages]
            if hook.async_rewake and run.exit_code == 2:
                texts.append(run.stderr.strip() or run.stdout.strip())
            for text in texts:
                if text:
                    self._shared.pending.append(f"Async {event} hook `{hook.label}`: {text}")

        task = asyncio.create_task(background(), name=f"hook:{event}")
        self._shared.background.add(task)
        task.add_done_callback(self._shared.background.discard)

    def take_async_context(self) -> list[str]:
        """What async hooks that finished since the last call say to the model."""
        pending, self._shared.pending[:] = list(self._shared.pending), []
        return pending

    async def check_watched(self) -> list[str]:
        """FileChanged and ConfigChange for what changed since the last check; returns what
        the user should read."""
        watch, messages = self._shared.watch, list[str]()
        for path, change in watch.file_changes():
            outcome = await self.run("FileChanged", {"file_path": str(path), "event": change})
            messages += outcome.system_messages
        for path, source in watch.config_changes():
            outcome = await self.run("ConfigChange", {"source": source, "file_path": str(path)})
            # A blocked change stays quiet (Claude Code's contract); policy cannot be blocked;
            # codeloop's own write (an "always allow" rule) is in effect already.
            quiet = outcome.blocked and source != "policy_settings"
            if not quiet and not written_here(path) and path not in self._shared.told:
                self._shared.told.add(path)
                messages.append(
                    f"{path} changed during the session; codeloop reads settings and skills "
                    "when a session starts, so the change applies from the next session"
                )
        return messages

    async def aclose(self) -> None:
        """End the session's background hooks (a headless run does not wait for them)."""
        tasks = list(self._shared.background)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    # --- seams for the context pipeline ----------------------------------------------------

    async def pre_compact(self, trigger: str, instructions: str | None) -> HookOutcome:
        """The compactor's PreCompact seam: a block refuses the compaction, what the hooks say
        to the model is added to the summary instructions. Claude Code knows two triggers; a
        reactive compaction is an automatic one."""
        return await self.run(
            "PreCompact",
            {
                "trigger": "manual" if trigger == "manual" else "auto",
                "custom_instructions": instructions or "",
            },
        )

    async def post_compact(self, trigger: str, summary: str) -> HookOutcome:
        """The compactor's PostCompact seam, with the summary it made."""
        trigger = "manual" if trigger == "manual" else "auto"
        return await self.run("PostCompact", {"trigger": trigger, "compact_summary": summary})


_MEMORY_TYPES = {"managed": "Managed", "user": "User", "project": "Project", "local": "Local"}


async def instructions_loaded(runner: HookRunner, loaded: Any) -> None:
    """InstructionsLoaded for one memory file (a context/memory.py MemoryFile)."""
    payload: dict[str, Any] = {
        "file_path": str(loaded.path),
        "memory_type": _MEMORY_TYPES.get(loaded.kind, "Project"),
        "load_reason": loaded.reason,
    }
    if loaded.globs:
        payload["globs"] = list(loaded.globs)
    if loaded.trigger is not None:
        payload["trigger_file_path"] = str(loaded.trigger)
    if loaded.imported_from is not None:
        payload["parent_file_path"] = str(loaded.imported_from)
    await runner.run("InstructionsLoaded", payload)


def matches(matcher: str, query: str | None) -> bool:
    """Claude Code's matcher: empty or `*` matches everything, `Edit|Write` (or `Edit, Write`)
    is a list of exact names, anything else is a regular expression searched in the name."""
    if matcher in ("", "*"):
        return True
    if query is None:
        return False
    if is_plain_matcher(matcher):
        return query in (part.strip() for part in re.split(r"[|,]", matcher))
    try:
        return re.search(matcher, query) is not None
    except re.error:
        return False


def _query(name: str | None, payload: Mapping[str, Any]) -> str | None:
    value = payload.get(name) if name else None
    if name == "file_path" and isinstance(value, str):
        return Path(value).name
    return value if isinstance(value, str) else None


def _fold(event: str, runs: Sequence[tuple[HookCommand, HookRun]]) -> HookOutcome:
    fold = _Fold()
    for hook, run in runs:
        _take(event, hook, run, fold)
    if fold.permission == "deny":
        fold.blocked = True
        fold.reasons.append(fold.permission_reason or f"Denied by a {event} hook.")
    spec = spec_of(event)
    if fold.blocked and not (spec.blocks or event in _FEEDBACK):
        fold.errors.extend(fold.reasons)
        fold.blocked, fold.reasons = False, []
    if event in _QUIET:
        fold.messages, fold.stop = [], False
    if event in _NO_CONTINUE:
        fold.stop = False
    return HookOutcome(
        event=event,
        runs=tuple(run for _, run in runs),
        blocked=fold.blocked,
        reason="\n".join(r for r in fold.reasons if r),
        permission=fold.permission,
        permission_reason=fold.permission_reason,
        updated_input=fold.updated_input,
        additional_context=tuple(fold.context),
        stop=fold.stop,
        stop_reason="\n".join(fold.stop_reasons),
        system_messages=(*fold.errors, *fold.messages),
        updated_output=fold.updated_output,
        request_behavior=fold.request_behavior,
        request_message=fold.request_message,
        interrupt=fold.interrupt,
        specific=tuple(fold.specific),
        errors=tuple(fold.errors),
    )


def _take(event: str, hook: HookCommand, run: HookRun, fold: _Fold) -> None:
    label = f"{event} hook `{run.command}`"
    if run.exit_code is None:
        fold.errors.append(f"{label} {run.stderr}")
        if run.timed_out and event in _TIMEOUT_REFUSES:
            fold.blocked = True
            fold.reasons.append(f"{label} timed out")
        return
    answer = _json_object(run.stdout)
    if run.exit_code == 2:
        if event == "PermissionRequest":
            return  # exit 2 is not honoured here; only the decision object decides
        if answer is not None:
            _take_json(event, hook, answer, fold)
        fold.blocked = True
        reason = _str(answer.get("reason")) if answer else ""
        fold.reasons.append(reason or run.stderr.strip() or f"Blocked by {label}.")
    elif answer is not None:
        _take_json(event, hook, answer, fold)
    elif run.exit_code != 0:
        detail = (run.stderr.strip() or run.stdout.strip()).splitlines()
        failed = f"{label} error: Failed with non-blocking status code {run.exit_code}"
        fold.errors.append(f"{failed}: {detail[0]}" if detail else failed)
    elif spec_of(event).stdout_is_context and run.stdout.strip():
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


def _take_json(event: str, hook: HookCommand, answer: Mapping[str, Any], fold: _Fold) -> None:
    verdict = answer.get("_prompt_verdict")
    if isinstance(verdict, dict):
        _take_verdict(event, hook, verdict, fold)
        return
    specific = answer.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    if specific:
        fold.specific.append(specific)
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
    if event in _DECIDERS and behavior in _PERMISSION_RANK:
        _permission(fold, behavior, _str(specific.get("permissionDecisionReason")))
    elif event == "PreToolUse" and behavior == "defer":
        fold.messages.append("a PreToolUse hook answered defer, which codeloop does not support")
    updated = specific.get("updatedInput", answer.get("updatedInput"))
    if event == "PreToolUse" and isinstance(updated, dict):
        fold.updated_input = updated
    request = specific.get("decision")
    if event == "PermissionRequest" and isinstance(request, dict):
        _take_request(request, fold)
    if event == "PostToolUse":
        output = specific.get("updatedToolOutput", specific.get("updatedMCPToolOutput"))
        if output is not None:
            fold.updated_output = output
    context = _str(specific.get("additionalContext", answer.get("additionalContext")))
    if context:
        fold.context.append(context)


def _take_request(request: Mapping[str, Any], fold: _Fold) -> None:
    behavior = request.get("behavior")
    if behavior == "deny":
        fold.request_behavior = "deny"
        fold.request_message = _str(request.get("message"))
        fold.interrupt = request.get("interrupt") is True
    elif behavior == "allow" and fold.request_behavior != "deny":
        fold.request_behavior = "allow"
        if isinstance(request.get("updatedInput"), dict):
            fold.updated_input = dict(request["updatedInput"])


def _take_verdict(event: str, hook: HookCommand, verdict: Mapping[str, Any], fold: _Fold) -> None:
    """A prompt hook's `{"ok": false, "reason": ...}`, acted on as Claude Code does per event."""
    if verdict.get("ok") is not False:
        return
    reason = _str(verdict.get("reason")) or f"a {event} prompt hook said no"
    if event in ("Stop", "SubagentStop"):
        if verdict.get("impossible") is not True or hook.type == "agent":
            fold.blocked = True
            fold.reasons.append(reason)
    elif event == "PreToolUse":
        _permission(fold, "deny", reason)
        if not hook.continue_on_block:
            fold.stop = True
            fold.stop_reasons.append(reason)
    elif event == "PostToolUse" and hook.continue_on_block:
        fold.blocked = True
        fold.reasons.append(reason)
    elif event in ("PostToolUse", "PostToolBatch", "UserPromptSubmit"):
        fold.stop = True
        fold.stop_reasons.append(reason)
        fold.messages.append(f"{event} prompt hook: {reason}")
        if event == "UserPromptSubmit":
            fold.blocked = True
            fold.reasons.append(reason)
    elif event == "PostToolUseFailure":
        fold.context.append(reason)


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


def updated_text(output: Any) -> str | None:
    """The text a PostToolUse `updatedToolOutput` gives the model: a string as is, or the
    output field of a tool's result object (Bash's `stdout`, a file tool's `content`)."""
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        for key in ("stdout", "content", "output", "result", "text"):
            if isinstance(output.get(key), str):
                return str(output[key])
    return None
