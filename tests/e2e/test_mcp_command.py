"""`codeloop mcp add|add-json|list|get|remove`: the commands and the files they write."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.cli import CliRun, run_cli
from tests.mcp_servers import PY_SERVER


def mcp(project: Path, home: Path, *args: str) -> CliRun:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    return run_cli(["mcp", *args], cwd=project, env=env)


def test_add_list_get_remove(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    added = mcp(project, home, "add", "-e", "GREETING=hi", "py", "--", *PY_SERVER, "--name", "py")
    assert added.returncode == 0, added.stderr
    assert "to the local scope" in added.stdout
    shared = mcp(
        project,
        home,
        "add",
        "-s",
        "project",
        "--transport",
        "http",
        "web",
        "http://127.0.0.1:9/mcp",
        "--header",
        "Authorization: Bearer ${TOKEN}",
    )
    assert shared.returncode == 0, shared.stderr
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["web"]
    assert entry == {
        "type": "http",
        "url": "http://127.0.0.1:9/mcp",
        "headers": {"Authorization": "Bearer ${TOKEN}"},
    }
    as_json = mcp(project, home, "add-json", "-s", "user", "j", '{"command": "no-such-command"}')
    assert as_json.returncode == 0, as_json.stderr
    local = json.loads((home / ".codeloop" / "mcp.json").read_text())
    assert local["projects"][str(project)]["mcpServers"]["py"]["env"] == {"GREETING": "hi"}
    assert local["mcpServers"]["j"]["command"] == "no-such-command"

    listed = mcp(project, home, "list")
    assert listed.returncode == 0, listed.stderr
    lines = {line.split(":")[0]: line for line in listed.stdout.splitlines() if ": " in line}
    assert "✓ connected (10 tools)" in lines["py"]
    assert "not approved" in lines["web"]
    assert "✗ failed: command not found: no-such-command" in lines["j"]

    got = mcp(project, home, "get", "web")
    assert got.returncode == 0, got.stderr
    assert "Scope: project" in got.stdout and "Authorization: Bearer ${TOKEN}" in got.stdout

    dup = mcp(project, home, "add", "py", "--", "x")
    assert dup.returncode == 1 and "already exists in the local scope" in dup.stderr
    removed = mcp(project, home, "remove", "web")
    assert removed.returncode == 0 and "from the project scope" in removed.stdout
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"] == {}
    missing = mcp(project, home, "get", "web")
    assert missing.returncode == 1 and "no MCP server named 'web'" in missing.stderr


def test_mistakes_are_one_line(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    cases = [
        (["add", "srv"], "say what to run"),
        (["add", "-t", "http", "srv", "a", "b"], "takes one URL"),
        (["add", "-e", "NOEQUALS", "srv", "--", "x"], "expected KEY=VALUE"),
        (["add", "-H", "x", "-t", "sse", "srv", "http://127.0.0.1:9/sse"], "'Name: value'"),
        (["add", "bad name", "--", "x"], "letters, digits"),
        (["add-json", "srv", "{nope"], "invalid JSON"),
        (["remove", "ghost"], "no MCP server named 'ghost'"),
        (["login", "ghost"], "no MCP server named 'ghost'"),
        (["frobnicate"], "invalid choice"),
    ]
    for args, message in cases:
        result = mcp(project, home, *args)
        assert result.returncode in (1, 2), (args, result)
        assert message in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, (args, result.stderr)


def test_a_url_given_as_a_command_is_warned_about(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    result = mcp(project, home, "add", "srv", "https://example.test/mcp")
    assert result.returncode == 0
    assert "looks like a URL" in result.stderr and "--transport http" in result.stderr
