"""Settings: Claude Code's settings files and codeloop's own, merged lowest to highest.

Sources, lowest first: ~/.claude/settings.json, ~/.codeloop/settings.json, .claude/settings.json,
.codeloop/settings.json, .claude/settings.local.json, .codeloop/settings.local.json, then
`--settings` (a file or inline JSON). As in Claude Code, lists concatenate (without repeats),
objects merge key by key and a scalar from a higher source replaces a lower one, so hooks and
permission rules from every file all apply.

A file that is not valid JSON, or a value of the wrong kind, becomes a warning naming the file
and the place; everything else still loads, so one typo never costs the user their other
settings. Keys codeloop does not use (Claude Code has many) are ignored without a word.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from codeloop.paths import codeloop_home

HookEvent = Literal[
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
]
HOOK_EVENTS: tuple[HookEvent, ...] = get_args(HookEvent)
RULE_KINDS = ("allow", "deny", "ask")
PERMISSION_LISTS = (*RULE_KINDS, "additionalDirectories")
CLI_SOURCE = "--settings"

Warn = Callable[[str, str], None]  # (where, problem)


@dataclass(frozen=True)
class UserDirs:
    """Where the user's own files live; HOME, CLAUDE_CONFIG_DIR and CODELOOP_HOME move them."""

    home: Path
    claude: Path
    codeloop: Path


def user_dirs(env: Mapping[str, str] | None = None) -> UserDirs:
    env = os.environ if env is None else env
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    claude = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
    return UserDirs(home, claude.expanduser(), codeloop_home(env))


@dataclass(frozen=True)
class HookCommand:
    command: str
    # Seconds; None: the runner's default (60 s, as in Claude Code).
    timeout: float | None = None


@dataclass(frozen=True)
class HookMatcher:
    """Hooks that run when `matcher` matches (a tool name for tool events; empty: always)."""

    matcher: str
    hooks: tuple[HookCommand, ...]


HooksConfig = Mapping[str, tuple[HookMatcher, ...]]


@dataclass(frozen=True)
class Permissions:
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    default_mode: str | None = None
    additional_directories: tuple[str, ...] = ()


@dataclass(frozen=True)
class RuleSet:
    """One source's permission rules: a rule engine tags each rule with the file it came from
    (messages name it; path patterns may be relative to it)."""

    source: str
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()


@dataclass(frozen=True)
class CheckpointSettings:
    """`checkpoints`: snapshots before each writing turn, for rewind (checkpoints/)."""

    enabled: bool = True
    # Bigger files are recorded as skipped (named at rewind, never changed by one).
    max_file_mb: float = 16
    # Past this many files a snapshot records the remaining folders as skipped.
    max_files: int = 100_000


@dataclass(frozen=True)
class Settings:
    model: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    # The merged view; `rule_sets` has the same rules with their sources, lowest first.
    permissions: Permissions = field(default_factory=Permissions)
    rule_sets: tuple[RuleSet, ...] = ()
    hooks: HooksConfig = field(default_factory=dict)
    # Run Bash under bubblewrap (settings key `sandbox.enabled`), with or without network.
    sandbox: bool = False
    sandbox_network: bool = False
    checkpoints: CheckpointSettings = field(default_factory=CheckpointSettings)
    # The sources that loaded (file paths, or "--settings" for inline JSON), lowest first.
    sources: tuple[str, ...] = ()
    # One line each, naming the file and the place; meant for the user.
    warnings: tuple[str, ...] = ()


def settings_files(cwd: Path, env: Mapping[str, str] | None = None) -> list[Path]:
    """The settings files in the order they apply, lowest first (existing or not)."""
    dirs = user_dirs(env)
    project = [cwd / ".claude", cwd / ".codeloop"]
    return [
        dirs.claude / "settings.json",
        dirs.codeloop / "settings.json",
        *(d / "settings.json" for d in project),
        *(d / "settings.local.json" for d in project),
    ]


def load_settings(
    cwd: Path, *, cli: str | None = None, env: Mapping[str, str] | None = None
) -> Settings:
    """Every source merged; problems come back in `warnings`, never as exceptions.

    `cli` is the `--settings` value: inline JSON when it starts with `{`, else a file path
    (relative to `cwd`).
    """
    warnings: list[str] = []
    merged: dict[str, Any] = {}
    sources: list[str] = []
    rule_sets: list[RuleSet] = []
    for label, text in _read_sources(cwd, cli, env, warnings):
        data = _parse(label, text, warnings)
        if data is None:
            continue
        sources.append(label)
        clean = _validated(label, data, warnings)
        merged = _merge(merged, clean)
        rules = {k: tuple(v) for k, v in clean.get("permissions", {}).items() if k in RULE_KINDS}
        if rules:
            rule_sets.append(RuleSet(label, **rules))
    return _build(merged, tuple(rule_sets), tuple(sources), tuple(warnings))


def _read_sources(
    cwd: Path, cli: str | None, env: Mapping[str, str] | None, warnings: list[str]
) -> Iterable[tuple[str, str]]:
    for path in settings_files(cwd, env):
        text = _read(path, warnings, missing_ok=True)
        if text is not None:
            yield str(path), text
    if cli is None:
        return
    if cli.lstrip().startswith("{"):
        yield CLI_SOURCE, cli
        return
    path = (cwd / Path(cli).expanduser()).resolve()
    text = _read(path, warnings, missing_ok=False)
    if text is not None:
        yield str(path), text


def _read(path: Path, warnings: list[str], *, missing_ok: bool) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if not missing_ok:
            warnings.append(f"{CLI_SOURCE} {path}: no such file")
        return None
    except (OSError, UnicodeDecodeError) as exc:
        warnings.append(f"{path}: cannot read: {exc}; skipped")
        return None


def _parse(label: str, text: str, warnings: list[str]) -> dict[str, Any] | None:
    if not text.strip():
        return None  # an empty file is no settings, not an error
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        warnings.append(f"{label}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}; skipped")
        return None
    if not isinstance(data, dict):
        warnings.append(f"{label}: settings must be a JSON object, not {_kind(data)}; skipped")
        return None
    return data


# --- validation: keep what is valid, warn about the rest, in the JSON's own shape -----------


def _validated(label: str, data: Mapping[str, Any], warnings: list[str]) -> dict[str, Any]:
    def warn(where: str, problem: str) -> None:
        warnings.append(f"{label}: {where}: {problem}; ignored")

    clean: dict[str, Any] = {}
    if "model" in data:
        if isinstance(data["model"], str) and data["model"].strip():
            clean["model"] = data["model"].strip()
        else:
            warn("model", f"expected a model name, got {_shown(data['model'])}")
    if "env" in data:
        clean["env"] = _env(data["env"], warn)
    if "permissions" in data:
        clean["permissions"] = _permissions(data["permissions"], warn)
    if "hooks" in data:
        clean["hooks"] = _hooks(data["hooks"], warn)
    if "sandbox" in data:
        clean["sandbox"] = _sandbox(data["sandbox"], warn)
    if "checkpoints" in data:
        clean["checkpoints"] = _checkpoints(data["checkpoints"], warn)
    return clean


def _checkpoints(raw: Any, warn: Warn) -> dict[str, Any]:
    """`{"enabled": true, "maxFileSizeMB": 16, "maxFiles": 100000}`."""
    if not isinstance(raw, dict):
        warn("checkpoints", f"expected an object, got {_kind(raw)}")
        return {}
    out: dict[str, Any] = {}
    if "enabled" in raw:
        if isinstance(raw["enabled"], bool):
            out["enabled"] = raw["enabled"]
        else:
            warn("checkpoints.enabled", f"expected true or false, got {_shown(raw['enabled'])}")
    for key in ("maxFileSizeMB", "maxFiles"):
        if key not in raw:
            continue
        value = raw[key]
        whole = key == "maxFiles"
        if (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and value > 0
            and (not whole or float(value).is_integer())
        ):
            out[key] = int(value) if whole else float(value)
        else:
            wanted = "a positive whole number" if whole else "a positive number"
            warn(f"checkpoints.{key}", f"expected {wanted}, got {_shown(value)}")
    return out


def _sandbox(raw: Any, warn: Warn) -> dict[str, bool]:
    """`{"enabled": true, "allowNetwork": false}`: run Bash under bubblewrap."""
    if not isinstance(raw, dict):
        warn("sandbox", f"expected an object, got {_kind(raw)}")
        return {}
    out: dict[str, bool] = {}
    for key in ("enabled", "allowNetwork"):
        if key in raw:
            if isinstance(raw[key], bool):
                out[key] = raw[key]
            else:
                warn(f"sandbox.{key}", f"expected true or false, got {_shown(raw[key])}")
    return out


def _env(raw: Any, warn: Warn) -> dict[str, str]:
    if not isinstance(raw, dict):
        warn("env", f"expected an object of variables, got {_kind(raw)}")
        return {}
    out: dict[str, str] = {}
    for name, value in raw.items():
        if isinstance(value, bool):
            out[name] = "true" if value else "false"
        elif isinstance(value, str | int | float):
            out[name] = str(value)
        else:
            warn(f"env.{name}", f"expected a string, got {_kind(value)}")
    return out


def _permissions(raw: Any, warn: Warn) -> dict[str, Any]:
    if not isinstance(raw, dict):
        warn("permissions", f"expected an object, got {_kind(raw)}")
        return {}
    out: dict[str, Any] = {}
    for key in PERMISSION_LISTS:
        if key not in raw:
            continue
        value = raw[key]
        if not isinstance(value, list):
            warn(f"permissions.{key}", f"expected a list of strings, got {_kind(value)}")
            continue
        kept = []
        for i, item in enumerate(value):
            if isinstance(item, str) and item.strip():
                kept.append(item.strip())
            else:
                warn(f"permissions.{key}[{i}]", f"expected a rule string, got {_shown(item)}")
        out[key] = kept
    if "defaultMode" in raw:
        # Imported here: the executor imports hooks, which import this module.
        from codeloop.permissions.policy import PERMISSION_MODES

        mode = raw["defaultMode"]
        if mode in PERMISSION_MODES:
            out["defaultMode"] = mode
        else:
            known = ", ".join(PERMISSION_MODES)
            warn("permissions.defaultMode", f"{_shown(mode)} is not one of {known}")
    return out


def _hooks(raw: Any, warn: Warn) -> dict[str, list[dict[str, Any]]]:
    if not isinstance(raw, dict):
        warn("hooks", f"expected an object of events, got {_kind(raw)}")
        return {}
    out: dict[str, list[dict[str, Any]]] = {}
    for event, entries in raw.items():
        where = f"hooks.{event}"
        if event not in HOOK_EVENTS:
            warn(where, f"unknown hook event (codeloop runs {', '.join(HOOK_EVENTS)})")
            continue
        if not isinstance(entries, list):
            warn(where, f"expected a list of matchers, got {_kind(entries)}")
            continue
        kept = [m for i, e in enumerate(entries) if (m := _matcher(e, f"{where}[{i}]", warn))]
        out[event] = kept
    return out


def _matcher(raw: Any, where: str, warn: Warn) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        warn(where, f"expected an object with 'matcher' and 'hooks', got {_kind(raw)}")
        return None
    matcher = raw.get("matcher", "")
    if matcher is None:
        matcher = ""
    if not isinstance(matcher, str):
        warn(f"{where}.matcher", f"expected a string, got {_kind(matcher)}")
        return None
    try:
        if matcher != "*":  # "*" is Claude Code's match-all, not a pattern
            re.compile(matcher)
    except re.error as exc:
        warn(f"{where}.matcher", f"{matcher!r} is not a valid pattern ({exc})")
        return None
    commands = raw.get("hooks")
    if not isinstance(commands, list):
        warn(f"{where}.hooks", f"expected a list of hooks, got {_kind(commands)}")
        return None
    kept = [c for i, h in enumerate(commands) if (c := _command(h, f"{where}.hooks[{i}]", warn))]
    return {"matcher": matcher, "hooks": kept} if kept else None


def _command(raw: Any, where: str, warn: Warn) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        warn(where, f"expected an object, got {_kind(raw)}")
        return None
    kind = raw.get("type", "command")
    if kind != "command":
        warn(f"{where}.type", f"{_shown(kind)} hooks are not supported (only 'command')")
        return None
    command = raw.get("command")
    if not isinstance(command, str) or not command.strip():
        warn(f"{where}.command", f"expected a shell command, got {_shown(command)}")
        return None
    out: dict[str, Any] = {"type": "command", "command": command}
    if "timeout" in raw:
        timeout = raw["timeout"]
        if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
            out["timeout"] = timeout
        else:
            warn(
                f"{where}.timeout", f"expected a positive number of seconds, got {_shown(timeout)}"
            )
    return out


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number" if isinstance(value, int | float) else "a value")


def _shown(value: Any) -> str:
    return json.dumps(value) if isinstance(value, str | int | float | bool) else _kind(value)


# --- merging and the typed result ------------------------------------------------------------


def _merge(low: Any, high: Any) -> Any:
    """Claude Code's rule: objects merge, lists concatenate without repeats, scalars override."""
    if isinstance(low, dict) and isinstance(high, dict):
        out = dict(low)
        for key, value in high.items():
            out[key] = _merge(low[key], value) if key in low else value
        return out
    if isinstance(low, list) and isinstance(high, list):
        return low + [item for item in high if item not in low]
    return high


def _build(
    merged: Mapping[str, Any],
    rule_sets: tuple[RuleSet, ...],
    sources: tuple[str, ...],
    warnings: tuple[str, ...],
) -> Settings:
    perms = merged.get("permissions", {})
    return Settings(
        model=merged.get("model"),
        env=dict(merged.get("env", {})),
        permissions=Permissions(
            allow=tuple(perms.get("allow", ())),
            deny=tuple(perms.get("deny", ())),
            ask=tuple(perms.get("ask", ())),
            default_mode=perms.get("defaultMode"),
            additional_directories=tuple(perms.get("additionalDirectories", ())),
        ),
        rule_sets=rule_sets,
        hooks={
            event: tuple(
                HookMatcher(
                    m["matcher"],
                    tuple(HookCommand(h["command"], h.get("timeout")) for h in m["hooks"]),
                )
                for m in entries
            )
            for event, entries in merged.get("hooks", {}).items()
            if entries
        },
        sandbox=merged.get("sandbox", {}).get("enabled", False),
        sandbox_network=merged.get("sandbox", {}).get("allowNetwork", False),
        checkpoints=_checkpoint_settings(merged.get("checkpoints", {})),
        sources=sources,
        warnings=warnings,
    )


def _checkpoint_settings(raw: Mapping[str, Any]) -> CheckpointSettings:
    default = CheckpointSettings()
    return CheckpointSettings(
        enabled=raw.get("enabled", default.enabled),
        max_file_mb=raw.get("maxFileSizeMB", default.max_file_mb),
        max_files=raw.get("maxFiles", default.max_files),
    )
