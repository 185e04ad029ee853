"""Plugins from a marketplace in a local git repository, through the real CLI: `codeloop
plugin marketplace add`, `install`, `list`, `disable`, `remove`, and an installed plugin
contributing a command, an agent, a skill and a hook, each namespaced by the plugin."""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path
from typing import Any

from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.cli import PROVIDER_MODELS, provider_env, run_cli
from tests.e2e.test_claude_compat import last_tool_result, make_project, text_of


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def marketplace_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "team-marketplace"
    plugin = repo / "plugins" / "review-kit"
    write(
        repo / ".claude-plugin" / "marketplace.json",
        json.dumps(
            {
                "name": "team-tools",
                "owner": {"name": "Dev Tools"},
                "plugins": [
                    {
                        "name": "review-kit",
                        "source": "./plugins/review-kit",
                        "description": "Review helpers",
                    }
                ],
            }
        ),
    )
    write(
        plugin / ".claude-plugin" / "plugin.json",
        json.dumps({"name": "review-kit", "version": "1.2.0", "description": "Review helpers"}),
    )
    write(
        plugin / "commands" / "lint-all.md",
        "---\ndescription: Lint every file\n---\nLINT-CMD: run the linters.\n",
    )
    write(
        plugin / "agents" / "security.md",
        "---\nname: security-reviewer\ndescription: Reviews code for security issues\n"
        "tools: Read, Grep\n---\nSEC-AGENT-PROMPT: look for injections.\n",
    )
    write(
        plugin / "skills" / "checklist" / "SKILL.md",
        "---\ndescription: The team's review checklist\n---\nCHECKLIST-BODY\n",
    )
    write(plugin / "skills" / "checklist" / "reference.md", "REFERENCE-DETAIL\n")
    write(
        plugin / "hooks" / "hooks.json",
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {
                            "matcher": "Bash",
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": '"${CLAUDE_PLUGIN_ROOT}"/scripts/mark.sh',
                                }
                            ],
                        }
                    ]
                }
            }
        ),
    )
    mark = plugin / "scripts" / "mark.sh"
    write(
        mark, '#!/usr/bin/env bash\ncat > /dev/null\ntouch "$CLAUDE_PROJECT_DIR/plugin-hook-ran"\n'
    )
    mark.chmod(mark.stat().st_mode | stat.S_IEXEC)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "marketplace"], check=True)
    return repo


def plugin_cmd(args: list[str], project: Path, home: Path) -> Any:
    env = provider_env(None, "anthropic", home)
    return run_cli(["plugin", *args], cwd=project, env=env)


def test_a_plugin_from_a_local_git_marketplace_contributes_its_parts(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    project = make_project(tmp_path)
    repo = marketplace_repo(tmp_path)

    added = plugin_cmd(["marketplace", "add", repo.as_uri()], project, home)
    assert added.returncode == 0, added.stderr
    assert "team-tools" in added.stdout
    assert "team-tools" in plugin_cmd(["marketplace", "list"], project, home).stdout
    installed = plugin_cmd(["install", "review-kit@team-tools"], project, home)
    assert installed.returncode == 0, installed.stderr
    listed = plugin_cmd(["list", "--json"], project, home)
    (row,) = json.loads(listed.stdout)
    assert row["id"] == "review-kit@team-tools" and row["enabled"] and row["version"] == "1.2.0"

    scenario = Scenario(
        turns=(
            turn(tool_use("Skill", {"skill": "review-kit:checklist"})),
            turn(
                tool_use(
                    "Task",
                    {
                        "description": "security pass",
                        "prompt": "Check it.",
                        "subagent_type": "review-kit:security-reviewer",
                    },
                )
            ),
            turn("No injections found."),
            turn(tool_use("Bash", {"command": "echo checked"})),
            turn("Reviewed."),
        )
    )
    with FakeModelServer(scenario) as server:
        env = provider_env(server, "anthropic", home)
        result = run_cli(
            [
                "-p",
                "review",
                "--model",
                PROVIDER_MODELS["anthropic"],
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            cwd=project,
            env=env,
        )
        bodies = [r.body for r in server.requests]
    assert result.returncode == 0, result.stderr
    first = json.dumps(bodies[0])
    assert "review-kit:checklist: The team's review checklist" in first  # a skill
    assert "review-kit:lint-all: Lint every file" in first  # a command
    assert "- review-kit:security-reviewer: Reviews code for security issues" in first  # agent
    assert "CHECKLIST-BODY" not in first
    assert "CHECKLIST-BODY" in text_of(last_tool_result(bodies[1])["content"])
    assert "SEC-AGENT-PROMPT" in json.dumps(bodies[2]["system"])
    assert (project / "plugin-hook-ran").exists()  # the plugin's hook ran for Bash
    init = result.json_lines()[0]
    assert init["plugins"] == [
        {"name": "review-kit", "id": "review-kit@team-tools", "path": init["plugins"][0]["path"]}
    ]
    assert "review-kit:lint-all" in init["slash_commands"]

    disabled = plugin_cmd(["disable", "review-kit@team-tools"], project, home)
    assert disabled.returncode == 0, disabled.stderr
    with FakeModelServer(Scenario(turns=(turn("ok"),))) as server:
        env = provider_env(server, "anthropic", home)
        run_cli(["-p", "hi", "--model", PROVIDER_MODELS["anthropic"]], cwd=project, env=env)
        assert "review-kit" not in json.dumps(server.requests[0].body)
    removed = plugin_cmd(["remove", "review-kit@team-tools"], project, home)
    assert removed.returncode == 0, removed.stderr
    assert json.loads(plugin_cmd(["list", "--json"], project, home).stdout) == []


def test_plugin_errors_are_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    project = make_project(tmp_path)
    missing = plugin_cmd(["install", "nothing@nowhere"], project, home)
    assert missing.returncode == 1 and "no marketplace nowhere" in missing.stderr
    bad = plugin_cmd(["marketplace", "add", str(tmp_path / "no-such-dir")], project, home)
    assert bad.returncode == 1 and "Traceback" not in bad.stderr


def test_plugin_dir_flag_loads_a_plugin_for_the_session(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    project = make_project(tmp_path)
    plugin = marketplace_repo(tmp_path) / "plugins" / "review-kit"
    with FakeModelServer(Scenario(turns=(turn("ok"),))) as server:
        env = provider_env(server, "anthropic", home)
        result = run_cli(
            ["-p", "hi", "--model", PROVIDER_MODELS["anthropic"], "--plugin-dir", str(plugin)],
            cwd=project,
            env=env,
        )
        body = json.dumps(server.requests[0].body)
    assert result.returncode == 0, result.stderr
    assert "review-kit:checklist" in body
