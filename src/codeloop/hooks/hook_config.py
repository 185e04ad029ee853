"""Hook configuration in Claude Code's shape, from a settings file, a plugin's hooks.json or an
agent's or skill's frontmatter: events → matcher groups → handlers.

One parser serves every source. What is valid is kept and everything else is reported through
`warn`, naming the place, so one typo never costs the user their other hooks; a handler whose
type codeloop cannot run on a blocking event is called out as a lost safeguard. The caller
judges each problem by its place (settings_safety.py: on an event that can block, a settings
file's problem stops the session).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import field
from pathlib import Path
from typing import Any, Literal

from codeloop.hooks.hook_events import ALL_TYPES, EVENTS, HOOK_EVENTS, spec_of
from codeloop.permissions.rules import Rule, RuleError
from codeloop.system.lazy_pattern import LazyPattern
from codeloop.system.valueclass import valueclass

Warn = Callable[[str, str], None]  # (where, problem)
# A hook that is a function (an Agent SDK's callback, the Python API's): it gets the event's
# input object and answers with the object a command hook would print.
HookCallback = Callable[[dict[str, Any]], Awaitable[Any]]


@valueclass
class HookCommand:
    """One hook handler. `command` is the shell command (type command), `args` switches it to
    exec form; http hooks POST to `url`; prompt hooks ask a model `prompt`."""

    command: str = ""
    timeout: float | None = None  # seconds; None: the event's default
    type: str = "command"
    args: tuple[str, ...] | None = None
    async_: bool = False
    async_rewake: bool = False
    if_: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    allowed_env_vars: tuple[str, ...] = ()
    prompt: str = ""
    model: str | None = None
    continue_on_block: bool = False
    once: bool = False
    # A plugin's root: the hook gets CLAUDE_PLUGIN_ROOT (and it is substituted in `command`).
    plugin_root: Path | None = None
    plugin_data: Path | None = None
    # type "callback": the function (`command` names it), and what its failure means: no
    # decision ("continue"), or a block.
    callback: HookCallback | None = None
    on_failure: Literal["continue", "block"] = "continue"

    @property
    def key(self) -> tuple[Any, ...]:
        """The same handler from two settings files runs once; a plugin's copy stays separate."""
        return (self.type, self.command, self.args, self.url, self.prompt, self.plugin_root)

    @property
    def label(self) -> str:
        text = self.command or self.url or self.prompt
        return text if len(text) <= 80 else text[:77] + "..."


@valueclass
class HookMatcher:
    """Hooks that run when `matcher` matches (a tool name for tool events; empty: always)."""

    matcher: str
    hooks: tuple[HookCommand, ...]


HooksConfig = Mapping[str, tuple[HookMatcher, ...]]


def parse_hooks(
    raw: Any,
    warn: Warn,
    *,
    where: str = "hooks",
    plugin_root: Path | None = None,
    plugin_data: Path | None = None,
) -> dict[str, tuple[HookMatcher, ...]]:
    """`{"PreToolUse": [{"matcher": "Bash", "hooks": [...]}], ...}` checked and typed."""
    if not isinstance(raw, dict):
        warn(where, f"expected an object of events, got {kind(raw)}")
        return {}
    out: dict[str, tuple[HookMatcher, ...]] = {}
    for event, entries in raw.items():
        place = f"{where}.{event}"
        if event not in EVENTS:
            close = _close_to(event)
            hint = f"; did you mean {close}?" if close else ""
            warn(place, f"not a hook event{hint} (events: {', '.join(HOOK_EVENTS)})")
            continue
        if isinstance(entries, dict) and not {"matcher", "hooks"} & set(entries):
            # The oldest shape: {"Bash": "echo ..."}, matcher to command(s).
            entries = [
                {"matcher": m, "hooks": c if isinstance(c, list) else [c]}
                for m, c in entries.items()
            ]
        elif isinstance(entries, dict):  # one matcher group written without its list
            entries = [entries]
        if not isinstance(entries, list):
            warn(place, f"expected a list of matchers, got {kind(entries)}")
            continue
        groups = []
        for i, entry in enumerate(entries):
            group = _matcher(event, entry, f"{place}[{i}]", warn, plugin_root, plugin_data)
            if group is not None:
                groups.append(group)
        if groups:
            out[event] = tuple(groups)
    return out


def merge_hooks(*configs: HooksConfig) -> dict[str, tuple[HookMatcher, ...]]:
    out: dict[str, tuple[HookMatcher, ...]] = {}
    for config in configs:
        for event, groups in config.items():
            have = out.get(event, ())
            out[event] = (*have, *(g for g in groups if g not in have))
    return out


def _matcher(
    event: str,
    raw: Any,
    where: str,
    warn: Warn,
    plugin_root: Path | None,
    plugin_data: Path | None,
) -> HookMatcher | None:
    if not isinstance(raw, dict):
        warn(where, f"expected an object with 'matcher' and 'hooks', got {kind(raw)}")
        return None
    matcher = raw.get("matcher", "")
    if matcher is None:
        matcher = ""
    if not isinstance(matcher, str):
        warn(f"{where}.matcher", f"expected a string, got {kind(matcher)}")
        return None
    if not is_plain_matcher(matcher):
        try:
            re.compile(matcher)
        except re.error as exc:
            warn(f"{where}.matcher", f"{matcher!r} is not a valid pattern ({exc})")
            return None
    handlers = raw.get("hooks")
    if isinstance(handlers, dict):
        handlers = [handlers]
    if not isinstance(handlers, list):
        warn(f"{where}.hooks", f"expected a list of hooks, got {kind(handlers)}")
        return None
    kept = []
    for i, item in enumerate(handlers):
        handler = _handler(event, item, f"{where}.hooks[{i}]", warn, plugin_root, plugin_data)
        if handler is not None:
            kept.append(handler)
    return HookMatcher(matcher, tuple(kept)) if kept else None


def _handler(
    event: str,
    raw: Any,
    where: str,
    warn: Warn,
    plugin_root: Path | None,
    plugin_data: Path | None,
) -> HookCommand | None:
    if isinstance(raw, str):  # the oldest shape: a bare command string
        raw = {"type": "command", "command": raw}
    if not isinstance(raw, dict):
        warn(where, f"expected an object, got {kind(raw)}")
        return None
    hook_type = raw.get("type", "command")
    spec = spec_of(event)
    if hook_type not in ALL_TYPES:
        warn(f"{where}.type", f"{shown(hook_type)} is not a hook type ({', '.join(ALL_TYPES)})")
        return None
    if hook_type == "mcp_tool":
        lost = " (a safeguard is lost)" if spec.blocks or event == "PermissionRequest" else ""
        warn(f"{where}.type", f"{hook_type} hooks are not supported yet{lost}")
        return None
    if hook_type not in spec.types:
        warn(f"{where}.type", f"{event} runs only {' and '.join(sorted(spec.types))} hooks")
        return None
    values: dict[str, Any] = {"type": hook_type}
    if hook_type == "command":
        command = raw.get("command")
        if not isinstance(command, str) or not command.strip():
            warn(f"{where}.command", f"expected a shell command, got {shown(command)}")
            return None
        values["command"] = command
        if "args" in raw:
            args = raw["args"]
            if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
                warn(f"{where}.args", f"expected a list of strings, got {kind(args)}")
                return None
            values["args"] = tuple(args)
        values["async_"] = raw.get("async") is True or raw.get("asyncRewake") is True
        values["async_rewake"] = raw.get("asyncRewake") is True
    elif hook_type == "http":
        url = raw.get("url")
        if not isinstance(url, str) or not re.match(r"https?://", url):
            warn(f"{where}.url", f"expected an http(s) URL, got {shown(url)}")
            return None
        values["url"] = url
        headers = raw.get("headers", {})
        if not isinstance(headers, dict):
            warn(f"{where}.headers", f"expected an object of headers, got {kind(headers)}")
            return None
        values["headers"] = {str(k): str(v) for k, v in headers.items()}
        allowed = raw.get("allowedEnvVars", [])
        if not isinstance(allowed, list):
            warn(f"{where}.allowedEnvVars", f"expected a list of names, got {kind(allowed)}")
            return None
        values["allowed_env_vars"] = tuple(str(v) for v in allowed)
    else:
        prompt = raw.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            warn(f"{where}.prompt", f"expected the prompt text, got {shown(prompt)}")
            return None
        values["prompt"] = prompt
        # An agent hook's "no" always goes back to the model (a prompt hook's when asked to).
        values["continue_on_block"] = hook_type == "agent" or raw.get("continueOnBlock") is True
        values["timeout"] = 60.0 if hook_type == "agent" else 30.0
    if isinstance(raw.get("model"), str) and raw["model"].strip():
        values["model"] = raw["model"].strip()
    if "timeout" in raw:
        timeout = raw["timeout"]
        if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
            values["timeout"] = float(timeout)
        else:
            warn(f"{where}.timeout", f"expected a positive number of seconds, got {shown(timeout)}")
    if "if" in raw:
        rule = raw["if"]
        if not isinstance(rule, str) or not rule.strip():
            warn(f"{where}.if", f"expected a permission rule, got {shown(rule)}")
        elif (problem := rule_problem(rule)) is not None:
            warn(f"{where}.if", problem)
        else:
            values["if_"] = rule.strip()
    values["once"] = raw.get("once") is True
    return HookCommand(plugin_root=plugin_root, plugin_data=plugin_data, **values)


def rule_problem(text: str) -> str | None:
    """What is wrong with a permission rule string, or None."""
    try:
        Rule.parse(text)
    except RuleError as exc:
        return str(exc)
    return None


_PLAIN = LazyPattern(r"[A-Za-z0-9_\-, |]*")


def is_plain_matcher(matcher: str) -> bool:
    """Letters, digits, `_`, `-`, spaces, `,` and `|` only: a list of exact names."""
    return matcher == "*" or _PLAIN.fullmatch(matcher) is not None


def _close_to(name: str) -> str | None:
    lowered = name.lower().replace("_", "").replace("-", "")
    for event in HOOK_EVENTS:
        if event.lower() == lowered:
            return event
    return None


def kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number" if isinstance(value, int | float) else "a value")


def shown(value: Any) -> str:
    return json.dumps(value) if isinstance(value, str | int | float | bool) else kind(value)
