"""MCP servers through `codeloop -p`, end to end: real servers, the real CLI, a scripted model.

The servers are the npm reference ones (`server-everything`, `server-filesystem`) and the
SDK-built Python server over stdio, streamable HTTP and SSE. What reached the model is read
from the fake model server's request log.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.cli import PROVIDER_MODELS, CliRun, provider_env, run_cli
from tests.mcp_servers import (
    approve_all,
    http_server,
    npm_server,
    python_server,
    stdio,
    write_mcp_json,
)


def make_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("print('hello from app')\n")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


def run(
    project: Path,
    tmp_path: Path,
    scenario: Scenario,
    *args: str,
    env: dict[str, str] | None = None,
) -> tuple[CliRun, list[dict[str, Any]]]:
    """`codeloop -p ... --output-format stream-json`; the run and the request bodies."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    with FakeModelServer(scenario) as server:
        full_env = provider_env(server, "anthropic", home) | (env or {})
        result = run_cli(
            ["--output-format", "stream-json", "--model", PROVIDER_MODELS["anthropic"], *args],
            cwd=project,
            env=full_env,
        )
        bodies = [r.body for r in server.requests]
    return result, bodies


def init_line(result: CliRun) -> dict[str, Any]:
    lines = result.json_lines()
    init: dict[str, Any] = next(x for x in lines if x.get("subtype") == "init")
    return init


def tool_results(body: dict[str, Any]) -> list[tuple[str, bool, list[str]]]:
    """The tool results of a request's last message: (text, is_error, content block types)."""
    out = []
    for block in body["messages"][-1]["content"]:
        if block.get("type") != "tool_result":
            continue
        content = block["content"]
        if isinstance(content, str):
            out.append((content, bool(block.get("is_error")), ["text"]))
        else:
            text = "\n".join(b.get("text", "") for b in content if b["type"] == "text")
            out.append((text, bool(block.get("is_error")), [b["type"] for b in content]))
    return out


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body["tools"]]


def test_tools_of_every_kind_of_server_reach_the_model(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    with (
        http_server(tmp_path, "--name", "web") as web,
        http_server(tmp_path, "--name", "legacy", transport="sse") as legacy,
    ):
        write_mcp_json(
            project,
            {
                "py": python_server("--name", "py"),
                "everything": stdio(npm_server("mcp-server-everything")),
                "files": stdio(npm_server("mcp-server-filesystem"), str(project)),
                "web": {"type": "http", "url": web.url},
                "legacy": {"type": "sse", "url": legacy.url},
            },
        )
        approve_all(project)
        scenario = Scenario(
            turns=(
                turn(tool_use("mcp__py__echo", {"text": "stdio"})),
                turn(tool_use("mcp__everything__get-sum", {"a": 19, "b": 23})),
                turn(tool_use("mcp__files__read_text_file", {"path": str(project / "src/app.py")})),
                turn(tool_use("mcp__web__echo", {"text": "streamable"})),
                turn(tool_use("mcp__legacy__echo", {"text": "sse"})),
                turn(tool_use("mcp__py__tiny_image", {})),
                turn(tool_use("mcp__everything__get-tiny-image", {})),
                turn("All five servers answered."),
            )
        )
        allowed = "mcp__py,mcp__everything,mcp__files,mcp__web,mcp__legacy"
        result, bodies = run(project, tmp_path, scenario, "-p", "go", "--allowedTools", allowed)
    assert result.returncode == 0, result.stderr
    init = init_line(result)
    assert {s["name"]: s["status"] for s in init["mcp_servers"]} == {
        "py": "connected",
        "everything": "connected",
        "files": "connected",
        "web": "connected",
        "legacy": "connected",
    }
    assert {"mcp__py__echo", "mcp__everything__get-sum", "mcp__web__echo"} <= set(init["tools"])
    first = tool_names(bodies[0])
    assert "Bash" in first and "mcp__files__read_text_file" in first
    spec = next(t for t in bodies[0]["tools"] if t["name"] == "mcp__everything__get-sum")
    assert set(spec["input_schema"]["properties"]) == {"a", "b"}
    results = [tool_results(b)[0] for b in bodies[1:]]
    assert all(not is_error for _, is_error, _ in results), results
    texts = [text for text, _, _ in results]
    assert texts[0] == "py echoes: stdio"
    assert "42" in texts[1]
    assert texts[2].strip() == "print('hello from app')"
    assert texts[3] == "web echoes: streamable"
    assert texts[4] == "legacy echoes: sse"
    assert results[5][2] == ["image"] and "image" in results[6][2]


def test_unapproved_project_servers_do_not_start_and_it_is_said(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    marker = tmp_path / "started"
    write_mcp_json(project, {"sneaky": python_server("--pid-file", str(marker))})
    result, bodies = run(project, tmp_path, Scenario(turns=(turn("ok"),)), "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert not marker.exists()
    assert "sneaky" in result.stderr and "not approved" in result.stderr
    assert "enabledMcpjsonServers" in result.stderr
    assert init_line(result)["mcp_servers"] == []
    assert not any(n.startswith("mcp__") for n in tool_names(bodies[0]))


def test_an_organizations_allow_and_deny_lists_decide_which_servers_start(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    markers = {name: tmp_path / f"started-{name}" for name in ("kept", "denied", "unlisted")}
    servers = {
        name: python_server("--name", name, "--pid-file", str(marker))
        for name, marker in markers.items()
    }
    write_mcp_json(project, servers)
    approve_all(project)
    managed = tmp_path / "managed"
    managed.mkdir()
    command = lambda name: [servers[name]["command"], *servers[name]["args"]]  # noqa: E731
    policy = {
        "allowManagedMcpServersOnly": True,
        "allowedMcpServers": [
            {"serverCommand": command("kept")},
            {"serverCommand": command("denied")},
        ],
        "deniedMcpServers": [{"serverName": "denied"}],
    }
    (managed / "managed-settings.json").write_text(json.dumps(policy))
    # A user's own allowlist does not widen the managed one.
    settings = project / ".claude" / "settings.json"
    settings.write_text(json.dumps({"allowedMcpServers": [{"serverName": "unlisted"}]}))
    env = {"CODELOOP_MANAGED_DIR": str(managed)}
    result, bodies = run(project, tmp_path, Scenario(turns=(turn("ok"),)), "-p", "hi", env=env)
    assert result.returncode == 0, result.stderr
    assert [s["name"] for s in init_line(result)["mcp_servers"]] == ["kept"]
    assert markers["kept"].exists()
    assert not markers["denied"].exists() and not markers["unlisted"].exists()
    assert "MCP server denied was not started: it is blocked by the deniedMcpServers" in (
        result.stderr
    )
    assert "MCP server unlisted was not started: its command is not in allowedMcpServers" in (
        result.stderr
    )
    assert "mcp__kept__echo" in tool_names(bodies[0])


HELPER = (
    "import json, os; print(json.dumps({'Authorization': 'Bearer dyn-' + "
    "os.environ['CLAUDE_CODE_MCP_SERVER_NAME'], "
    "'X-Saw-Key': os.environ.get('MY_API_KEY', 'none')}))"
)


def test_a_headers_helper_makes_the_headers_of_each_connection(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    with http_server(tmp_path, "--name", "web") as web:
        write_mcp_json(
            project,
            {
                "web": {
                    "type": "http",
                    "url": web.url,
                    "headers": {"X-Test-Token": "static", "Authorization": "Bearer static"},
                    "headersHelper": f'{sys.executable} -c "{HELPER}"',
                },
                "broken": {
                    "type": "http",
                    "url": web.url,
                    "headersHelper": "echo no ticket >&2; exit 3",
                },
            },
        )
        approve_all(project)
        scenario = Scenario(turns=(turn(tool_use("mcp__web__headers", {})), turn("done")))
        result, bodies = run(
            project,
            tmp_path,
            scenario,
            "-p",
            "go",
            "--allowedTools",
            "mcp__web",
            env={"MY_API_KEY": "secret-from-the-environment"},
        )
    assert result.returncode == 0, result.stderr
    # The helper's Authorization wins over the static one; a project's helper does not see
    # the environment's credentials.
    assert tool_results(bodies[1])[0] == (
        "x-test-token=static authorization=Bearer dyn-web x-saw-key=none",
        False,
        ["text"],
    )
    statuses = {s["name"]: s for s in init_line(result)["mcp_servers"]}
    assert statuses["broken"]["status"] == "failed"
    assert "MCP server broken: headersHelper exited with status 3: no ticket" in result.stderr


def test_denied_by_default_then_allowed_by_rule(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    write_mcp_json(project, {"py": python_server()})
    approve_all(project)
    scenario = Scenario(turns=(turn(tool_use("mcp__py__add", {"a": 1, "b": 2})), turn("done")) * 2)
    home = tmp_path / "home"
    home.mkdir()
    with FakeModelServer(scenario) as server:
        env = provider_env(server, "anthropic", home)
        model = ["--model", PROVIDER_MODELS["anthropic"], "--output-format", "json"]
        denied = run_cli(["-p", "add", *model], cwd=project, env=env)
        rule = ["--allowedTools", "mcp__py__add"]
        allowed = run_cli(["-p", "add", *model, *rule], cwd=project, env=env)
        bodies = [r.body for r in server.requests]
    assert denied.returncode == 0 and allowed.returncode == 0, denied.stderr + allowed.stderr
    text, is_error, _ = tool_results(bodies[1])[0]
    assert is_error and "mcp__py__add" in text and "--allowedTools" in text
    assert denied.json()["permission_denials"][0]["tool_input"] == {"a": 1, "b": 2}
    assert tool_results(bodies[3])[0] == ("3", False, ["text"])


def test_a_prompt_runs_as_a_slash_command(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    write_mcp_json(project, {"py": python_server()})
    approve_all(project)
    result, bodies = run(
        project,
        tmp_path,
        Scenario(turns=(turn("Reviewed."),)),
        "-p",
        '/mcp__py__review "src/app.py" security',
    )
    assert result.returncode == 0, result.stderr
    assert "mcp__py__review" in init_line(result)["slash_commands"]
    sent = bodies[0]["messages"][-1]["content"]
    text = sent if isinstance(sent, str) else "".join(b.get("text", "") for b in sent)
    assert "Please review src/app.py, looking for security." in text


def test_a_bad_slash_command_is_one_line_and_no_request(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    write_mcp_json(project, {"py": python_server()})
    approve_all(project)
    result, bodies = run(project, tmp_path, Scenario(turns=(turn("x"),)), "-p", "/mcp__py__review")
    assert result.returncode == 2
    assert "needs file" in result.stderr and "Traceback" not in result.stderr
    assert bodies == []


def test_a_resource_mention_is_attached_and_the_model_reads_another(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    write_mcp_json(
        project, {"py": python_server(), "everything": stdio(npm_server("mcp-server-everything"))}
    )
    approve_all(project)
    scenario = Scenario(
        turns=(
            turn(tool_use("ListMcpResourcesTool", {"server": "everything"})),
            turn(
                tool_use(
                    "ReadMcpResourceTool",
                    {"server": "everything", "uri": "demo://resource/static/document/features.md"},
                )
            ),
            turn("Read it."),
        )
    )
    result, bodies = run(
        project, tmp_path, scenario, "-p", "Summarise @py:notes://greeting please."
    )
    assert result.returncode == 0, result.stderr
    first = json.dumps(bodies[0]["messages"])
    assert "Hello from pyserver" in first and 'uri=\\"notes://greeting\\"' in first
    listing, is_error, _ = tool_results(bodies[1])[0]
    assert not is_error and "demo://resource/static/document/features.md" in listing
    document, is_error, _ = tool_results(bodies[2])[0]
    assert not is_error and len(document) > 100


def test_list_changed_adds_a_tool_the_next_turn_can_call(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    write_mcp_json(project, {"py": python_server()})
    approve_all(project)
    scenario = Scenario(
        turns=(
            turn(tool_use("mcp__py__grow", {"tool": "wave"})),
            turn(tool_use("mcp__py__wave", {})),
            turn("Waved."),
        )
    )
    result, bodies = run(project, tmp_path, scenario, "-p", "grow", "--allowedTools", "mcp__py")
    assert result.returncode == 0, result.stderr
    assert "mcp__py__wave" not in tool_names(bodies[0])
    assert "mcp__py__wave" in tool_names(bodies[1])
    assert tool_results(bodies[2])[0] == ("wave from pyserver says hi", False, ["text"])


def test_a_server_killed_mid_call_is_an_error_result_and_restarts(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    pids = tmp_path / "pids"
    write_mcp_json(
        project,
        {
            "py": python_server("--pid-file", str(pids)),
            "everything": stdio(npm_server("mcp-server-everything")),
        },
    )
    approve_all(project)
    scenario = Scenario(
        turns=(
            turn(tool_use("mcp__py__crash", {})),
            turn(tool_use("mcp__everything__echo", {"message": "still here"})),
            turn(tool_use("mcp__py__echo", {"text": "back"})),
            turn("Survived."),
        )
    )
    allowed = "mcp__py,mcp__everything"
    result, bodies = run(project, tmp_path, scenario, "-p", "crash", "--allowedTools", allowed)
    assert result.returncode == 0, result.stderr
    text, is_error, _ = tool_results(bodies[1])[0]
    assert is_error and "py" in text and "started again" in text
    assert tool_results(bodies[2])[0] == ("Echo: still here", False, ["text"])
    assert tool_results(bodies[3])[0] == ("pyserver echoes: back", False, ["text"])
    assert len(pids.read_text().split()) == 2  # the first process died; a second one answered


def test_a_server_that_never_answers_initialize_does_not_hold_up_the_model(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    write_mcp_json(project, {"mute": python_server("--hang-initialize")})
    approve_all(project)
    result, bodies = run(
        project,
        tmp_path,
        Scenario(turns=(turn("Answered anyway."),)),
        "-p",
        "hi",
        env={"MCP_TIMEOUT": "1500"},
    )
    assert result.returncode == 0, result.stderr
    assert len(bodies) == 1
    assert "MCP server mute failed to start: did not answer within 1.5 s" in result.stderr
    (mute,) = init_line(result)["mcp_servers"]
    assert mute["name"] == "mute" and mute["status"] == "failed"
    assert not any(n.startswith("mcp__") for n in tool_names(bodies[0]))


def test_a_hung_call_times_out_as_an_error_result(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    write_mcp_json(project, {"py": python_server()})
    approve_all(project)
    scenario = Scenario(
        turns=(
            turn(tool_use("mcp__py__hang", {})),
            turn(tool_use("mcp__py__echo", {"text": "after"})),
            turn(tool_use("mcp__py__cancelled", {})),
            turn("ok"),
        )
    )
    result, bodies = run(
        project,
        tmp_path,
        scenario,
        "-p",
        "hang",
        "--allowedTools",
        "mcp__py",
        env={"MCP_TOOL_TIMEOUT": "1000"},
    )
    assert result.returncode == 0, result.stderr
    text, is_error, _ = tool_results(bodies[1])[0]
    assert is_error and "did not answer within 1 s" in text and "MCP_TOOL_TIMEOUT" in text
    assert tool_results(bodies[2])[0] == ("pyserver echoes: after", False, ["text"])
    # codeloop told the server (notifications/cancelled), which stopped the hung call.
    assert tool_results(bodies[3])[0] == ("hang was cancelled", False, ["text"])


def test_mcp_config_flag_and_strict_mode(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    write_mcp_json(project, {"fromfile": python_server()})
    approve_all(project)
    inline = json.dumps({"mcpServers": {"flagged": python_server("--name", "flagged")}})
    scenario = Scenario(turns=(turn("one"), turn("two")))
    home = tmp_path / "home"
    home.mkdir()
    with FakeModelServer(scenario) as server:
        env = provider_env(server, "anthropic", home)
        base = ["--model", PROVIDER_MODELS["anthropic"], "--output-format", "stream-json"]
        both = run_cli(["-p", "a", *base, "--mcp-config", inline], cwd=project, env=env)
        strict = run_cli(
            ["-p", "b", *base, "--mcp-config", inline, "--strict-mcp-config"], cwd=project, env=env
        )
    assert both.returncode == 0 and strict.returncode == 0, both.stderr + strict.stderr
    assert {s["name"] for s in init_line(both)["mcp_servers"]} == {"fromfile", "flagged"}
    assert {s["name"] for s in init_line(strict)["mcp_servers"]} == {"flagged"}


def test_a_bad_mcp_config_flag_is_a_usage_error(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    result, bodies = run(
        project, tmp_path, Scenario(turns=(turn("x"),)), "-p", "hi", "--mcp-config", "nope.json"
    )
    assert result.returncode == 2
    assert "--mcp-config nope.json: no such file" in result.stderr
    assert bodies == []


def test_env_expansion_reaches_the_server(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    write_mcp_json(
        project,
        {
            "everything": stdio(
                npm_server("mcp-server-everything"),
                env={"GREETING": "${MY_GREETING:-fallback}", "TOKEN": "${MY_TOKEN}"},
            ),
            "broken": python_server(env={"X": "${UNSET_VARIABLE_FOR_TEST}"}),
        },
    )
    approve_all(project)
    scenario = Scenario(turns=(turn(tool_use("mcp__everything__get-env", {})), turn("ok")))
    result, bodies = run(
        project,
        tmp_path,
        scenario,
        "-p",
        "env",
        "--allowedTools",
        "mcp__everything",
        env={"MY_TOKEN": "secret-42"},
    )
    assert result.returncode == 0, result.stderr
    text, is_error, _ = tool_results(bodies[1])[0]
    assert not is_error and "fallback" in text and "secret-42" in text
    assert "broken" in result.stderr and "${UNSET_VARIABLE_FOR_TEST} is not set" in result.stderr


@pytest.mark.parametrize("mode", ["true", "auto"])
def test_tool_search_defers_many_tools_and_loads_the_ones_asked_for(
    tmp_path: Path, mode: str
) -> None:
    project = make_project(tmp_path)
    write_mcp_json(project, {"big": python_server("--tools", "100")})
    approve_all(project)
    scenario = Scenario(
        turns=(
            turn(tool_use("ToolSearch", {"query": "select:tool_042"})),
            turn(tool_use("mcp__big__tool_042", {"query": "x"})),
            turn("done"),
        )
    )
    env = {"ENABLE_TOOL_SEARCH": mode, "CODELOOP_CONTEXT_WINDOW": "100000"}
    result, bodies = run(
        project, tmp_path, scenario, "-p", "find", "--allowedTools", "mcp__big", env=env
    )
    assert result.returncode == 0, result.stderr
    first = tool_names(bodies[0])
    assert "ToolSearch" in first and "mcp__big__tool_042" not in first
    search = next(t for t in bodies[0]["tools"] if t["name"] == "ToolSearch")
    assert "mcp__big__tool_042: Search collection number 42" in search["description"]
    loaded, is_error, _ = tool_results(bodies[1])[0]
    assert not is_error and '"input_schema"' in loaded
    assert "mcp__big__tool_042" in tool_names(bodies[1])
    assert "mcp__big__tool_041" not in tool_names(bodies[1])
    assert tool_results(bodies[2])[0] == ("tool 42: x (limit 10)", False, ["text"])


BROWSER = """\
import sys, urllib.request
# A user who clicks "allow": follow the authorization server's redirects to codeloop's page.
with urllib.request.urlopen(sys.argv[1], timeout=30) as page:
    page.read()
"""


def test_oauth_login_use_and_refresh(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    browser = tmp_path / "browser.py"
    browser.write_text(BROWSER)
    scenario = Scenario(
        turns=(
            turn("no tools yet"),
            turn(tool_use("mcp__secure__echo", {"text": "with a token"})),
            turn("done"),
            turn(tool_use("mcp__secure__echo", {"text": "refreshed"})),
            turn("done again"),
        )
    )
    with (
        http_server(tmp_path, "--auth", "--name", "secure") as secure,
        FakeModelServer(scenario) as model,
    ):
        env = provider_env(model, "anthropic", home) | {"BROWSER": f"{sys.executable} {browser} %s"}
        added = run_cli(
            ["mcp", "add", "--transport", "http", "secure", secure.url], cwd=project, env=env
        )
        assert added.returncode == 0, added.stderr
        base = ["--model", PROVIDER_MODELS["anthropic"], "--output-format", "stream-json"]
        allow = ["--allowedTools", "mcp__secure"]
        before = run_cli(["-p", "hi", *base], cwd=project, env=env)
        login = run_cli(["mcp", "login", "secure"], cwd=project, env=env)
        used = run_cli(["-p", "echo", *base, *allow], cwd=project, env=env)
        (token_file,) = (home / ".codeloop" / "mcp-auth").glob("secure-*.json")
        stored = json.loads(token_file.read_text())
        stored["expires_at"] = 0  # as if an hour had passed
        token_file.write_text(json.dumps(stored))
        refreshed = run_cli(["-p", "echo", *base, *allow], cwd=project, env=env)
        bodies = [r.body for r in model.requests]
        server_log = secure.stderr()
    assert before.returncode == 0, before.stderr
    assert "secure needs you to log in" in before.stderr
    assert "codeloop mcp login secure" in before.stderr
    assert init_line(before)["mcp_servers"][0]["status"] == "needs-auth"
    assert login.returncode == 0, login.stderr + login.stdout
    assert "Logged in to secure" in login.stdout
    assert token_file.stat().st_mode & 0o777 == 0o600
    assert token_file.parent.stat().st_mode & 0o777 == 0o700
    assert used.returncode == 0, used.stderr
    assert tool_results(bodies[2])[0] == ("secure echoes: with a token", False, ["text"])
    assert refreshed.returncode == 0, refreshed.stderr
    assert tool_results(bodies[4])[0] == ("secure echoes: refreshed", False, ["text"])
    assert server_log.count("issued authorization_code") == 1
    assert server_log.count("issued refresh_token") == 1
    new = json.loads(token_file.read_text())
    assert new["tokens"]["access_token"] != stored["tokens"]["access_token"]
    assert new["expires_at"] > 0


def test_ctrl_c_while_a_server_starts_stops_at_once(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    started = tmp_path / "started"
    os.mkfifo(started)  # the server's pid arrives here once it runs: codeloop is waiting on it
    write_mcp_json(
        project, {"mute": python_server("--hang-initialize", "--pid-file", str(started))}
    )
    approve_all(project)
    home = tmp_path / "home"
    home.mkdir()
    with FakeModelServer(Scenario(turns=(turn("never"),))) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "codeloop", "-p", "hi", "--model", PROVIDER_MODELS["anthropic"]],
            cwd=project,
            env=provider_env(server, "anthropic", home) | {"MCP_TIMEOUT": "120000"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        with started.open() as fifo:
            assert fifo.readline().strip().isdigit()
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)  # far less than MCP_TIMEOUT
        requests = server.requests
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert requests == []


AGENT = """\
---
name: researcher
description: Looks things up with the project's servers.
tools: Read
mcpServers:
  - py
  - inline:
      command: {python}
      args: ["-m", "codeloop.testing.mcp_server", "--name", "inline"]
---
You research.
"""


def test_a_custom_agents_own_servers_are_connected_for_it_alone(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    write_mcp_json(project, {"py": python_server()})
    approve_all(project)  # the agent file comes with the project: its server needs approval too
    agents = project / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "researcher.md").write_text(AGENT.format(python=sys.executable))
    task = {"description": "look up", "prompt": "Ask both.", "subagent_type": "researcher"}
    scenario = Scenario(
        turns=(
            turn(tool_use("Task", task)),
            turn(tool_use("mcp__inline__echo", {"text": "own"})),  # the sub-agent
            turn(tool_use("mcp__py__echo", {"text": "shared"})),
            turn("Both answered."),
            turn("Done."),  # the main agent
        )
    )
    allowed = "mcp__inline,mcp__py"
    result, bodies = run(project, tmp_path, scenario, "-p", "go", "--allowedTools", allowed)
    assert result.returncode == 0, result.stderr
    main, sub = tool_names(bodies[0]), tool_names(bodies[1])
    assert not any(name.startswith("mcp__inline__") for name in main)
    assert "mcp__inline__echo" in sub and "mcp__py__echo" in sub  # beyond its `tools: Read`
    assert "Bash" not in sub and "Read" in sub
    assert tool_results(bodies[2])[0] == ("inline echoes: own", False, ["text"])
    assert tool_results(bodies[3])[0] == ("pyserver echoes: shared", False, ["text"])
    assert [s["name"] for s in init_line(result)["mcp_servers"]] == ["py"]
