"""Skills in Claude Code's format through the real CLI: only names and descriptions are in the
prompt, the body arrives when the model calls the Skill tool, supporting files are read on
demand, and `allowed-tools` lets the skill's commands run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.test_claude_compat import last_tool_result, make_project, run, settings, text_of

RELEASE = """\
---
name: release-notes
description: Drafts release notes from the latest commits. Use when the user asks for a \
changelog or release notes.
allowed-tools: Bash(git log:*), Bash(touch:*)
---

BODY-7e2: Draft the notes for $ARGUMENTS.

Latest commit: !`git log --format=%s -1`

Use the template in template.md (read it when you start).
"""


def skills_project(tmp_path: Path) -> Path:
    project = make_project(tmp_path)
    subprocess.run(
        [
            "git",
            "-C",
            str(project),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "COMMIT-SUBJECT-3f",
        ],
        check=True,
    )
    skill = project / ".claude" / "skills" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(RELEASE)
    (skill / "template.md").write_text("TEMPLATE-88: ## Added\n## Fixed\n")
    deploy = project / ".claude" / "skills" / "deploy"
    deploy.mkdir(parents=True)
    (deploy / "SKILL.md").write_text(
        "---\ndescription: Deploy to production\ndisable-model-invocation: true\n---\nDEPLOY-BODY\n"
    )
    commands = project / ".claude" / "commands" / "frontend"
    commands.mkdir(parents=True)
    (commands / "component.md").write_text(
        "---\ndescription: Scaffold a React component\nargument-hint: [name]\n---\n"
        "Create the component $1.\n"
    )
    return project


def test_skill_body_reaches_the_model_only_through_the_skill_tool(tmp_path: Path) -> None:
    project = skills_project(tmp_path)
    skill_dir = project / ".claude" / "skills" / "release-notes"
    scenario = Scenario(
        turns=(
            turn(tool_use("Skill", {"skill": "release-notes", "args": "v2.0"})),
            turn(tool_use("Read", {"file_path": str(skill_dir / "template.md")})),
            turn(tool_use("Bash", {"command": "touch released"})),
            turn(tool_use("Skill", {"skill": "deploy"})),
            turn("Drafted."),
        )
    )
    result, bodies = run(project, tmp_path, scenario, "--output-format", "stream-json", "--verbose")
    assert result.returncode == 0, result.stderr
    first = json.dumps(bodies[0])
    assert "release-notes: Drafts release notes from the latest commits" in first
    assert "component: Scaffold a React component" in first
    assert "BODY-7e2" not in first and "TEMPLATE-88" not in first
    assert "deploy" not in first.split("Skill tool")[1][:2000]  # user-only: not listed
    loaded = text_of(last_tool_result(bodies[1])["content"])
    assert "BODY-7e2: Draft the notes for v2.0." in loaded
    assert f"Base directory for this skill: {skill_dir}" in loaded
    assert "Latest commit: COMMIT-SUBJECT-3f" in loaded  # the injected command's output
    assert "TEMPLATE-88" in text_of(last_tool_result(bodies[2])["content"])
    # The skill's allowed-tools let `touch` run in this turn, which the default mode denies.
    assert not last_tool_result(bodies[3]).get("is_error"), last_tool_result(bodies[3])
    assert (project / "released").exists()
    refused = last_tool_result(bodies[4])
    assert refused["is_error"] and "only be run by the user" in text_of(refused["content"])
    init = result.json_lines()[0]
    assert "release-notes" in init["skills"] and "frontend:component" in init["slash_commands"]


def test_skill_shell_can_be_disabled_and_listings_overridden(tmp_path: Path) -> None:
    project = skills_project(tmp_path)
    settings(
        project,
        {"disableSkillShellExecution": True, "skillOverrides": {"component": "off"}},
    )
    scenario = Scenario(turns=(turn(tool_use("Skill", {"skill": "release-notes"})), turn("Done.")))
    result, bodies = run(project, tmp_path, scenario)
    assert result.returncode == 0, result.stderr
    assert "component:" not in json.dumps(bodies[0])
    loaded = text_of(last_tool_result(bodies[1])["content"])
    assert "[shell command execution disabled by policy]" in loaded
    assert "COMMIT-SUBJECT-3f" not in loaded
