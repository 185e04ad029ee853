"""Where MCP servers are configured, and which of them a session starts.

Scopes, as Claude Code has them; a name in a higher scope hides the same name below it:

- user: `~/.claude.json` "mcpServers", then codeloop's `~/.codeloop/mcp.json` "mcpServers"
- project: `.mcp.json` in the project folder, shared through the repository, so its servers
  start only once approved (settings `enableAllProjectMcpServers`, `enabledMcpjsonServers`,
  `disabledMcpjsonServers`, or the same keys in `~/.claude.json`'s entry for the project)
- local: the project's entry under "projects" in the same two files
- `--mcp-config FILE|JSON` (repeatable) on top; with `--strict-mcp-config`, the only ones

codeloop writes its own file for the user and local scopes (`~/.claude.json` is Claude Code's
state, rewritten while it runs) and `.mcp.json` for the project scope. Plugins add theirs with
`extra`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import Any, Literal

from codeloop.errors import UsageError
from codeloop.extensions.plugins import plugin_variables
from codeloop.mcp.server_config import ConfigError, ServerConfig, parse_server, parse_servers
from codeloop.settings.settings_files import Settings, user_dirs
from codeloop.system.jsonfile import JsonFileError, read_json_object, write_json_atomic
from codeloop.system.valueclass import valueclass

Scope = Literal["local", "project", "user"]
SCOPES: tuple[Scope, ...] = ("local", "project", "user")
CLI_SCOPE = "--mcp-config"


@valueclass
class McpApproval:
    """Which project servers may start: `enableAllProjectMcpServers`, `enabledMcpjsonServers`,
    `disabledMcpjsonServers` (disabled wins)."""

    enable_all: bool | None = None
    enabled: tuple[str, ...] = ()
    disabled: tuple[str, ...] = ()

    @staticmethod
    def of(settings: Settings) -> McpApproval:
        return McpApproval(
            settings.enable_all_project_mcp_servers,
            settings.enabled_mcpjson_servers,
            settings.disabled_mcpjson_servers,
        )


@valueclass
class ScopeFile:
    """One place servers are kept: a file, and for the local scope the project's key in it."""

    scope: Scope
    path: Path
    project: str | None = None
    writable: bool = True

    def entries(self) -> tuple[Any, list[str]]:
        """The raw `mcpServers` object (None when absent) and problems reading it."""
        try:
            data = _read(self.path)
        except (JsonFileError, UnicodeDecodeError) as exc:
            return None, [f"{exc}; its MCP servers are not started"]
        except OSError as exc:
            return None, [f"{self.path}: cannot read: {exc.strerror or exc}"]
        holder = _project_entry(data, self.project) if self.project is not None else data
        return (holder or {}).get("mcpServers"), []


def _read(path: Path) -> dict[str, Any]:
    """A file read for its servers. `~/.claude.json` is read for two scopes and the approvals,
    and can be megabytes of Claude Code's state: it is parsed once per change."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return {}
    return _parsed(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=8)
def _parsed(path: Path, mtime_ns: int, size: int) -> dict[str, Any]:
    return read_json_object(path)


def _project_entry(data: Mapping[str, Any], project: str) -> dict[str, Any] | None:
    projects = data.get("projects")
    entry = projects.get(project) if isinstance(projects, dict) else None
    return entry if isinstance(entry, dict) else None


def codeloop_file(env: Mapping[str, str]) -> Path:
    return user_dirs(env).codeloop / "mcp.json"


def claude_state_file(env: Mapping[str, str]) -> Path:
    """Claude Code's `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json` when that is set)."""
    dirs = user_dirs(env)
    return (dirs.claude if env.get("CLAUDE_CONFIG_DIR") else dirs.home) / ".claude.json"


def scope_files(cwd: Path, env: Mapping[str, str]) -> list[ScopeFile]:
    """Every place servers are read from, lowest precedence first."""
    project = str(cwd)
    ours, claude = codeloop_file(env), claude_state_file(env)
    return [
        ScopeFile("user", claude, writable=False),
        ScopeFile("user", ours),
        ScopeFile("project", cwd / ".mcp.json"),
        ScopeFile("local", claude, project, writable=False),
        ScopeFile("local", ours, project),
    ]


def writable_file(scope: Scope, cwd: Path, env: Mapping[str, str]) -> ScopeFile:
    return next(f for f in scope_files(cwd, env) if f.scope == scope and f.writable)


@valueclass(frozen=False)
class Configured:
    """What a session starts, and what it was told about the rest."""

    servers: list[ServerConfig] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # Project servers waiting for the user's approval (an interactive session asks).
    unapproved: list[ServerConfig] = field(default_factory=list)


def declared_servers(cwd: Path, env: Mapping[str, str]) -> tuple[list[ServerConfig], list[str]]:
    """Every server of every scope, as written (not expanded), lowest precedence first."""
    servers: list[ServerConfig] = []
    warnings: list[str] = []
    for place in scope_files(cwd, env):
        raw, problems = place.entries()
        warnings += problems
        found, notes = parse_servers(raw, scope=place.scope, source=str(place.path))
        servers += found
        warnings += notes
    return servers, warnings


def effective(servers: Iterable[ServerConfig]) -> dict[str, ServerConfig]:
    """One server per name: the last (highest precedence) wins, in first-seen order."""
    out: dict[str, ServerConfig] = {}
    for server in servers:
        out[server.name] = server
    return out


def configured_servers(
    cwd: Path,
    env: Mapping[str, str],
    approval: McpApproval,
    *,
    mcp_config: Sequence[str] = (),
    strict: bool = False,
    extra: Sequence[ServerConfig] = (),
) -> Configured:
    """The servers a session in `cwd` starts, expanded with `env`. `mcp_config` holds the
    --mcp-config values (a mistake in one raises ConfigError: the user is there to fix it);
    a problem in a file is a warning and costs only that server."""
    result = Configured()
    declared: list[ServerConfig] = []
    if not strict:
        declared, result.warnings = declared_servers(cwd, env)
    declared += extra
    try:  # the user gave it on the command line: a mistake there is a usage error
        cli = [server for value in mcp_config for server in cli_servers(value, cwd)]
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    approved = project_approval(approval, cwd, env)
    for server in effective([*declared, *cli]).values():
        if server.scope == "project" and not approved(server.name):
            result.unapproved.append(server)
            continue
        try:
            result.servers.append(server.expanded(env))
        except ConfigError as exc:
            if server.scope == CLI_SCOPE:
                raise UsageError(str(exc)) from None
            result.warnings.append(f"{exc}; not started")
    return result


def plugin_servers(
    servers: Mapping[str, Any], roots: Mapping[str, tuple[Path, Path | None]]
) -> tuple[list[ServerConfig], list[str]]:
    """Plugins' servers (named `plugin:<plugin>:<server>`, as extensions/loader.py gives them),
    with `${CLAUDE_PLUGIN_ROOT}` and `${CLAUDE_PLUGIN_DATA}` filled in and set in their
    environment, as Claude Code starts them."""
    configs: list[ServerConfig] = []
    warnings: list[str] = []
    for scoped, raw in servers.items():
        values = plugin_variables(scoped, roots)
        if values is None:
            continue
        plugin, root = scoped.split(":")[1], values["CLAUDE_PLUGIN_ROOT"]
        try:
            config, notes = parse_server(scoped, raw, scope=f"plugin:{plugin}", source=root)
        except ConfigError as exc:
            warnings.append(f"{exc}; not started")
            continue
        config = config.expanded(values, partial=True)
        configs.append(replace(config, env={**values, **config.env}))
        warnings += notes
    return configs, warnings


def cli_servers(value: str, cwd: Path) -> list[ServerConfig]:
    """The servers of one --mcp-config value: inline JSON, or a JSON file."""
    text, source = value, "--mcp-config"
    if not value.lstrip().startswith("{"):
        path = (cwd / Path(value).expanduser()).resolve()
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigError(f"--mcp-config {value}: no such file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"--mcp-config {value}: cannot read it: {exc}") from None
        source = str(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--mcp-config {source}: invalid JSON: {exc.msg}") from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError(f'--mcp-config {source}: expected {{"mcpServers": {{...}}}}')
    out = []
    for name, raw in servers.items():
        config, notes = parse_server(str(name), raw, scope=CLI_SCOPE, source=source)
        if notes:
            raise ConfigError(notes[0].removesuffix("; ignored"))
        out.append(config)
    return out


def project_approval(
    approval: McpApproval, cwd: Path, env: Mapping[str, str]
) -> Callable[[str], bool | None]:
    """Whether a project server may start: the settings' choices, with those Claude Code keeps
    in `~/.claude.json` for the project. None: nobody has said yet (an interactive session
    asks, the first time)."""
    enable_all = approval.enable_all
    enabled, disabled = set(approval.enabled), set(approval.disabled)
    try:
        state = _project_entry(_read(claude_state_file(env)), str(cwd)) or {}
    except (OSError, UnicodeDecodeError):
        state = {}
    if enable_all is None and isinstance(state.get("enableAllProjectMcpServers"), bool):
        enable_all = state["enableAllProjectMcpServers"]
    for key, names in (("enabledMcpjsonServers", enabled), ("disabledMcpjsonServers", disabled)):
        if isinstance(state.get(key), list):
            names.update(n for n in state[key] if isinstance(n, str))

    def approved(name: str) -> bool | None:
        if name in disabled:
            return False
        return True if enable_all or name in enabled else None

    return approved


def awaiting_approval(
    cwd: Path, env: Mapping[str, str], approval: McpApproval
) -> list[ServerConfig]:
    """The project's servers (`.mcp.json`) neither approved nor refused yet: what an
    interactive session asks about before it starts them."""
    declared, _ = declared_servers(cwd, env)
    decided = project_approval(approval, cwd, env)
    servers = effective(declared).values()
    return [s for s in servers if s.scope == "project" and decided(s.name) is None]


def approval_hint(names: Sequence[str]) -> str:
    """How to approve project servers, for the message that says they did not start."""
    listed = json.dumps(list(names))
    return (
        f'add "enabledMcpjsonServers": {listed} (or "enableAllProjectMcpServers": true) to '
        ".claude/settings.local.json or .codeloop/settings.local.json"
    )


def remember_approval(
    cwd: Path, approved: Sequence[str], rejected: Sequence[str], *, enable_all: bool = False
) -> Path:
    """Keep an interactive answer about project servers in `.codeloop/settings.local.json`
    (`enable_all`: every server the project has or will have)."""
    path = cwd / ".codeloop" / "settings.local.json"
    data = read_json_object(path)
    if enable_all:
        data["enableAllProjectMcpServers"] = True
    for key, names in (("enabledMcpjsonServers", approved), ("disabledMcpjsonServers", rejected)):
        have = data.get(key)
        if not isinstance(have, list):
            have = data[key] = []
        have.extend(n for n in names if n not in have)
    write_json_atomic(path, data)
    return path


# --- editing: `codeloop mcp add / remove` -----------------------------------------------------


def add_server(config: ServerConfig, scope: Scope, cwd: Path, env: Mapping[str, str]) -> Path:
    """Write `config` into the scope's file; ConfigError when the name is taken there."""
    place = writable_file(scope, cwd, env)
    data = read_json_object(place.path)
    servers = _servers_for_edit(data, place, create=True)
    assert servers is not None
    if config.name in servers:
        raise ConfigError(f"MCP server {config.name!r} already exists in the {scope} scope")
    servers[config.name] = config.to_json()
    write_json_atomic(place.path, data, private=place.path != cwd / ".mcp.json")
    return place.path


def remove_server(
    name: str, scope: Scope | None, cwd: Path, env: Mapping[str, str]
) -> tuple[Scope, Path]:
    """Remove `name` from its scope (which must be said when it is in more than one)."""
    declared, _ = declared_servers(cwd, env)
    found = [s for s in declared if s.name == name and (scope is None or s.scope == scope)]
    ours = [s for s in found if Path(s.source) != claude_state_file(env)]
    if not found:
        where = f" in the {scope} scope" if scope else ""
        raise ConfigError(f"no MCP server named {name!r}{where}")
    if not ours:
        raise ConfigError(
            f"MCP server {name!r} is defined in {claude_state_file(env)}, Claude Code's own "
            f"file: remove it there (claude mcp remove {name})"
        )
    scopes = sorted({s.scope for s in ours})
    if len(scopes) > 1:
        raise ConfigError(
            f"MCP server {name!r} exists in the {' and '.join(scopes)} scopes: "
            "say which with --scope"
        )
    chosen: Scope = ours[0].scope  # type: ignore[assignment]
    place = writable_file(chosen, cwd, env)
    data = read_json_object(place.path)
    servers = _servers_for_edit(data, place, create=False)
    if servers is not None:
        servers.pop(name, None)
    write_json_atomic(place.path, data, private=place.path != cwd / ".mcp.json")
    return chosen, place.path


def _servers_for_edit(
    data: dict[str, Any], place: ScopeFile, *, create: bool
) -> dict[str, Any] | None:
    holder: dict[str, Any] | None = data
    if place.project is not None:
        projects = data.setdefault("projects", {}) if create else data.get("projects")
        if not isinstance(projects, dict):
            raise ConfigError(f"{place.path}: 'projects' is not an object; not changed")
        holder = projects.setdefault(place.project, {}) if create else projects.get(place.project)
    if holder is None:
        return None
    if not isinstance(holder, dict):
        raise ConfigError(f"{place.path}: the project's entry is not an object; not changed")
    servers = holder.setdefault("mcpServers", {}) if create else holder.get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        raise ConfigError(f"{place.path}: 'mcpServers' is not an object; not changed")
    return servers
