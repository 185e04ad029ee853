"""What an `initialize` request carries besides hooks: the TypeScript SDK sends much of a
session's configuration there rather than on the command line (the system prompt, SDK MCP
servers and other MCP servers, the JSON schema, settings, disallowed tools, plugins). Each
part taken is confirmed in the answer (`mcp_servers_applied`, ...), as the SDK checks; a
part codeloop cannot take is named on stderr and left unconfirmed.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from codeloop.errors import UsageError
from codeloop.mcp.server_config import ServerConfig, parse_servers
from codeloop.options import Options

SDK_SCOPE = "sdk"
# Parts taken elsewhere (the hooks and agents when the session is built, the SDK's MCP
# servers' details with their names), not here; every other part this code does not take is
# named on stderr: the SDK's user set it, and learns it does nothing here.
_IGNORED = frozenset(
    {
        "subtype",
        "hooks",
        "agents",
        "sdkMcpServerManifests",
        "sdkMcpServerConfigs",
        "promptSuggestions",
        "agentProgressSummaries",
    }
)


def from_initialize(options: Options, init: dict[str, Any]) -> tuple[dict[str, bool], Any]:
    """Fold `init` into `options`: the confirmations to answer with, and the JSON schema of
    the structured output if it sent one."""
    applied: dict[str, bool] = {}
    servers = [ServerConfig(str(name), "sdk", scope=SDK_SCOPE) for name in _names(init)]
    if isinstance(init.get("mcpServers"), dict):
        parsed, problems = parse_servers(init["mcpServers"], scope="--mcp-config", source="SDK")
        if problems:
            raise UsageError("; ".join(problems))
        servers += parsed
        applied["mcp_servers_applied"] = True
    if servers:
        options.mcp_servers = [*options.mcp_servers, *servers]
    prompt = init.get("systemPrompt")
    if isinstance(prompt, list):
        options.system_prompt = "\n\n".join(str(part) for part in prompt)
    elif isinstance(prompt, str):
        options.system_prompt = prompt
    elif isinstance(prompt, dict) and isinstance(prompt.get("append"), str):
        options.system_prompt = None  # the preset: codeloop's own prompt
        options.append_system_prompt = _joined(options.append_system_prompt, prompt["append"])
    if isinstance(init.get("appendSystemPrompt"), str):
        options.append_system_prompt = _joined(
            options.append_system_prompt, init["appendSystemPrompt"]
        )
    if init.get("settings") is not None:
        settings = init["settings"]
        options.settings = settings if isinstance(settings, str) else json.dumps(settings)
        applied["settings_applied"] = True
    if isinstance(init.get("disallowedTools"), list):
        options.disallowed_tools = [*options.disallowed_tools, *map(str, init["disallowedTools"])]
        applied["disallowed_tools_applied"] = True
    if isinstance(init.get("plugins"), list):
        paths = [p["path"] for p in init["plugins"] if isinstance(p, dict) and p.get("path")]
        options.plugin_dirs = [*options.plugin_dirs, *map(str, paths)]
        applied["plugins_applied"] = True
    known = {"sdkMcpServers", "mcpServers", "systemPrompt", "appendSystemPrompt", "settings"}
    known |= {"disallowedTools", "plugins", "jsonSchema", "skills"}
    for key in sorted(set(init) - known - _IGNORED):
        if init[key] is not None:
            print(
                f"codeloop: warning: initialize: {key} is not supported; ignored", file=sys.stderr
            )
    return applied, init.get("jsonSchema")


def _names(init: dict[str, Any]) -> list[str]:
    names = init.get("sdkMcpServers")
    return [str(n) for n in names] if isinstance(names, list) else []


def _joined(first: str | None, second: str) -> str:
    return "\n\n".join(part for part in (first, second) if part)
