"""MCP configuration as Claude Code reads it: entries, `${VAR}` expansion, scopes, approval."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codeloop.errors import UsageError
from codeloop.mcp.names import tool_name
from codeloop.mcp.server_config import (
    ConfigError,
    ServerConfig,
    expand,
    parse_server,
    parse_servers,
)
from codeloop.mcp.sources import (
    McpApproval,
    add_server,
    awaiting_approval,
    cli_servers,
    configured_servers,
    declared_servers,
    plugin_servers,
    remember_approval,
    remove_server,
)
from codeloop.settings.settings_files import load_settings


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return project, {"HOME": str(home)}


def write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


# --- entries -----------------------------------------------------------------------------------


def test_stdio_is_the_default_and_url_means_http() -> None:
    stdio, _ = parse_server("a", {"command": "npx", "args": ["-y", "pkg"], "env": {"K": 1}})
    assert (stdio.transport, stdio.command, stdio.args, dict(stdio.env)) == (
        "stdio",
        "npx",
        ("-y", "pkg"),
        {"K": "1"},
    )
    http, _ = parse_server("b", {"url": "https://example.test/mcp", "headers": {"X": "y"}})
    assert http.transport == "http" and dict(http.headers) == {"X": "y"}
    sse, _ = parse_server("c", {"type": "sse", "url": "http://127.0.0.1:1/sse"})
    assert sse.transport == "sse"
    alias, _ = parse_server("d", {"type": "streamable-http", "url": "http://127.0.0.1:1/mcp"})
    assert alias.transport == "http"


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ({"args": []}, "needs a 'command'"),
        ({"type": "http"}, "needs a 'url'"),
        ({"type": "ws", "url": "ws://x"}, "type 'ws' is not one of"),
        ({"command": "x", "args": "not a list"}, "'args' must be a list of strings"),
        ({"command": "x", "env": {"A": ["list"]}}, "'A' must be a string"),
        ("npx server", "expected an object"),
        ({"type": "http", "url": "http://x", "oauth": {"callbackPort": "80"}}, "callbackPort"),
    ],
)
def test_unusable_entries_say_why(raw: Any, problem: str) -> None:
    with pytest.raises(ConfigError, match="MCP server 'srv'") as caught:
        parse_server("srv", raw)
    assert problem in str(caught.value)


def test_unknown_keys_are_named_not_dropped_silently() -> None:
    config, warnings = parse_server("s", {"command": "x", "alwaysOn": True, "headersHelper": "t"})
    assert config.command == "x"
    assert warnings == [
        "MCP server 's': 'alwaysOn' is not supported; ignored",
        "MCP server 's': 'headersHelper' applies only to http and sse servers; ignored",
    ]
    remote, warnings = parse_server("r", {"url": "http://127.0.0.1:1/mcp", "headersHelper": "t"})
    assert remote.headers_helper == "t" and warnings == []


def test_names_are_checked() -> None:
    with pytest.raises(ConfigError, match="letters, digits"):
        parse_server("my server", {"command": "x"})


def test_a_bad_entry_costs_only_itself() -> None:
    servers, warnings = parse_servers(
        {"good": {"command": "x"}, "bad": {"type": "http"}}, scope="project", source="f"
    )
    assert [s.name for s in servers] == ["good"]
    assert len(warnings) == 1 and "'bad'" in warnings[0] and warnings[0].endswith("not started")


# --- expansion ---------------------------------------------------------------------------------


def test_expansion_with_defaults() -> None:
    env = {"A": "1", "EMPTY": ""}
    assert expand("${A}-${B:-two}-${EMPTY:-three}-${EMPTY}", env) == "1-two-three-"
    assert expand("no $A or ${ here", env) == "no $A or ${ here"
    with pytest.raises(ConfigError, match=r"\$\{MISSING\} is not set"):
        expand("${MISSING}", env)


def test_expansion_covers_command_args_env_url_and_headers() -> None:
    stdio, _ = parse_server(
        "s", {"command": "${BIN}", "args": ["--dir=${DIR:-/tmp}"], "env": {"T": "${TOKEN}"}}
    )
    out = stdio.expanded({"BIN": "/usr/bin/srv", "TOKEN": "t0k"})
    assert (out.command, out.args, dict(out.env)) == ("/usr/bin/srv", ("--dir=/tmp",), {"T": "t0k"})
    http, _ = parse_server(
        "h", {"url": "https://${HOST}/mcp", "headers": {"Authorization": "Bearer ${KEY}"}}
    )
    out = http.expanded({"HOST": "api.test", "KEY": "k"})
    assert out.url == "https://api.test/mcp" and out.headers["Authorization"] == "Bearer k"
    assert http.url == "https://${HOST}/mcp"  # the entry as written is kept for `mcp get`


# --- scopes ------------------------------------------------------------------------------------


def test_scopes_and_their_precedence(world: tuple[Path, dict[str, str]]) -> None:
    project, env = world
    home = Path(env["HOME"])
    write(
        home / ".claude.json",
        {
            "mcpServers": {"shared": {"command": "claude-user"}, "u": {"command": "u"}},
            "projects": {str(project): {"mcpServers": {"shared": {"command": "claude-local"}}}},
        },
    )
    write(
        project / ".mcp.json",
        {"mcpServers": {"shared": {"command": "project"}, "p": {"command": "p"}}},
    )
    write(home / ".codeloop" / "mcp.json", {"mcpServers": {"mine": {"command": "codeloop-user"}}})
    approval = McpApproval(enable_all=True)
    servers = configured_servers(project, env, approval).servers
    by_name = {s.name: s for s in servers}
    assert set(by_name) == {"shared", "u", "p", "mine"}
    assert by_name["shared"].command == "claude-local" and by_name["shared"].scope == "local"
    assert by_name["p"].scope == "project" and by_name["mine"].scope == "user"


def test_project_servers_need_approval(world: tuple[Path, dict[str, str]]) -> None:
    project, env = world
    write(project / ".mcp.json", {"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}})
    none = configured_servers(project, env, McpApproval())
    assert none.servers == [] and [s.name for s in none.unapproved] == ["a", "b"]
    some = configured_servers(project, env, McpApproval(enabled=("a",)))
    assert [s.name for s in some.servers] == ["a"]
    all_but = configured_servers(project, env, McpApproval(enable_all=True, disabled=("b",)))
    assert [s.name for s in all_but.servers] == ["a"]


def test_approval_from_settings_files_and_claude_state(world: tuple[Path, dict[str, str]]) -> None:
    project, env = world
    write(project / ".mcp.json", {"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}})
    write(project / ".claude" / "settings.local.json", {"enabledMcpjsonServers": ["a"]})
    write(
        Path(env["HOME"]) / ".claude.json",
        {"projects": {str(project): {"enabledMcpjsonServers": ["b"]}}},
    )
    settings = load_settings(project, env=env)
    assert McpApproval.of(settings).enabled == ("a",)
    started = configured_servers(project, env, McpApproval.of(settings)).servers
    assert sorted(s.name for s in started) == ["a", "b"]


def test_remembered_approval_is_read_back(world: tuple[Path, dict[str, str]]) -> None:
    project, env = world
    write(project / ".mcp.json", {"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}})
    path = remember_approval(project, ["a"], ["b"])
    assert path == project / ".codeloop" / "settings.local.json"
    settings = load_settings(project, env=env)
    approval = McpApproval.of(settings)
    assert approval.enabled == ("a",) and approval.disabled == ("b",)


def test_only_undecided_project_servers_await_approval(world: tuple[Path, dict[str, str]]) -> None:
    project, env = world
    servers = {name: {"command": name} for name in ("new", "yes", "no")}
    write(project / ".mcp.json", {"mcpServers": servers})
    remember_approval(project, ["yes"], ["no"])
    approval = McpApproval.of(load_settings(project, env=env))
    assert [s.name for s in awaiting_approval(project, env, approval)] == ["new"]
    remember_approval(project, [], [], enable_all=True)
    approval = McpApproval.of(load_settings(project, env=env))
    assert awaiting_approval(project, env, approval) == []


def test_a_missing_variable_costs_its_server_with_a_warning(
    world: tuple[Path, dict[str, str]],
) -> None:
    project, env = world
    write(
        project / ".mcp.json", {"mcpServers": {"x": {"command": "${NOPE}"}, "y": {"command": "y"}}}
    )
    result = configured_servers(project, env, McpApproval(enable_all=True))
    assert [s.name for s in result.servers] == ["y"]
    assert any("${NOPE} is not set" in w for w in result.warnings)


def test_broken_files_are_warnings(world: tuple[Path, dict[str, str]]) -> None:
    project, env = world
    (project / ".mcp.json").write_text("{not json")
    result = configured_servers(project, env, McpApproval(enable_all=True))
    assert result.servers == []
    assert any(".mcp.json is not valid JSON" in w for w in result.warnings)


def test_mcp_config_flag_forms_and_strict(world: tuple[Path, dict[str, str]]) -> None:
    project, env = world
    write(project / ".mcp.json", {"mcpServers": {"file": {"command": "f"}}})
    write(project / "extra.json", {"mcpServers": {"extra": {"command": "e"}}})
    inline = json.dumps(
        {"mcpServers": {"inline": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}}
    )
    approval = McpApproval(enable_all=True)
    both = configured_servers(project, env, approval, mcp_config=["extra.json", inline])
    assert [s.name for s in both.servers] == ["file", "extra", "inline"]
    strict = configured_servers(project, env, approval, mcp_config=[inline], strict=True)
    assert [s.name for s in strict.servers] == ["inline"]


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("missing.json", "no such file"),
        ("{bad", "invalid JSON"),
        ('{"servers": {}}', 'expected {"mcpServers"'),
        ('{"mcpServers": {"x": {"type": "http"}}}', "needs a 'url'"),
        ('{"mcpServers": {"x": {"command": "${UNSET_X}"}}}', "UNSET_X"),
    ],
)
def test_mcp_config_flag_mistakes_are_errors(
    world: tuple[Path, dict[str, str]], value: str, problem: str
) -> None:
    project, env = world
    with pytest.raises(UsageError) as caught:  # exit status 2: the flag is the user's to fix
        configured_servers(project, env, McpApproval(), mcp_config=[value])
    assert problem in str(caught.value)


def test_plugins_add_servers_through_extra(world: tuple[Path, dict[str, str]]) -> None:
    project, env = world
    servers, _ = parse_servers(
        {"plug": {"command": "${ROOT}/bin/server"}}, scope="plugin:demo", source="plugin.json"
    )
    result = configured_servers(project, {**env, "ROOT": "/opt/p"}, McpApproval(), extra=servers)
    assert [(s.name, s.command, s.scope) for s in result.servers] == [
        ("plug", "/opt/p/bin/server", "plugin:demo")
    ]


# --- editing ------------------------------------------------------------------------------------


def test_add_and_remove_in_each_scope(world: tuple[Path, dict[str, str]]) -> None:
    project, env = world
    server = ServerConfig("s", "stdio", command="run", args=("--x",))
    local = add_server(server, "local", project, env)
    shared = add_server(server, "project", project, env)
    user = add_server(server, "user", project, env)
    assert local == user == Path(env["HOME"]) / ".codeloop" / "mcp.json"
    assert local.stat().st_mode & 0o777 == 0o600  # it may hold tokens in env or headers
    assert json.loads(shared.read_text())["mcpServers"]["s"]["args"] == ["--x"]
    with pytest.raises(ConfigError, match="already exists in the local scope"):
        add_server(server, "local", project, env)
    with pytest.raises(ConfigError, match="local and project and user scopes"):
        remove_server("s", None, project, env)
    assert remove_server("s", "project", project, env)[0] == "project"
    assert remove_server("s", "user", project, env)[0] == "user"
    assert remove_server("s", None, project, env)[0] == "local"
    assert declared_servers(project, env)[0] == []


def test_claude_codes_own_file_is_read_but_not_edited(world: tuple[Path, dict[str, str]]) -> None:
    project, env = world
    state = Path(env["HOME"]) / ".claude.json"
    write(state, {"mcpServers": {"theirs": {"command": "x"}}, "numStartups": 12})
    before = state.read_text()
    with pytest.raises(ConfigError, match="Claude Code's own file"):
        remove_server("theirs", None, project, env)
    assert state.read_text() == before


def test_a_file_that_is_not_json_is_never_overwritten(world: tuple[Path, dict[str, str]]) -> None:
    project, env = world
    (project / ".mcp.json").write_text("{oops")
    with pytest.raises(OSError, match="not valid JSON"):
        add_server(ServerConfig("s", command="x"), "project", project, env)
    assert (project / ".mcp.json").read_text() == "{oops"


def test_cli_servers_reads_relative_files(world: tuple[Path, dict[str, str]]) -> None:
    project, _ = world
    write(project / "conf" / "m.json", {"mcpServers": {"a": {"command": "a"}}})
    (server,) = cli_servers("conf/m.json", project)
    assert server.scope == "--mcp-config" and server.source == str(project / "conf" / "m.json")


def test_plugin_servers_get_their_root_and_a_scoped_name(tmp_path: Path) -> None:
    root, data = tmp_path / "plugin", tmp_path / "data"
    servers, warnings = plugin_servers(
        {
            "plugin:kit:db": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/db", "args": ["${HOME}"]},
            "plugin:kit:bad": {"type": "http"},
        },
        {"kit": (root, data)},
    )
    (server,) = servers
    assert server.name == "plugin:kit:db" and server.scope == "plugin:kit"
    assert server.command == f"{root}/bin/db" and server.args == ("${HOME}",)  # HOME: later
    assert server.env["CLAUDE_PLUGIN_ROOT"] == str(root)
    assert server.env["CLAUDE_PLUGIN_DATA"] == str(data)
    assert len(warnings) == 1 and "plugin:kit:bad" in warnings[0]
    assert tool_name(server.name, "query") == "mcp__plugin_kit_db__query"


def test_mcp_timeouts_from_the_environment_and_a_bad_one_said() -> None:
    from codeloop.mcp.setup import timeouts_from_env

    warnings: list[str] = []
    timeouts = timeouts_from_env({"MCP_TIMEOUT": "1500", "MCP_TOOL_TIMEOUT": "2s"}, warnings)
    assert (timeouts.connect, timeouts.tool) == (1.5, 600.0)
    assert warnings == ["MCP_TOOL_TIMEOUT='2s' is not a number of milliseconds; using 600000"]
