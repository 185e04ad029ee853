"""`lspServers` as Claude Code reads it (the plugin's files are read by
extensions/plugins.py): `${CLAUDE_PLUGIN_ROOT}` and `${CLAUDE_PLUGIN_DATA}` expanded in every
string, timeouts in milliseconds. A server without a command or without
languages is left out with a note; a field codeloop does not know is named once and ignored."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from codeloop.extensions.plugins import plugin_variables
from codeloop.system.valueclass import valueclass

# Claude Code's documented fields; `transport` is stdio (socket is not supported).
KNOWN_FIELDS = frozenset(
    {
        "command",
        "args",
        "extensionToLanguage",
        "transport",
        "env",
        "initializationOptions",
        "settings",
        "workspaceFolder",
        "startupTimeout",
        "shutdownTimeout",
        "restartOnCrash",
        "maxRestarts",
    }
)
DEFAULT_STARTUP_SECONDS = 30.0
DEFAULT_SHUTDOWN_SECONDS = 5.0
DEFAULT_MAX_RESTARTS = 3


@valueclass
class ServerConfig:
    """One language server: `name` is scoped `plugin:<plugin>:<server>`."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    # ".py" -> "python": the files it serves, and the languageId they are opened with.
    extension_to_language: Mapping[str, str] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    initialization_options: Any = None
    settings: Any = None
    workspace_folder: Path | None = None
    startup_timeout: float = DEFAULT_STARTUP_SECONDS
    shutdown_timeout: float = DEFAULT_SHUTDOWN_SECONDS
    restart_on_crash: bool = True
    max_restarts: int = DEFAULT_MAX_RESTARTS


def plugin_lsp_servers(
    servers: Mapping[str, Any], roots: Mapping[str, tuple[Path, Path | None]]
) -> tuple[list[ServerConfig], list[str]]:
    """Plugins' servers (named `plugin:<plugin>:<server>`, as extensions/loader.py gives them),
    with `${CLAUDE_PLUGIN_ROOT}` and `${CLAUDE_PLUGIN_DATA}` filled in and set in their
    environment; and a note for each one left out or field ignored."""
    configs: list[ServerConfig] = []
    notes: list[str] = []
    for scoped, raw in servers.items():
        variables = plugin_variables(scoped, roots)
        if variables is None:
            continue
        values = {f"${{{name}}}": value for name, value in variables.items()}
        config = _server(scoped, _expanded(raw, values), f"lspServers: {scoped}", notes)
        if config is not None:  # started with them in its environment, as MCP servers are
            configs.append(replace(config, env={**variables, **config.env}))
    return configs, notes


def _server(name: str, raw: Any, where: str, notes: list[str]) -> ServerConfig | None:
    if not isinstance(raw, dict):
        notes.append(f"{where}: expected an object")
        return None
    unknown = sorted(set(raw) - KNOWN_FIELDS)
    if unknown:
        notes.append(f"{where}: ignored unknown field(s): {', '.join(unknown)}")
    command = raw.get("command")
    languages = raw.get("extensionToLanguage")
    if not isinstance(command, str) or not command.strip():
        notes.append(f"{where}: no `command`: the server is not used")
        return None
    if not isinstance(languages, dict) or not languages:
        notes.append(f"{where}: no `extensionToLanguage`: the server is not used")
        return None
    if raw.get("transport", "stdio") != "stdio":
        notes.append(f"{where}: transport {raw['transport']!r} is not supported (stdio only)")
        return None
    args = raw.get("args", [])
    env = raw.get("env", {})
    folder = raw.get("workspaceFolder")
    for key, value, kind in (("args", args, list), ("env", env, dict)):
        if not isinstance(value, kind):
            notes.append(f"{where}: {key} is not {'a list' if kind is list else 'an object'}")
    return ServerConfig(
        name=name,
        command=command,
        args=tuple(str(a) for a in args) if isinstance(args, list) else (),
        extension_to_language={
            _extension(ext): str(lang) for ext, lang in languages.items() if isinstance(ext, str)
        },
        env={str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else {},
        initialization_options=raw.get("initializationOptions"),
        settings=raw.get("settings"),
        workspace_folder=Path(folder) if isinstance(folder, str) and folder else None,
        startup_timeout=_seconds(raw, "startupTimeout", DEFAULT_STARTUP_SECONDS, where, notes),
        shutdown_timeout=_seconds(raw, "shutdownTimeout", DEFAULT_SHUTDOWN_SECONDS, where, notes),
        restart_on_crash=raw.get("restartOnCrash", True) is not False,
        max_restarts=_count(raw, "maxRestarts", DEFAULT_MAX_RESTARTS, where, notes),
    )


def _extension(ext: str) -> str:
    ext = ext.strip().lower()
    return ext if ext.startswith(".") else f".{ext}"


def _seconds(
    raw: Mapping[str, Any], key: str, default: float, where: str, notes: list[str]
) -> float:
    """A timeout: Claude Code's are milliseconds."""
    value = raw.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value) / 1000
    if value is not None:
        notes.append(
            f"{where}: {key} {value!r} is not a number of milliseconds; using {default:g} s"
        )
    return default


def _count(raw: Mapping[str, Any], key: str, default: int, where: str, notes: list[str]) -> int:
    value = raw.get(key)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if value is not None:
        notes.append(f"{where}: {key} {value!r} is not a count; using {default}")
    return default


def _expanded(value: Any, values: Mapping[str, str]) -> Any:
    """`value` with the plugin's placeholders filled in, in every string it holds."""
    if isinstance(value, str):
        for key, replacement in values.items():
            value = value.replace(key, replacement)
        return value
    if isinstance(value, list):
        return [_expanded(v, values) for v in value]
    if isinstance(value, dict):
        return {k: _expanded(v, values) for k, v in value.items()}
    return value
