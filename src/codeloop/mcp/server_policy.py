"""An organization's MCP allowlist and denylist, enforced as Claude Code documents them
(managed-mcp: "How a server is evaluated").

`allowedMcpServers` and `deniedMcpServers` entries name servers by `serverName` (the label,
exact), `serverCommand` (a stdio server's command and arguments, exactly, after `${VAR}`
expansion) or `serverUrl` (a remote server's URL, `*` wildcards, host case-insensitive, no
path in the pattern: any path). The denylist always wins. With an allowlist set anywhere, a
remote server must match a `serverUrl` entry (a name counts only when there are none), a stdio
server a `serverCommand` entry (likewise). Lists merge from every settings source; with
`allowManagedMcpServersOnly` only the managed allowlist counts (the denylist still merges).
Every server it stops is named, never dropped silently.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from codeloop.mcp.server_config import ConfigError, ServerConfig, expand
from codeloop.system.valueclass import valueclass

Entry = Mapping[str, Any]


@valueclass
class McpPolicy:
    allowed: tuple[Entry, ...] | None = None  # None: no allowlist anywhere
    denied: tuple[Entry, ...] = ()

    def blocked(self, server: ServerConfig, env: Mapping[str, str]) -> str | None:
        """Why `server` (already expanded) may not start, or None."""
        denied = next((e for e in self.denied if _matches(e, server, env)), None)
        if denied is not None:
            return f"it is blocked by the deniedMcpServers entry {_shown(denied)}"
        if self.allowed is None:
            return None
        key = "serverUrl" if server.remote else "serverCommand"
        strict = [e for e in self.allowed if key in e]
        candidates = strict or [e for e in self.allowed if "serverName" in e]
        if any(_matches(e, server, env) for e in candidates):
            return None
        by = f"its {'URL' if server.remote else 'command'}" if strict else "its name"
        return f"{by} is not in allowedMcpServers"


def _matches(entry: Entry, server: ServerConfig, env: Mapping[str, str]) -> bool:
    if isinstance(name := entry.get("serverName"), str):
        return name == server.name
    if isinstance(command := entry.get("serverCommand"), list) and not server.remote:
        wanted = [_expanded(str(part), env) for part in command]
        return wanted == [server.command, *server.args]
    if isinstance(url := entry.get("serverUrl"), str) and server.remote:
        return url_matches(_expanded(url, env), server.url)
    return False


def _expanded(text: str, env: Mapping[str, str]) -> str:
    try:
        return expand(text, env)
    except ConfigError:
        return text  # an unset variable: the entry matches only itself, literally


def url_matches(pattern: str, url: str) -> bool:
    """`*` anywhere; the scheme and host compare without case (and without a trailing dot on
    the host), the path with it; a pattern without a path matches every path."""
    pat_origin, pat_path = _split(pattern)
    origin, path = _split(url)
    if not _wild(pat_origin, re.IGNORECASE).fullmatch(origin):
        return False
    return pat_path is None or _wild(pat_path).fullmatch(path or "/") is not None


def _split(url: str) -> tuple[str, str | None]:
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    host, slash, path = rest.partition("/")
    host = re.sub(r"\.(?=:|$)", "", host)  # a fully qualified host's trailing dot
    return f"{scheme}://{host}", f"/{path}" if slash else None


def _wild(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in pattern.split("*")), flags)


def _shown(entry: Entry) -> str:
    key, value = next(iter(entry.items()), ("", ""))
    return f'{{"{key}": {value!r}}}'


def allowed_servers(
    servers: Sequence[ServerConfig], policy: McpPolicy, env: Mapping[str, str]
) -> tuple[list[ServerConfig], list[str]]:
    """The servers the policy lets start, and one line for each it stops."""
    kept, notes = [], []
    for server in servers:
        why = policy.blocked(server, env)
        if why is None:
            kept.append(server)
        else:
            notes.append(f"MCP server {server.name} was not started: {why}")
    return kept, notes
