"""The MCP allowlist and denylist, checked against the cases Claude Code's managed-MCP page
walks through, and merged from real settings files (managed ones in CODELOOP_MANAGED_DIR)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codeloop.mcp.server_config import ServerConfig
from codeloop.mcp.server_policy import McpPolicy, url_matches
from codeloop.settings.settings_files import load_settings


def http(name: str, url: str) -> ServerConfig:
    return ServerConfig(name, "http", url=url)


def stdio(name: str, *argv: str) -> ServerConfig:
    return ServerConfig(name, "stdio", command=argv[0], args=argv[1:])


@pytest.mark.parametrize(
    ("pattern", "url", "expected"),
    [
        ("https://mcp.example.com/*", "https://mcp.example.com/api", True),
        ("https://mcp.example.com", "https://mcp.example.com/any/path", True),
        ("https://*.example.com/*", "https://api.example.com/mcp", True),
        ("https://*.example.com/*", "https://example.org/mcp", False),
        ("http://localhost:*/*", "http://localhost:8931/mcp", True),
        ("*://mcp.example.com/*", "http://mcp.example.com/x", True),
        ("https://Mcp.Example.com/*", "https://mcp.example.com./api", True),
        ("https://mcp.example.com/API/*", "https://mcp.example.com/api/x", False),
        ("https://mcp.example.com/*", "https://mcp.example.com.evil.org/x", False),
    ],
)
def test_url_patterns(pattern: str, url: str, expected: bool) -> None:
    assert url_matches(pattern, url) is expected


def blocked(policy: McpPolicy, server: ServerConfig) -> bool:
    return policy.blocked(server, {"HOME": "/home/u"}) is not None


def test_the_documented_evaluation_order() -> None:
    mixed = McpPolicy(
        allowed=({"serverName": "github"}, {"serverCommand": ["npx", "-y", "approved-package"]})
    )
    assert not blocked(mixed, stdio("local-tool", "npx", "-y", "approved-package"))
    assert blocked(mixed, stdio("local-tool", "node", "server.js"))
    assert blocked(mixed, stdio("github", "node", "server.js"))  # commands listed: names no use
    assert not blocked(mixed, http("github", "https://x.example.com"))
    assert blocked(mixed, http("other-api", "https://x.example.com"))
    # Commands match exactly, after ${VAR} expansion of the entry.
    exact = McpPolicy(allowed=({"serverCommand": ["${HOME}/bin/server", "-y"]},))
    assert not blocked(exact, stdio("s", "/home/u/bin/server", "-y"))
    assert blocked(exact, stdio("s", "/home/u/bin/server"))
    assert blocked(exact, http("s", "https://x.example.com"))  # no URL or name entry
    # The denylist wins over the allowlist; an empty allowlist allows nothing.
    both = McpPolicy(
        allowed=({"serverUrl": "https://*.example.com/*"},),
        denied=({"serverUrl": "https://staging.example.com/*"},),
    )
    assert not blocked(both, http("a", "https://mcp.example.com/api"))
    assert blocked(both, http("a", "https://staging.example.com/api"))
    assert blocked(McpPolicy(allowed=()), stdio("any", "x"))
    assert not blocked(McpPolicy(), stdio("any", "x"))
    why = McpPolicy(denied=({"serverName": "dangerous"},)).blocked(stdio("dangerous", "x"), {})
    assert why == "it is blocked by the deniedMcpServers entry {\"serverName\": 'dangerous'}"


def test_lists_merge_and_allow_managed_only_keeps_the_managed_allowlist(tmp_path: Path) -> None:
    home, project, managed = tmp_path / "home", tmp_path / "project", tmp_path / "managed"
    for folder in (home / ".claude", project / ".claude", managed):
        folder.mkdir(parents=True)
    env = {"HOME": str(home), "CODELOOP_MANAGED_DIR": str(managed)}
    user = {
        "allowedMcpServers": [{"serverName": "mine"}],
        "deniedMcpServers": [{"serverName": "noisy"}],
    }
    (home / ".claude" / "settings.json").write_text(json.dumps(user))
    policy = {"allowedMcpServers": [{"serverUrl": "https://corp.example.com/*"}]}
    (managed / "managed-settings.json").write_text(json.dumps(policy))
    settings = load_settings(project, env=env)
    assert settings.allowed_mcp_servers == (
        {"serverName": "mine"},
        {"serverUrl": "https://corp.example.com/*"},
    )
    assert settings.denied_mcp_servers == ({"serverName": "noisy"},)
    assert not [u for u in settings.unsupported if "McpServers" in u.key]
    policy["allowManagedMcpServersOnly"] = True  # type: ignore[assignment]
    (managed / "managed-settings.json").write_text(json.dumps(policy))
    settings = load_settings(project, env=env)
    assert settings.allowed_mcp_servers == ({"serverUrl": "https://corp.example.com/*"},)
    assert settings.denied_mcp_servers == ({"serverName": "noisy"},)  # denials still merge


def test_an_agents_inline_servers_pass_the_approval_and_the_policy(tmp_path: Path) -> None:
    from codeloop.extensions.agents import AgentDefinition
    from codeloop.mcp.agent_servers import AgentMcp
    from codeloop.mcp.server_config import Timeouts
    from codeloop.mcp.sources import McpApproval

    project = tmp_path / "project"
    home = tmp_path / "home"
    home.mkdir()
    project.mkdir()
    source = project / ".claude" / "agents" / "a.md"
    entry = {"one": {"command": "x"}, "two": {"command": "y"}}
    agent = AgentDefinition("a", "d", "", mcp_servers=(entry,), source=str(source))
    notes: list[str] = []
    env = {"HOME": str(home)}

    def mcp(approval: McpApproval, policy: McpPolicy) -> AgentMcp:
        return AgentMcp(env, project, approval, policy, Timeouts())

    assert mcp(McpApproval(), McpPolicy())._inline(agent, entry, notes.append) == []
    assert len(notes) == 2 and "need approval" in notes[0] and "enabledMcpjsonServers" in notes[0]
    notes.clear()
    policy = McpPolicy(denied=({"serverName": "two"},))
    kept = mcp(McpApproval(enable_all=True), policy)._inline(agent, entry, notes.append)
    assert [c.name for c in kept] == ["one"] and "deniedMcpServers" in notes[0]
    # An agent file from outside the project (the user's) needs no project approval.
    user_agent = AgentDefinition("a", "d", "", mcp_servers=(entry,), source=str(home / "a.md"))
    kept = mcp(McpApproval(), McpPolicy())._inline(user_agent, entry, notes.append)
    assert [c.name for c in kept] == ["one", "two"]
