"""One MCP server's configuration, in the shape `.mcp.json` gives it, checked and expanded.

A server entry is `{"command": ..., "args": [...], "env": {...}}` (stdio, the default), or
`{"type": "http" | "sse", "url": ..., "headers": {...}}`. Strings in command, args, env, cwd,
url and headers may use `${VAR}` and `${VAR:-default}`; expansion happens when a session uses
the server (`expanded`), so `codeloop mcp get` shows the entry as it was written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import field, replace
from typing import Any, Literal

from codeloop import errors
from codeloop.hooks.hook_config import kind as kind_of
from codeloop.system.lazy_pattern import LazyPattern
from codeloop.system.valueclass import valueclass

# "sdk": a server inside the program that drives codeloop (an Agent SDK), reached through it.
Transport = Literal["stdio", "http", "sse", "sdk"]
TRANSPORTS: tuple[Transport, ...] = ("stdio", "http", "sse", "sdk")
_TYPE_ALIASES: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "sse": "sse",
    "sdk": "sdk",
}
_KNOWN_KEYS = frozenset(
    {"type", "command", "args", "env", "cwd", "url", "headers", "headersHelper", "oauth", "name"}
)
_VARIABLE = LazyPattern(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
NAME = re.compile(r"[A-Za-z0-9_-]+")


@valueclass
class Timeouts:
    """Seconds: to connect and initialize (MCP_TIMEOUT), and for each call (MCP_TOOL_TIMEOUT;
    None: no limit)."""

    connect: float = 30.0
    tool: float | None = 600.0


class ConfigError(errors.ConfigError):
    """A server entry codeloop cannot use; the message names the server and the problem."""


@valueclass
class OAuthSettings:
    """Optional OAuth details for a remote server: a client registered in advance (else the
    server's dynamic registration is used) and the local port its redirect must reach."""

    client_id: str | None = None
    client_secret: str | None = None
    callback_port: int | None = None
    scopes: str | None = None


@valueclass
class ServerConfig:
    name: str
    transport: Transport = "stdio"
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    # A shell command printing a JSON object of headers, run at every connection (headers.py).
    headers_helper: str | None = None
    oauth: OAuthSettings | None = None
    # Where it came from: "user", "local", "project", "--mcp-config", "plugin:NAME", "options".
    scope: str = "options"
    source: str = ""

    @property
    def remote(self) -> bool:
        return self.transport in ("http", "sse")

    def expanded(self, env: Mapping[str, str], *, partial: bool = False) -> ServerConfig:
        """A copy with `${VAR}` replaced from `env`; ConfigError names a variable that is not
        set and has no default. `partial` replaces only the variables `env` has (a plugin's
        `${CLAUDE_PLUGIN_ROOT}`), leaving the rest for the session's environment."""

        def one(text: str) -> str:
            return expand(text, env, where=f"MCP server {self.name!r}", partial=partial)

        return replace(
            self,
            command=one(self.command),
            args=tuple(one(a) for a in self.args),
            env={k: one(v) for k, v in self.env.items()},
            cwd=one(self.cwd) if self.cwd is not None else None,
            url=one(self.url),
            headers={k: one(v) for k, v in self.headers.items()},
        )

    def to_json(self) -> dict[str, Any]:
        """The entry as `.mcp.json` holds it."""
        out: dict[str, Any] = {"type": self.transport}
        if self.transport == "stdio":
            out |= {"command": self.command, "args": list(self.args), "env": dict(self.env)}
            if self.cwd is not None:
                out["cwd"] = self.cwd
        else:
            out["url"] = self.url
            if self.headers:
                out["headers"] = dict(self.headers)
            if self.headers_helper:
                out["headersHelper"] = self.headers_helper
        if self.oauth is not None:
            oauth = {
                "clientId": self.oauth.client_id,
                "clientSecret": self.oauth.client_secret,
                "callbackPort": self.oauth.callback_port,
                "scopes": self.oauth.scopes,
            }
            out["oauth"] = {k: v for k, v in oauth.items() if v is not None}
        return out


def expand(text: str, env: Mapping[str, str], *, where: str = "", partial: bool = False) -> str:
    def sub(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if partial and name not in env:
            return match.group(0)
        value = env.get(name)
        if value is not None and (value != "" or default is None):
            return value
        if default is not None:
            return default
        raise ConfigError(f"{where}: ${{{name}}} is not set (and has no ${{{name}:-default}})")

    return _VARIABLE.sub(sub, text)


def parse_server(
    name: str, raw: Any, *, scope: str = "options", source: str = ""
) -> tuple[ServerConfig, list[str]]:
    """A checked entry and warnings about keys it ignores; ConfigError when it is unusable."""
    where = f"MCP server {name!r}" + (f" in {source}" if source else "")
    # A plugin's servers are named `plugin:<plugin>:<server>` (their tools mcp__plugin_p_s__*).
    parts = name.split(":") if scope.startswith("plugin:") else [name]
    if not all(NAME.fullmatch(part) for part in parts):
        raise ConfigError(f"{where}: a name may use only letters, digits, '_' and '-'")
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected an object, got {kind_of(raw)}")
    warnings = [
        f"{where}: {key!r} is not supported; ignored" for key in raw if key not in _KNOWN_KEYS
    ]
    kind = raw.get("type")
    if kind is None:
        kind = "http" if "url" in raw and "command" not in raw else "stdio"
    if not isinstance(kind, str) or kind not in _TYPE_ALIASES:
        known = ", ".join(TRANSPORTS)
        raise ConfigError(f"{where}: type {kind!r} is not one of {known}")
    transport = _TYPE_ALIASES[kind]
    base = ServerConfig(name, transport, scope=scope, source=source)
    if transport == "sdk":
        config = base
    elif transport == "stdio":
        for key in ("url", "headers", "headersHelper", "oauth"):
            if key in raw:
                warnings.append(f"{where}: {key!r} applies only to http and sse servers; ignored")
        command = raw.get("command")
        if not isinstance(command, str) or not command.strip():
            raise ConfigError(f"{where}: a stdio server needs a 'command'")
        cwd = raw.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise ConfigError(f"{where}: 'cwd' must be a string")
        config = replace(
            base,
            command=command,
            args=_strings(raw.get("args", []), f"{where}: 'args'"),
            env=_string_map(raw.get("env", {}), f"{where}: 'env'"),
            cwd=cwd,
        )
    else:
        url = raw.get("url")
        if not isinstance(url, str) or not url.strip():
            raise ConfigError(f"{where}: an {transport} server needs a 'url'")
        config = replace(
            base,
            url=url.strip(),
            headers=_string_map(raw.get("headers", {}), f"{where}: 'headers'"),
            headers_helper=_helper(raw.get("headersHelper"), where),
            oauth=_oauth(raw.get("oauth"), where) if "oauth" in raw else None,
        )
    return config, warnings


def _helper(raw: Any, where: str) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, str) or not raw.strip():
        raise ConfigError(f"{where}: 'headersHelper' must be a shell command")
    return raw


def parse_servers(data: Any, *, scope: str, source: str) -> tuple[list[ServerConfig], list[str]]:
    """Every usable entry of an `mcpServers` object; each unusable one is a warning."""
    if data is None:
        return [], []
    if not isinstance(data, dict):
        return [], [f"{source}: mcpServers must be an object, not {kind_of(data)}; ignored"]
    servers: list[ServerConfig] = []
    warnings: list[str] = []
    for name, raw in data.items():
        try:
            config, notes = parse_server(str(name), raw, scope=scope, source=source)
        except ConfigError as exc:
            warnings.append(f"{exc}; not started")
            continue
        servers.append(config)
        warnings += notes
    return servers, warnings


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of strings")
    return tuple(value)


def _string_map(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must be an object of strings")
    out: dict[str, str] = {}
    for key, item in value.items():
        if isinstance(item, bool):
            item = "true" if item else "false"
        elif isinstance(item, int | float):
            item = str(item)
        if not isinstance(item, str):
            raise ConfigError(f"{where}: {key!r} must be a string")
        out[str(key)] = item
    return out


def _oauth(value: Any, where: str) -> OAuthSettings:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: 'oauth' must be an object")
    port = value.get("callbackPort")
    if port is not None and (not isinstance(port, int) or isinstance(port, bool)):
        raise ConfigError(f"{where}: oauth.callbackPort must be a port number")
    texts = {}
    for key in ("clientId", "clientSecret", "scopes"):
        item = value.get(key)
        if item is not None and not isinstance(item, str):
            raise ConfigError(f"{where}: oauth.{key} must be a string")
        texts[key] = item
    return OAuthSettings(texts["clientId"], texts["clientSecret"], port, texts["scopes"])
