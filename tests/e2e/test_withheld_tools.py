"""A deny rule naming a whole tool takes it out of what the model is offered, as Claude Code
filters its tool list: from --disallowedTools and from every settings file, for the session and
its sub-agents, for a built-in and for an MCP server's tools (`mcp__server`,
`mcp__server__*`). A rule with a specifier keeps the tool offered and denies the calls it
matches. Through the real CLI; what was offered is read from the fake server's requests.
(The SDK's initialize `disallowedTools`: tests/e2e/test_initialize_walk.py.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from codeloop.testing.fake_server import FakeModelServer, RecordedRequest
from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.cli import CliRun, provider_env, run_cli
from tests.mcp_servers import python_server

MODEL = "claude-sonnet-4-5"
AGENT_CALL = {"description": "look", "prompt": "Look around.", "subagent_type": "general-purpose"}
# A custom agent with an MCP server of its own, started for it alone.
OWN_SERVER_AGENT = """\
---
name: researcher
description: Looks things up with its own server.
tools: Read
mcpServers:
  - inline:
      command: {python}
      args: ["-m", "codeloop.testing.mcp_server", "--name", "inline"]
---
You research.
"""


def offered(request: RecordedRequest) -> list[str]:
    return [tool["name"] for tool in request.body.get("tools", [])]


def results(request: RecordedRequest) -> list[str]:
    """The text of each tool result in the request's last message."""
    return [
        json.dumps(block.get("content"))
        for block in request.body["messages"][-1]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def run(
    tmp_path: Path,
    scenario: Scenario,
    *args: str,
    settings: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
) -> tuple[CliRun, list[RecordedRequest], Path]:
    project, home = tmp_path / "project", tmp_path / "home"
    for folder in (project, home):
        folder.mkdir(exist_ok=True)
    if settings is not None:
        (project / ".claude").mkdir(exist_ok=True)
        (project / ".claude" / "settings.json").write_text(json.dumps(settings))
    with FakeModelServer(scenario) as server:
        full_env = provider_env(server, "anthropic", home) | {"CODELOOP_HOME": str(home / ".cl")}
        result = run_cli(
            ["-p", "go", "--model", MODEL, "--output-format", "json", *args],
            cwd=project,
            env=full_env | (env or {}),
        )
        return result, server.requests, project


@pytest.mark.parametrize("how", ["flag", "settings", "old name"])
def test_a_tool_denied_whole_is_offered_neither_to_the_session_nor_to_its_agents(
    tmp_path: Path, how: str
) -> None:
    scenario = Scenario(
        turns=(
            turn(tool_use("Agent", AGENT_CALL)),
            turn("Nothing to see."),  # the sub-agent
            turn(tool_use("Bash", {"command": "touch made"})),  # called all the same
            turn("Done."),
        )
    )
    withheld, args, settings = "Bash", ["--permission-mode", "bypassPermissions"], None
    if how == "flag":
        args += ["--disallowedTools", "Bash"]
    elif how == "settings":
        settings = {"permissions": {"deny": ["Bash(*)"]}}  # `(*)`: the whole tool too
    else:
        withheld, settings = "Agent", {"permissions": {"deny": ["Task"]}}  # Agent's old name
    result, requests, project = run(tmp_path, scenario, *args, settings=settings)
    assert result.returncode == 0, result.stderr
    for request in requests:
        assert withheld not in offered(request) and "Read" in offered(request), offered(request)
    if how != "old name":
        assert len(requests) == 4  # the sub-agent's request is among them
        assert "No such tool: Bash" in results(requests[3])[0]
        assert not (project / "made").exists()


def test_a_rule_with_a_specifier_keeps_the_tool_offered_and_denies_what_it_matches(
    tmp_path: Path,
) -> None:
    scenario = Scenario(
        turns=(
            turn(tool_use("Bash", {"command": "touch made"})),
            turn(tool_use("Bash", {"command": "touch other"})),
            turn("Done."),
        )
    )
    flags = ("--allowedTools", "Bash", "--disallowedTools", "Bash(touch made)")
    result, requests, project = run(tmp_path, scenario, *flags)
    assert result.returncode == 0, result.stderr
    assert all("Bash" in offered(request) for request in requests)
    assert "deny rule" in results(requests[1])[0]
    assert not (project / "made").exists() and (project / "other").exists()


@pytest.mark.parametrize(
    ("rule", "where", "gone", "kept"),
    [
        ("mcp__py", "flag", {"mcp__py__echo", "mcp__py__add"}, {"mcp__other__echo"}),
        ("mcp__py__*", "settings", {"mcp__py__echo", "mcp__py__add"}, {"mcp__other__echo"}),
        ("mcp__py__echo", "settings", {"mcp__py__echo"}, {"mcp__py__add", "mcp__other__echo"}),
    ],
)
def test_a_whole_server_rule_withholds_its_tools(
    tmp_path: Path, rule: str, where: str, gone: set[str], kept: set[str]
) -> None:
    servers = {"mcpServers": {"py": python_server(), "other": python_server()}}
    args = ["--mcp-config", json.dumps(servers)]
    settings = None
    if where == "flag":
        args += ["--disallowedTools", rule]
    else:
        settings = {"permissions": {"deny": [rule]}}
    result, requests, _ = run(tmp_path, Scenario(turns=(turn("Hi."),)), *args, settings=settings)
    assert result.returncode == 0, result.stderr
    names = set(offered(requests[0]))
    assert not names & gone and kept <= names, sorted(names)


def test_a_sub_agents_own_server_tool_is_withheld_too(tmp_path: Path) -> None:
    claude = tmp_path / "project" / ".claude"
    (claude / "agents").mkdir(parents=True)
    (claude / "agents" / "researcher.md").write_text(OWN_SERVER_AGENT.format(python=sys.executable))
    (claude / "settings.local.json").write_text(json.dumps({"enableAllProjectMcpServers": True}))
    call = {**AGENT_CALL, "subagent_type": "researcher"}
    scenario = Scenario(turns=(turn(tool_use("Agent", call)), turn("Nothing."), turn("Done.")))
    result, requests, _ = run(tmp_path, scenario, "--disallowedTools", "mcp__inline__echo")
    assert result.returncode == 0, result.stderr
    sub = offered(requests[1])
    assert "mcp__inline__add" in sub and "Read" in sub, sub  # its server came up
    assert "mcp__inline__echo" not in sub


def test_tool_search_neither_lists_nor_loads_a_withheld_tool(tmp_path: Path) -> None:
    search = {"query": "select:mcp__py__echo,mcp__py__add"}
    scenario = Scenario(turns=(turn(tool_use("ToolSearch", search)), turn("Done.")))
    servers = json.dumps({"mcpServers": {"py": python_server()}})
    flags = ("--mcp-config", servers, "--disallowedTools", "mcp__py__echo")
    result, requests, _ = run(tmp_path, scenario, *flags, env={"ENABLE_TOOL_SEARCH": "true"})
    assert result.returncode == 0, result.stderr
    listing = next(t for t in requests[0].body["tools"] if t["name"] == "ToolSearch")
    assert "mcp__py__add" in listing["description"]
    assert "mcp__py__echo" not in listing["description"]
    assert "mcp__py__add" in offered(requests[1]) and "mcp__py__echo" not in offered(requests[1])
    assert "mcp__py__echo" not in results(requests[1])[0]


def test_a_settings_rule_naming_no_tool_is_warned_of_and_the_run_goes_on(tmp_path: Path) -> None:
    """A deny or ask rule naming no tool (a typo, a tool codeloop lacks) restricts nothing:
    one warning each, naming the file and the rule, as Claude Code warns; the others hold."""
    settings = {"permissions": {"deny": ["Frobnicate", "Bash"], "ask": ["Frobnicate(x)"]}}
    result, requests, project = run(tmp_path, Scenario(turns=(turn("Hi."),)), settings=settings)
    assert result.returncode == 0, result.stderr
    warned = [line for line in result.stderr.splitlines() if "matches no known tool" in line]
    path = project / ".claude" / "settings.json"
    assert len(warned) == 2, result.stderr
    assert f"{path}: permissions.deny: 'Frobnicate'" in warned[0]
    assert f"{path}: permissions.ask: 'Frobnicate(x)'" in warned[1]
    assert "Bash" not in offered(requests[0]) and "Read" in offered(requests[0])
