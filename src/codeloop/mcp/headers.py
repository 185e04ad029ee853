"""`headersHelper`: a remote server's headers made by a command at every connection (short-lived
tokens, an internal SSO), as Claude Code runs it.

The command runs in a shell for at most 10 s and must print a JSON object of strings; its
headers override the static `headers` of the same name. It gets CLAUDE_CODE_MCP_SERVER_NAME
and CLAUDE_CODE_MCP_SERVER_URL (and CLAUDE_PLUGIN_ROOT for a plugin's server). It runs in the
plugin's root for a plugin's server, in the user's configuration folder for a user-scope
one, else in the session's folder. A helper a repository or plugin supplies is a command the
user did not write: it runs without the environment's credentials (TOKEN, SECRET, KEY, ...).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from codeloop.mcp.server_config import ServerConfig
from codeloop.settings.settings_files import user_dirs
from codeloop.system.procs import child_env, run_bounded

HELPER_SECONDS = 10.0
_CREDENTIAL_PARTS = frozenset(
    [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "KEY",
        "AUTH",
        "COOKIE",
        "PAT",
        "DSN",
        "CREDENTIAL",
        "CREDENTIALS",
    ]
)
_CREDENTIAL_NAMES = frozenset({"ANTHROPIC_CUSTOM_HEADERS"})


class HeadersHelperError(Exception):
    """The helper failed, timed out or printed something other than a JSON object."""


def without_credentials(env: Mapping[str, str]) -> dict[str, str]:
    """The environment minus every variable whose name has a credential word as one of its
    `_` parts (Git's GIT_CONFIG_KEY_<n> kept), and the known odd ones."""

    def secret(name: str) -> bool:
        if re.fullmatch(r"GIT_CONFIG_KEY_\d+", name):
            return False
        parts = {part.upper() for part in name.split("_")}
        return bool(parts & _CREDENTIAL_PARTS) or name.upper() in _CREDENTIAL_NAMES

    return {k: v for k, v in child_env(env).items() if not secret(k)}


async def helper_headers(config: ServerConfig, env: Mapping[str, str], cwd: Path) -> dict[str, str]:
    """The headers the server's helper prints now; HeadersHelperError says why not."""
    assert config.headers_helper is not None
    supplied = config.scope == "project" or config.scope.startswith("plugin:")
    plugin_root = config.env.get("CLAUDE_PLUGIN_ROOT") or env.get("CLAUDE_PLUGIN_ROOT")
    run_env = {
        **(without_credentials(env) if supplied else child_env(env)),
        "CLAUDE_CODE_MCP_SERVER_NAME": config.name,
        "CLAUDE_CODE_MCP_SERVER_URL": config.url,
        **({"CLAUDE_PLUGIN_ROOT": plugin_root} if plugin_root else {}),
    }
    if config.scope.startswith("plugin:") and plugin_root:
        where = Path(plugin_root)
    elif config.scope == "user":
        where = user_dirs(env).claude
    else:
        where = cwd
    what = f"MCP server {config.name}: headersHelper"
    try:
        done = await run_bounded(
            config.headers_helper,
            time_limit=HELPER_SECONDS,
            cwd=where if where.is_dir() else cwd,
            env=run_env,
        )
    except OSError as exc:
        raise HeadersHelperError(f"{what} could not start: {exc}") from None
    if done.timed_out:
        raise HeadersHelperError(f"{what} did not finish within {HELPER_SECONDS:g} s")
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:]
        detail = f": {tail[0]}" if tail else ""
        raise HeadersHelperError(f"{what} exited with status {done.returncode}{detail}")
    try:
        headers = json.loads(done.stdout)
    except json.JSONDecodeError:
        headers = None
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise HeadersHelperError(f"{what} must print a JSON object of strings")
    return {str(k): v for k, v in headers.items()}
