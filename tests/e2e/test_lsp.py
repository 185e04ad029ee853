"""Language servers from a plugin's `lspServers`, end to end: the real CLI, the scripted model
on the fake server, and real pyright (tests/lsp/node, installed by .ci/run with npm ci).

Each server is started through a small wrapper that notes its pid (the group's leader: the
wrapper execs the server) in the plugin's folder, so a test can tell which servers ran and
that none of them outlives codeloop."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]
import pytest

from codeloop.system.procs import group_running
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.cli import PROVIDER_MODELS, CliRun, provider_env
from tests.e2e.test_claude_compat import run_all, text_of

NODE_BIN = Path(__file__).resolve().parents[1] / "lsp" / "node" / "node_modules" / ".bin"
PYRIGHT = NODE_BIN / "pyright-langserver"
TYPESCRIPT = NODE_BIN / "typescript-language-server"

pytestmark = pytest.mark.skipif(
    not PYRIGHT.exists(), reason="pyright is not installed (npm ci --prefix tests/lsp/node)"
)

SHAPES = """\
import math


def area(radius: float) -> float:
    return math.pi * radius * radius


def describe(radius: float) -> str:
    return f"area {area(radius)}"
"""
OTHER = """\
def area(side: int) -> int:
    return side * side
"""
MAIN = """\
from pkg.shapes import area, describe
from pkg import other

print(area(2.0), describe(1.0), other.area(3))
"""


def make_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "shapes.py").write_text(SHAPES)
    (project / "pkg" / "other.py").write_text(OTHER)
    (project / "main.py").write_text(MAIN)
    (project / "notes.txt").write_text("not code\n")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


def wrapper(plugin: Path, name: str, body: str) -> str:
    """A server's command: notes its pid in `pids`, then becomes `body`."""
    script = plugin / f"{name}.sh"
    script.write_text(f'#!/bin/sh\necho $$ >> "$CLAUDE_PLUGIN_ROOT/pids"\nexec {body}\n')
    script.chmod(0o755)
    return "${CLAUDE_PLUGIN_ROOT}/" + script.name


def pyright_server(plugin: Path, **extra: Any) -> dict[str, Any]:
    return {
        "command": wrapper(plugin, "pyright", f'"{PYRIGHT}" "$@"'),
        "args": ["--stdio"],
        "extensionToLanguage": {".py": "python"},
        **extra,
    }


def make_plugin(
    tmp_path: Path,
    servers: Callable[[Path], dict[str, Any]] | None,
    *,
    lsp_json: bool = False,
) -> Path:
    """A plugin folder whose manifest configures `servers(plugin)` inline (or .lsp.json does)."""
    plugin = tmp_path / "lsp-plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    manifest: dict[str, Any] = {"name": "lsp-kit", "version": "1.0.0"}
    if servers is not None and lsp_json:
        (plugin / ".lsp.json").write_text(json.dumps(servers(plugin)))
    elif servers is not None:
        manifest["lspServers"] = servers(plugin)
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    return plugin


def run(
    tmp_path: Path, project: Path, plugin: Path, scenario: Scenario, *args: str
) -> tuple[CliRun, list[dict[str, Any]]]:
    (result,), bodies = run_all(
        project,
        tmp_path,
        scenario,
        [["-p", "look at the code", "--plugin-dir", str(plugin), *args]],
    )
    return result, bodies


def results(body: dict[str, Any]) -> list[str]:
    """The tool results of a request's last message, in call order."""
    blocks = body["messages"][-1]["content"]
    return [text_of(b["content"]) for b in blocks if b["type"] == "tool_result"]


def pids(plugin: Path) -> list[int]:
    path = plugin / "pids"
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def lsp(operation: str, path: str, line: int = 1, character: int = 1, **more: Any) -> Any:
    return tool_use(
        "LSP",
        {"operation": operation, "filePath": path, "line": line, "character": character, **more},
    )


EXPECTED_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["operation", "filePath", "line", "character"],
    # Claude Code's, in its order.
    "operations": [
        "goToDefinition",
        "findReferences",
        "hover",
        "documentSymbol",
        "workspaceSymbol",
        "goToImplementation",
        "prepareCallHierarchy",
        "incomingCalls",
        "outgoingCalls",
    ],
}


def test_lsp_is_offered_with_claude_codes_schema_when_a_plugin_names_a_server(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    plugin = make_plugin(tmp_path, lambda p: {"pyright": pyright_server(p, bogusField=1)})
    result, bodies = run(tmp_path, project, plugin, Scenario(turns=(turn("ok"),)))
    assert result.returncode == 0, result.stderr
    (spec,) = [t for t in bodies[0]["tools"] if t["name"] == "LSP"]
    schema = spec["input_schema"]
    assert schema["type"] == EXPECTED_SCHEMA["type"]
    assert schema["additionalProperties"] is False
    assert schema["required"] == EXPECTED_SCHEMA["required"]
    assert set(schema["properties"]) == {"operation", "filePath", "line", "character", "query"}
    assert schema["properties"]["operation"]["enum"] == EXPECTED_SCHEMA["operations"]
    assert schema["properties"]["line"]["type"] == "integer"
    assert schema["properties"]["character"]["type"] == "integer"
    # The unknown field is named, once, and the server is still configured.
    assert result.stderr.count("bogusField") == 1, result.stderr
    # Lazily: no call for a Python file, no server started.
    assert pids(plugin) == []


@pytest.mark.parametrize("configured", ["no lspServers", "a server in .lsp.json"])
def test_lsp_is_offered_only_when_a_server_is_configured(tmp_path: Path, configured: str) -> None:
    project = make_project(tmp_path)
    with_server = configured != "no lspServers"
    plugin = make_plugin(
        tmp_path, (lambda p: {"py": pyright_server(p)}) if with_server else None, lsp_json=True
    )
    result, bodies = run(tmp_path, project, plugin, Scenario(turns=(turn("ok"),)))
    assert result.returncode == 0, result.stderr
    names = [t["name"] for t in bodies[0]["tools"]]
    assert ("LSP" in names) is with_server


def test_definitions_references_and_the_rest_come_from_the_server_across_files(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    plugin = make_plugin(tmp_path, lambda p: {"pyright": pyright_server(p)})
    calls = turn(
        lsp("goToDefinition", "main.py", 4, 7),  # area(2.0): pkg/shapes.py's
        lsp("goToDefinition", str(project / "main.py"), 4, 39),  # other.area(3): pkg/other.py's
        lsp("findReferences", "pkg/shapes.py", 4, 5),
        lsp("hover", "main.py", 1, 24),
        lsp("documentSymbol", "pkg/shapes.py"),
        lsp("workspaceSymbol", "main.py", query="describe"),
        lsp("incomingCalls", "pkg/shapes.py", 4, 5),
        lsp("outgoingCalls", "pkg/shapes.py", 8, 5),
        lsp("prepareCallHierarchy", "pkg/shapes.py", 8, 5),
    )
    result, bodies = run(tmp_path, project, plugin, Scenario(turns=(calls, turn("done"))))
    assert result.returncode == 0, result.stderr
    (
        definition,
        other_definition,
        references,
        hover,
        symbols,
        workspace,
        incoming,
        outgoing,
        item,
    ) = results(bodies[1])
    assert definition == "Defined in pkg/shapes.py:4:5"
    assert other_definition == "Defined in pkg/other.py:1:5"
    # The references of shapes.area: in shapes.py and main.py, never other.py's namesake.
    assert references.startswith("Found 4 references across 2 files:"), references
    assert "pkg/shapes.py:\n  Line 4:5:" in references
    assert "main.py:\n  Line 1:24:" in references and "Line 4:7:" in references
    assert "other.py" not in references and "Line 4:40" not in references
    assert "def area(radius: float) -> float" in hover
    assert "area (Function) - Line 4:5" in symbols and "describe (Function) - Line 8:5" in symbols
    assert "describe (Function)" in workspace and "pkg/shapes.py:8:5" in workspace
    assert "describe (Function) - pkg/shapes.py:8:5" in incoming and "calls at 9:20" in incoming
    assert "main.py" in incoming
    assert "area (Function) - pkg/shapes.py:4:5" in outgoing
    assert "describe (Function) - pkg/shapes.py:8:5" in item
    # One server served every call, and the session stopped it.
    (pid,) = pids(plugin)
    assert not group_running(pid)


def test_errors_are_clear_and_name_the_cause(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    (project / "broken.crash").write_text("x\n")
    (project / "slow.hang").write_text("x\n")

    def servers(plugin: Path) -> dict[str, Any]:
        return {
            "pyright": pyright_server(plugin),
            "crashing": {
                "command": wrapper(plugin, "crash", "sh -c 'echo boom: no runtime >&2; exit 3'"),
                "extensionToLanguage": {".crash": "crash"},
            },
            "silent": {
                "command": wrapper(plugin, "silent", "sleep 600"),
                "extensionToLanguage": {".hang": "hang"},
                "startupTimeout": 1500,
            },
        }

    plugin = make_plugin(tmp_path, servers)
    calls = turn(
        lsp("hover", "notes.txt"),
        lsp("hover", "main.py", 99, 1),
        lsp("hover", "main.py", 4, 80),
        lsp("hover", "missing.py"),
        lsp("hover", "broken.crash"),
        lsp("hover", "slow.hang"),
        lsp("goToImplementation", "main.py", 4, 7),
    )
    write = turn(tool_use("Write", {"file_path": str(project / "new.crash"), "content": "y\n"}))
    scenario = Scenario(turns=(calls, write, turn("done")))
    result, bodies = run(tmp_path, project, plugin, scenario, "--permission-mode", "acceptEdits")
    assert result.returncode == 0, result.stderr
    blocks = [b for b in bodies[1]["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert all(b.get("is_error") for b in blocks), blocks
    text, line, column, missing, crashed, silent, unsupported = [
        text_of(b["content"]) for b in blocks
    ]
    assert "No language server is configured for .txt files" in text and ".py" in text
    assert "line 99 is outside the file, which has 4 lines" in line
    assert "character 80 is outside line 4" in column
    assert "does not exist" in missing
    assert "crashing" in crashed and "boom: no runtime" in crashed
    assert "silent" in silent and "did not answer the initialize within 1.5 s" in silent
    assert "does not support goToImplementation" in unsupported
    # An edit the server cannot check says so, with why.
    (written,) = results(bodies[2])
    assert "Edits are not checked by the language server" in written
    assert "boom: no runtime" in written
    assert "Traceback" not in result.stderr
    started = pids(plugin)
    assert len(started) == 3  # pyright, the crashing one, the silent one
    assert not any(group_running(pid) for pid in started)


def test_an_edit_that_brings_a_type_error_tells_the_model_pyrights_message(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    # A problem that was there before: never told as the edit's.
    (project / "main.py").write_text(MAIN + 'count: int = "zero"\n')
    plugin = make_plugin(tmp_path, lambda p: {"pyright": pyright_server(p)})
    broken = "print(area('2.0'), describe(1.0), other.area(3))"
    fixed = "print(area(2.0), describe(1.0), other.area(3))"
    main = str(project / "main.py")
    scenario = Scenario(
        turns=(
            turn(tool_use("Read", {"file_path": main})),
            turn(
                tool_use(
                    "Edit",
                    {
                        "file_path": str(project / "main.py"),
                        "old_string": fixed,
                        "new_string": broken,
                    },
                )
            ),
            turn(
                tool_use(
                    "Edit",
                    {
                        "file_path": str(project / "main.py"),
                        "old_string": broken,
                        "new_string": fixed,
                    },
                )
            ),
            turn("done"),
        )
    )
    result, bodies = run(tmp_path, project, plugin, scenario, "--permission-mode", "acceptEdits")
    assert result.returncode == 0, result.stderr
    assert len(bodies) == 4
    # Within two requests of the edit (here: the first, with the edit's own result).
    after_edit = json.dumps(bodies[2]["messages"][-1], ensure_ascii=False) + json.dumps(
        bodies[3]["messages"][-3:], ensure_ascii=False
    )
    assert "main.py" in after_edit
    assert "Argument of type" in after_edit and "[reportArgumentType] (Pyright)" in after_edit
    assert "✘ [Line 4:12]" in after_edit
    assert "reportAssignmentType" not in after_edit
    # The fix brings nothing new, and the problem that was fixed is not told again.
    assert "new-diagnostics" not in json.dumps(bodies[3]["messages"][-1])
    (pid,) = pids(plugin)
    assert not group_running(pid)


@pytest.mark.parametrize("restarts", [3, 0])
def test_a_crashed_server_is_started_again_within_its_restarts(
    tmp_path: Path, restarts: int
) -> None:
    project = make_project(tmp_path)
    plugin = make_plugin(tmp_path, lambda p: {"pyright": pyright_server(p, maxRestarts=restarts)})
    kill = f"kill -9 $(head -n 1 {plugin / 'pids'})"
    scenario = Scenario(
        turns=(
            turn(lsp("hover", "main.py", 1, 24)),
            turn(tool_use("Bash", {"command": kill})),
            turn(lsp("hover", "main.py", 1, 24)),
            turn("done"),
        )
    )
    result, bodies = run(
        tmp_path, project, plugin, scenario, "--permission-mode", "bypassPermissions"
    )
    assert result.returncode == 0, result.stderr
    (again,) = results(bodies[3])
    started = pids(plugin)
    if restarts:
        assert "def area(radius: float) -> float" in again
        assert len(started) == 2
    else:
        assert "is not started again (restarted 0 of 0 times)" in again, again
        assert len(started) == 1
    assert not any(group_running(pid) for pid in started)


def test_no_server_outlives_a_kill_9_of_codeloop(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    plugin = make_plugin(tmp_path, lambda p: {"pyright": pyright_server(p)})
    home = tmp_path / "home"
    home.mkdir()
    scenario = Scenario(
        turns=(turn(lsp("hover", "main.py", 1, 24)), turn("still thinking", delay=120))
    )
    with FakeModelServer(scenario) as server:
        env = provider_env(server, "anthropic", home)
        args = ["-p", "look", "--model", PROVIDER_MODELS["anthropic"], "--plugin-dir", str(plugin)]
        proc = subprocess.Popen(
            [sys.executable, "-m", "codeloop", *args],
            cwd=project,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            # The second request carries the hover's result: the server ran by then.
            requests = server.wait_for_requests(2, timeout=120)
            assert "def area" in json.dumps(requests[1].body)
            (pid,) = pids(plugin)
            assert group_running(pid)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
    # The reaper's watchdog kills the group once codeloop's pipe closes.
    with contextlib.suppress(psutil.NoSuchProcess):
        psutil.Process(pid).wait(timeout=10)
    assert not group_running(pid)


def test_a_second_language_typescript_answers_and_reports_after_an_edit(tmp_path: Path) -> None:
    project = tmp_path / "web"
    (project / "src").mkdir(parents=True)
    (project / "src" / "shapes.ts").write_text(
        "export function area(radius: number): number {\n  return Math.PI * radius * radius;\n}\n"
    )
    (project / "src" / "main.ts").write_text(
        'import { area } from "./shapes";\n\nconsole.log(area(2));\n'
    )
    (project / "tsconfig.json").write_text(
        '{"compilerOptions": {"strict": true}, "include": ["src"]}'
    )
    plugin = make_plugin(
        tmp_path,
        lambda p: {
            "typescript": {
                "command": wrapper(p, "tsls", f'"{TYPESCRIPT}" "$@"'),
                "args": ["--stdio"],
                "extensionToLanguage": {".ts": "typescript"},
            }
        },
    )
    main = str(project / "src" / "main.ts")
    scenario = Scenario(
        turns=(
            turn(
                lsp("findReferences", "src/shapes.ts", 1, 17), tool_use("Read", {"file_path": main})
            ),
            turn(
                tool_use(
                    "Edit", {"file_path": main, "old_string": "area(2)", "new_string": "area('2')"}
                )
            ),
            turn("done"),
        )
    )
    result, bodies = run(tmp_path, project, plugin, scenario, "--permission-mode", "acceptEdits")
    assert result.returncode == 0, result.stderr
    references, _ = results(bodies[1])
    assert references.startswith("Found 3 references across 2 files:"), references
    assert "src/shapes.ts:\n  Line 1:17:" in references and "Line 3:13:" in references
    edited = json.dumps(bodies[2]["messages"][-1], ensure_ascii=False)
    assert "src/main.ts:" in edited and "✘ [Line 3:18] Argument of type 'string'" in edited
    assert "[2345] (typescript)" in edited
    (pid,) = pids(plugin)
    assert not group_running(pid)


def test_the_lsp_command_lists_the_servers_and_their_state(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    plugin = make_plugin(tmp_path, lambda p: {"pyright": pyright_server(p)})
    (listed,), _ = run_all(
        project, tmp_path, Scenario(turns=()), [["-p", "/lsp", "--plugin-dir", str(plugin)]]
    )
    (none,), _ = run_all(project, tmp_path, Scenario(turns=()), [["-p", "/lsp"]])
    assert listed.returncode == 0, listed.stderr
    assert "plugin:lsp-kit:pyright  .py  not started" in listed.stdout
    assert "No language servers in this session" in none.stdout
    assert pids(plugin) == []


def test_a_file_with_500_new_errors_does_not_flood_the_window(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    plugin = make_plugin(tmp_path, lambda p: {"pyright": pyright_server(p)})
    content = "".join(f"x{i}: int = 'not a number {i}'\n" for i in range(500))
    write = tool_use("Write", {"file_path": str(project / "many.py"), "content": content})
    scenario = Scenario(turns=(turn(write), turn("done")))
    result, bodies = run(tmp_path, project, plugin, scenario, "--permission-mode", "acceptEdits")
    assert result.returncode == 0, result.stderr
    (written,) = results(bodies[1])
    assert written.count("[reportAssignmentType] (Pyright)") == 10
    assert "✘ [Line 1:" in written and "... and 490 more" in written, written
    assert len(written) < 5000


def test_an_open_file_changed_by_bash_is_what_the_server_answers_about(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    plugin = make_plugin(tmp_path, lambda p: {"pyright": pyright_server(p)})
    prepend = "sed -i '1i import os' pkg/shapes.py"  # def area moves from line 4 to line 5
    scenario = Scenario(
        turns=(
            turn(lsp("hover", "pkg/shapes.py", 4, 5)),  # the server holds shapes.py open
            turn(tool_use("Bash", {"command": prepend})),
            turn(lsp("goToDefinition", "main.py", 4, 7)),
            turn("done"),
        )
    )
    result, bodies = run(
        tmp_path, project, plugin, scenario, "--permission-mode", "bypassPermissions"
    )
    assert result.returncode == 0, result.stderr
    assert "def area(radius: float) -> float" in results(bodies[1])[0]
    assert results(bodies[3]) == ["Defined in pkg/shapes.py:5:5"]


def test_sub_agents_share_the_sessions_servers(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    plugin = make_plugin(tmp_path, lambda p: {"pyright": pyright_server(p)})
    agent = {"description": "look", "prompt": "find area", "subagent_type": "general-purpose"}
    scenario = Scenario(
        turns=(
            turn(lsp("hover", "main.py", 1, 24)),
            turn(tool_use("Agent", agent)),
            turn(lsp("goToDefinition", "main.py", 4, 7)),  # the sub-agent's call
            turn("It is in pkg/shapes.py."),
            turn("done"),
        )
    )
    result, bodies = run(tmp_path, project, plugin, scenario)
    assert result.returncode == 0, result.stderr
    assert "LSP" in [t["name"] for t in bodies[2]["tools"]]  # offered to the sub-agent
    assert results(bodies[3]) == ["Defined in pkg/shapes.py:4:5"]
    (pid,) = pids(plugin)  # one server for both
    assert not group_running(pid)
