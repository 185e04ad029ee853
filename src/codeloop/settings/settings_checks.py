"""Checking each settings value in the JSON's own shape: what is valid is kept, and each
problem is reported at its place (`permissions.deny[2]`) to Problems, which decides what it
means (settings_safety.py: a skipped value, or an error where the value restricts).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from codeloop.hooks.hook_config import Warn, kind, rule_problem, shown
from codeloop.settings.settings_keys import KEYS, PERMISSION_KEYS
from codeloop.settings.settings_safety import RESTRICTING, Problems, misspelt

RULE_KINDS = ("allow", "deny", "ask")
PERMISSION_LISTS = (*RULE_KINDS, "additionalDirectories")
# Claude Code's permission modes; `manual` is its alias for `default`.
MODE_NAMES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto", "manual")
AUTO_MODE_SECTIONS = ("environment", "allow", "soft_deny", "hard_deny")


def one_rule_lists(label: str, data: dict[str, Any], problems: Problems) -> dict[str, Any]:
    """`"deny": "Bash(rm:*)"`: a deny or ask rule written without its list is read as a list
    of one (dropping it would drop a restriction)."""
    perms = data.get("permissions")
    if not isinstance(perms, dict):
        return data
    fixed = dict(perms)
    for sub in ("deny", "ask"):
        if isinstance(perms.get(sub), str):
            fixed[sub] = [perms[sub]]
            problems.warnings.append(
                f"{label}: permissions.{sub}: expected a list of rules, got a string; read as "
                f"the list [{json.dumps(perms[sub])}]"
            )
    return {**data, "permissions": fixed}


def validated(label: str, data: Mapping[str, Any], problems: Problems) -> dict[str, Any]:
    def warn(where: str, problem: str) -> None:
        problems.found(label, where, problem)

    clean: dict[str, Any] = {}
    for key, value in data.items():
        check = _CHECKS.get(key)
        if check is None:
            if key not in KEYS and (meant := misspelt(key, _TOP_RESTRICTING)):
                problems.errors.append(f"{label}: {key}: not a setting; did you mean {meant}?")
            continue
        result = check(key, value, warn)
        if result is not _INVALID:
            clean[key] = result
    return clean


_INVALID: Any = object()  # nothing to keep (a value that is wrong, or that sets nothing)
_TOP_RESTRICTING = frozenset(path for path in RESTRICTING if "." not in path)


def _string(key: str, value: Any, warn: Warn) -> Any:
    if isinstance(value, str) and value.strip():
        return value.strip()
    warn(key, f"expected a non-empty string, got {shown(value)}")
    return _INVALID


def _status_line(key: str, value: Any, warn: Warn) -> Any:
    """`{"type": "command", "command": "..."}` → the command."""
    command = value.get("command") if isinstance(value, dict) else None
    if isinstance(command, str) and command and value.get("type", "command") == "command":
        return command
    warn(key, 'expected {"type": "command", "command": "..."}')
    return _INVALID


def _choice(key: str, value: Any, warn: Warn, choices: tuple[str, ...]) -> Any:
    if value in choices:
        return value
    warn(key, f"expected one of {', '.join(choices)}, got {value!r}")
    return _INVALID


def _boolean(key: str, value: Any, warn: Warn) -> Any:
    if isinstance(value, bool):
        return value
    warn(key, f"expected true or false, got {shown(value)}")
    return _INVALID


def _strings(key: str, value: Any, warn: Warn) -> Any:
    """A list of strings (one string is a list of one)."""
    return _items(key, [value] if isinstance(value, str) else value, warn, "a string")


def _items(
    key: str, value: Any, warn: Warn, what: str, wrong: Callable[[str], str | None] = lambda _: None
) -> Any:
    """The list's strings; `wrong` says what is wrong with one (None: nothing)."""
    if not isinstance(value, list):
        warn(key, f"expected a list of {what.removeprefix('a ')}s, got {kind(value)}")
        return _INVALID
    kept = []
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            warn(f"{key}[{i}]", f"expected {what}, got {shown(item)}")
        elif problem := wrong(item):
            warn(f"{key}[{i}]", problem)
        else:
            kept.append(item.strip())
    return kept


def _objects(key: str, value: Any, warn: Warn) -> Any:
    if not isinstance(value, list):
        warn(key, f"expected a list of objects, got {kind(value)}")
        return _INVALID
    kept = []
    for i, item in enumerate(value):
        if isinstance(item, dict):
            kept.append(item)
        else:
            warn(f"{key}[{i}]", f"expected an object, got {shown(item)}")
    return kept


def _servers(key: str, value: Any, warn: Warn) -> Any:
    """allowedMcpServers / deniedMcpServers: objects naming a server by serverName or
    serverUrl (strings) or serverCommand (a list of strings), as mcp/server_policy.py reads them; an
    entry that names none, or names one wrongly, would match no server."""
    entries = _objects(key, value, warn)
    if entries is _INVALID:
        return _INVALID
    kept = []
    for i, entry in enumerate(entries):
        given = [name for name in ("serverName", "serverUrl", "serverCommand") if name in entry]
        if given and all(_names_server(name, entry[name]) for name in given):
            kept.append(entry)
        else:
            warn(f"{key}[{i}]", "expected serverName or serverUrl (a string), or serverCommand")
    return kept


def _names_server(name: str, value: Any) -> bool:
    if name == "serverCommand":
        return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)
    return isinstance(value, str) and bool(value.strip())


EFFORT_LEVELS = ("low", "medium", "high", "xhigh", "max")


def _effort(key: str, value: Any, warn: Warn) -> Any:
    if value in EFFORT_LEVELS:
        return value
    warn(key, f"{shown(value)} is not one of {', '.join(EFFORT_LEVELS)}")
    return _INVALID


def _object(key: str, value: Any, warn: Warn) -> Any:
    if isinstance(value, dict):
        return value
    warn(key, f"expected an object, got {kind(value)}")
    return _INVALID


def _web_search(key: str, raw: Any, warn: Warn) -> Any:
    """`{"url": "http://localhost:8888/search"}`: an http(s) URL answering `?q=…&format=json`."""
    if not isinstance(raw, dict):
        warn(key, f"expected an object, got {kind(raw)}")
        return _INVALID
    url = raw.get("url")
    if not isinstance(url, str) or not url.strip().startswith(("http://", "https://")):
        warn(f"{key}.url", f"expected an http(s) URL, got {shown(url)}")
        return _INVALID
    for other in sorted(set(raw) - {"url"}):
        warn(f"{key}.{other}", "unknown key, ignored")
    return {"url": url.strip()}


def _count_of(unit: str) -> Callable[[str, Any, Warn], Any]:
    """The check of a whole number of `unit`, at least 1."""

    def check(key: str, value: Any, warn: Warn) -> Any:
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
        warn(key, f"expected a whole number of {unit}, at least 1, got {shown(value)}")
        return _INVALID

    return check


def _env(key: str, raw: Any, warn: Warn) -> Any:
    if not isinstance(raw, dict):
        warn("env", f"expected an object of variables, got {kind(raw)}")
        return _INVALID
    out: dict[str, str] = {}
    for name, value in raw.items():
        if isinstance(value, bool):
            out[name] = "true" if value else "false"
        elif isinstance(value, str | int | float):
            out[name] = str(value)
        else:
            warn(f"env.{name}", f"expected a string, got {kind(value)}")
    return out


def _flags(key: str, raw: Any, warn: Warn) -> Any:
    """An object of name → true/false (enabledPlugins)."""
    if not isinstance(raw, dict):
        warn(key, f"expected an object of name: true/false, got {kind(raw)}")
        return _INVALID
    out: dict[str, bool] = {}
    for name, value in raw.items():
        if isinstance(value, bool):
            out[name] = value
        elif isinstance(value, list):  # an old form: a list of versions means enabled
            out[name] = True
        else:
            warn(f"{key}.{name}", f"expected true or false, got {shown(value)}")
    return out


def _names(key: str, raw: Any, warn: Warn) -> Any:
    """An object of name → string (skillOverrides)."""
    if not isinstance(raw, dict):
        warn(key, f"expected an object, got {kind(raw)}")
        return _INVALID
    return {str(k): v for k, v in raw.items() if isinstance(v, str)}


def _marketplaces(key: str, raw: Any, warn: Warn) -> Any:
    if not isinstance(raw, dict):
        warn(key, f"expected an object of marketplaces, got {kind(raw)}")
        return _INVALID
    out: dict[str, Any] = {}
    for name, entry in raw.items():
        source = entry.get("source") if isinstance(entry, dict) else None
        if isinstance(source, dict) and isinstance(source.get("source"), str):
            out[name] = {"source": source}
        else:
            warn(f"{key}.{name}", 'expected {"source": {"source": ..., ...}}')
    return out


def _attribution(key: str, raw: Any, warn: Warn) -> Any:
    if not isinstance(raw, dict):
        warn(key, f"expected an object with commit and pr, got {kind(raw)}")
        return _INVALID
    return {k: v for k, v in raw.items() if k in ("commit", "pr") and isinstance(v, str)}


def _sandbox(key: str, raw: Any, warn: Warn) -> Any:
    """`{"enabled": true, "failIfUnavailable": true, "allowNetwork": false}`."""
    if not isinstance(raw, dict):
        warn("sandbox", f"expected an object, got {kind(raw)}")
        return _INVALID
    out: dict[str, bool] = {}
    for sub in ("enabled", "allowNetwork", "failIfUnavailable"):
        if sub in raw:
            if isinstance(raw[sub], bool):
                out[sub] = raw[sub]
            else:
                warn(f"sandbox.{sub}", f"expected true or false, got {shown(raw[sub])}")
    return out


def _checkpoints(key: str, raw: Any, warn: Warn) -> Any:
    """`{"enabled": true, "maxFileSizeMB": 16, "maxFiles": 100000}`."""
    if not isinstance(raw, dict):
        warn("checkpoints", f"expected an object, got {kind(raw)}")
        return _INVALID
    out: dict[str, Any] = {}
    if "enabled" in raw:
        if isinstance(raw["enabled"], bool):
            out["enabled"] = raw["enabled"]
        else:
            warn("checkpoints.enabled", f"expected true or false, got {shown(raw['enabled'])}")
    for sub in ("maxFileSizeMB", "maxFiles"):
        if sub not in raw:
            continue
        value = raw[sub]
        whole = sub == "maxFiles"
        if (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and value > 0
            and (not whole or float(value).is_integer())
        ):
            out[sub] = int(value) if whole else float(value)
        else:
            wanted = "a positive whole number" if whole else "a positive number"
            warn(f"checkpoints.{sub}", f"expected {wanted}, got {shown(value)}")
    return out


def _permissions(key: str, raw: Any, warn: Warn) -> Any:
    if not isinstance(raw, dict):
        warn("permissions", f"expected an object, got {kind(raw)}")
        return _INVALID
    out: dict[str, Any] = {}
    for sub in PERMISSION_LISTS:
        if sub in raw:
            checked = rule_problem if sub in RULE_KINDS else lambda _: None
            kept = _items(f"permissions.{sub}", raw[sub], warn, "a rule string", checked)
            if kept is not _INVALID:
                out[sub] = kept
    if "defaultMode" in raw:
        mode = raw["defaultMode"]
        if mode in MODE_NAMES:
            out["defaultMode"] = mode
        else:
            warn("permissions.defaultMode", f"{shown(mode)} is not one of {', '.join(MODE_NAMES)}")
    for sub in ("disableBypassPermissionsMode", "disableAutoMode"):
        if sub in raw and (value := _disable(f"permissions.{sub}", raw[sub], warn)) is not _INVALID:
            out[sub] = value
    for sub in sorted(set(raw) - PERMISSION_KEYS):  # a misspelt deny, or a rule kind unknown
        meant = misspelt(sub, PERMISSION_KEYS)
        hint = f"did you mean {meant}?" if meant else f"known: {', '.join(sorted(PERMISSION_KEYS))}"
        warn(f"permissions.{sub}", f"not a permission setting ({hint})")
    return out


def _disable(key: str, value: Any, warn: Warn) -> Any:
    """`"disable"` (or true) turns the mode off; null, false and "" leave it on."""
    if value is True or value == "disable":
        return "disable"
    if not (value is None or value is False or value == ""):
        warn(key, f'expected "disable", got {shown(value)}')
    return _INVALID


_CHECKS: dict[str, Any] = {
    "model": _string,
    "env": _env,
    "permissions": _permissions,
    "sandbox": _sandbox,
    "checkpoints": _checkpoints,
    "apiKeyHelper": _string,
    "cleanupPeriodDays": _count_of("days"),
    "includeCoAuthoredBy": _boolean,
    "attribution": _attribution,
    "enabledPlugins": _flags,
    "extraKnownMarketplaces": _marketplaces,
    "additionalMarketplaces": _marketplaces,
    "blockedMarketplaces": _objects,
    "strictKnownMarketplaces": _objects,
    "allowedMarketplaces": _objects,
    "outputStyle": _string,
    "agent": _string,
    "statusLine": lambda k, v, w: _status_line(k, v, w),
    "editorMode": lambda k, v, w: _choice(k, v, w, ("normal", "vim")),
    "claudeMdExcludes": _strings,
    "claudeMd": _string,
    "autoCompactEnabled": _boolean,
    "fallbackModel": _strings,
    "maxTurns": _count_of("turns"),
    "allowedHttpHookUrls": _strings,
    "httpHookAllowedEnvVars": _strings,
    "disableSkillShellExecution": _boolean,
    "skillOverrides": _names,
    "disableAllHooks": _boolean,
    "allowManagedHooksOnly": _boolean,
    "allowManagedPermissionRulesOnly": _boolean,
    "enableAllProjectMcpServers": _boolean,
    "enabledMcpjsonServers": _strings,
    "disabledMcpjsonServers": _strings,
    "allowedMcpServers": _servers,
    "deniedMcpServers": _servers,
    "allowManagedMcpServersOnly": _boolean,
    "effortLevel": _effort,
    "compactProfile": lambda k, v, w: _choice(k, v, w, ("on", "off", "auto")),
    "alwaysThinkingEnabled": _boolean,
    "autoMemoryEnabled": _boolean,
    "autoMemoryDirectory": _string,
    "requestOverrides": _object,
    "webSearch": _web_search,
    # Claude Code's top-level spelling in some files; permissions.* is the documented one.
    "disableBypassPermissionsMode": _disable,
    "disableAutoMode": _disable,
    "autoMode": lambda k, v, w: _auto_mode(k, v, w),
}


def _auto_mode(key: str, value: Any, warn: Warn) -> Any:
    """`autoMode`: lists of prose for the auto-mode classifier, by section."""
    if not isinstance(value, dict):
        warn(key, f"expected an object, got {kind(value)}")
        return _INVALID
    out = {}
    for name, items in value.items():
        if name not in AUTO_MODE_SECTIONS:
            warn(f"{key}.{name}", f"not one of {', '.join(AUTO_MODE_SECTIONS)}; ignored")
        elif (kept := _strings(f"{key}.{name}", items, warn)) is not _INVALID:
            out[name] = kept
    return out
