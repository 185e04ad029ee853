"""`lspServers` as Claude Code's plugins write it: every place it may be (inline, a path, a
list, .lsp.json), placeholders, Claude Code's fields, and what is wrong named without failing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codeloop.extensions.plugins import read_plugin
from codeloop.lsp.config import DEFAULT_STARTUP_SECONDS, plugin_lsp_servers

PYRIGHT = {
    "command": "${CLAUDE_PLUGIN_ROOT}/bin/pyright-langserver",
    "args": ["--stdio", "--log=${CLAUDE_PLUGIN_DATA}/log"],
    "extensionToLanguage": {".py": "python", "pyi": "python"},
}


def plugin_folder(tmp_path: Path, manifest: dict[str, Any], files: dict[str, Any]) -> Path:
    root = tmp_path / "kit"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "kit", **manifest}))
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content if isinstance(content, str) else json.dumps(content))
    return root


@pytest.mark.parametrize(
    ("manifest", "files"),
    [
        ({"lspServers": {"pyright": PYRIGHT}}, {}),
        ({"lspServers": "./config/lsp.json"}, {"config/lsp.json": {"pyright": PYRIGHT}}),
        ({"lspServers": "lsp.json"}, {"lsp.json": {"lspServers": {"pyright": PYRIGHT}}}),
        ({"lspServers": ["a.json", {"pyright": PYRIGHT}]}, {"a.json": {}}),
        ({}, {".lsp.json": {"pyright": PYRIGHT}}),
    ],
    ids=["inline", "path", "path-wrapped", "list", "dot-lsp-json"],
)
def test_every_place_claude_code_reads_servers_from(
    tmp_path: Path, manifest: dict[str, Any], files: dict[str, Any]
) -> None:
    root = plugin_folder(tmp_path, manifest, files)
    notes: list[str] = []
    plugin = read_plugin(root, data_dir=tmp_path / "data")
    declared = {f"plugin:kit:{k}": v for k, v in plugin.lsp_servers(notes).items()}
    (server,), config_notes = plugin_lsp_servers(declared, {"kit": (root, tmp_path / "data")})
    assert notes == [] and config_notes == []
    assert server.name == "plugin:kit:pyright"
    assert server.command == f"{root}/bin/pyright-langserver"
    assert server.args == ("--stdio", f"--log={tmp_path / 'data'}/log")
    assert server.extension_to_language == {".py": "python", ".pyi": "python"}
    assert server.env["CLAUDE_PLUGIN_ROOT"] == str(root)
    assert server.startup_timeout == DEFAULT_STARTUP_SECONDS


def test_a_plugin_without_servers_has_none(tmp_path: Path) -> None:
    notes: list[str] = []
    assert read_plugin(plugin_folder(tmp_path, {}, {})).lsp_servers(notes) == {}
    assert notes == []


@pytest.mark.parametrize(
    ("declared", "said"),
    [
        ("missing.json", "missing.json: cannot read"),
        ("broken.json", "broken.json:1:2: invalid JSON"),
        (42, "lspServers: expected an object or a path"),
    ],
)
def test_a_bad_lsp_servers_value_is_named(tmp_path: Path, declared: Any, said: str) -> None:
    root = plugin_folder(tmp_path, {"lspServers": declared}, {"broken.json": "{nope"})
    notes: list[str] = []
    assert read_plugin(root).lsp_servers(notes) == {}
    assert len(notes) == 1 and said in notes[0], notes


def test_claude_codes_fields_are_read_and_unknown_ones_named_once(tmp_path: Path) -> None:
    raw = {
        **PYRIGHT,
        "env": {"PYRIGHT_HOME": "${CLAUDE_PLUGIN_ROOT}/home"},
        "initializationOptions": {"a": 1},
        "settings": {"python": {"analysis": {"typeCheckingMode": "strict"}}},
        "workspaceFolder": "/somewhere",
        "startupTimeout": 2500,
        "shutdownTimeout": 800,
        "restartOnCrash": False,
        "maxRestarts": 1,
        "colour": "blue",
        "loggingConfig": {},
    }
    (server,), notes = plugin_lsp_servers({"plugin:kit:py": raw}, {"kit": (tmp_path, None)})
    assert server.env["PYRIGHT_HOME"] == f"{tmp_path}/home"
    assert server.initialization_options == {"a": 1}
    assert server.settings == {"python": {"analysis": {"typeCheckingMode": "strict"}}}
    assert server.workspace_folder == Path("/somewhere")
    assert (server.startup_timeout, server.shutdown_timeout) == (2.5, 0.8)
    assert server.restart_on_crash is False and server.max_restarts == 1
    assert notes == ["lspServers: plugin:kit:py: ignored unknown field(s): colour, loggingConfig"]


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ({"extensionToLanguage": {".py": "python"}}, "no `command`"),
        ({"command": "pyright"}, "no `extensionToLanguage`"),
        ({**PYRIGHT, "transport": "socket"}, "transport 'socket' is not supported"),
        ("pyright", "expected an object"),
    ],
)
def test_a_server_that_cannot_be_used_is_left_out_with_a_note(
    tmp_path: Path, raw: Any, said: str
) -> None:
    configs, notes = plugin_lsp_servers({"plugin:kit:py": raw}, {"kit": (tmp_path, None)})
    assert configs == []
    assert len(notes) == 1 and said in notes[0], notes


def test_bad_numbers_keep_the_defaults_and_are_named(tmp_path: Path) -> None:
    raw = {**PYRIGHT, "startupTimeout": "soon", "maxRestarts": -2}
    (server,), notes = plugin_lsp_servers({"plugin:kit:py": raw}, {"kit": (tmp_path, None)})
    assert server.startup_timeout == DEFAULT_STARTUP_SECONDS and server.max_restarts == 3
    assert len(notes) == 2
    assert "startupTimeout 'soon' is not a number of milliseconds" in notes[0]
    assert "maxRestarts -2 is not a count" in notes[1]


def test_args_and_env_of_the_wrong_shape_are_named(tmp_path: Path) -> None:
    raw = {**PYRIGHT, "args": "--stdio", "env": ["A=1"]}
    (server,), notes = plugin_lsp_servers({"plugin:kit:py": raw}, {"kit": (tmp_path, None)})
    assert server.args == () and dict(server.env) == {"CLAUDE_PLUGIN_ROOT": str(tmp_path)}
    assert [n.rsplit(": ", 1)[1] for n in notes] == ["args is not a list", "env is not an object"]


def test_servers_without_the_lsp_extra_are_named_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    from codeloop.lsp import servers

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pygls" else real(name, *a)
    )
    warnings: list[str] = []
    declared = {"plugin:kit:py": PYRIGHT}
    assert (
        servers.session_servers(declared, {"kit": (tmp_path, None)}, {}, tmp_path, warnings) is None
    )
    assert warnings == [
        "language servers (plugin:kit:py) need the lsp extra: pip install 'codeloop[lsp]'"
    ]
