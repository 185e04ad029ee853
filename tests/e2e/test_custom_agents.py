"""Custom agents from .claude/agents, ~/.claude/agents and --agents, through the real CLI: the
Task tool lists them, and a subagent_type runs that agent with its own prompt and tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.test_claude_compat import last_tool_result, make_project, run, text_of

REVIEWER = """\
---
name: code-reviewer
description: Use this agent when the user has written code and wants it reviewed: \
quality, security, naming. Examples: <example>Context: a new endpoint. user: "review my \
handler" assistant: "I'll use the code-reviewer agent"</example>
tools: Read, Grep, Glob
model: inherit
color: purple
---

REVIEWER-PROMPT-41b: You are a senior code reviewer. Report findings by severity.
"""


def agents_project(tmp_path: Path) -> Path:
    project = make_project(tmp_path)
    agents = project / ".claude" / "agents" / "quality"
    agents.mkdir(parents=True)
    (agents / "code-reviewer.md").write_text(REVIEWER)
    (project / ".claude" / "agents" / "README.md").write_text("# Our agents\nNotes only.\n")
    user = tmp_path / "home" / ".claude" / "agents"
    user.mkdir(parents=True)
    (user / "writer.md").write_text(
        "---\nname: doc-writer\ndescription: Writes documentation\n"
        "tools:\n  - Read\n  - Write\n  - WebFetch\n---\nYou write docs.\n"
    )
    return project


def tools_of(body: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in body["tools"]]


def test_a_custom_agent_runs_with_its_own_prompt_and_only_its_tools(tmp_path: Path) -> None:
    project = agents_project(tmp_path)
    scenario = Scenario(
        turns=(
            turn(
                tool_use(
                    "Task",
                    {
                        "description": "review the build",
                        "prompt": "Review docs/rules.md.",
                        "subagent_type": "code-reviewer",
                    },
                )
            ),
            turn("Found one issue: the rule is vague."),
            turn("The reviewer found one issue."),
        )
    )
    result, bodies = run(project, tmp_path, scenario, "--output-format", "json")
    assert result.returncode == 0, result.stderr
    main, agent, after = bodies
    task = next(t for t in main["tools"] if t["name"] == "Agent")  # formerly Task
    assert "- code-reviewer: Use this agent when the user has written code" in task["description"]
    assert "(Tools: Read, Grep, Glob)" in task["description"]
    writer = "- doc-writer: Writes documentation (Tools: Read, Write, WebFetch)"
    assert writer in task["description"]
    assert "README" not in task["description"]
    # The agent's own system prompt, and only the tools it lists.
    system = json.dumps(agent["system"])
    assert "REVIEWER-PROMPT-41b" in system and "REVIEWER-PROMPT-41b" not in json.dumps(main)
    assert sorted(tools_of(agent)) == ["Glob", "Grep", "Read"]
    assert agent["messages"][-1]["content"][0]["text"] == "Review docs/rules.md."
    assert "Found one issue" in text_of(last_tool_result(after)["content"])


def test_agents_json_flag_and_unknown_agent_types(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    agents = {
        "greeter": {
            "description": "Says hello",
            "prompt": "GREETER-PROMPT: greet warmly.",
            "tools": ["Bash"],
        }
    }
    scenario = Scenario(
        turns=(
            turn(tool_use("Task", {"description": "d", "prompt": "p", "subagent_type": "nope"})),
            turn(
                tool_use("Task", {"description": "d", "prompt": "hi", "subagent_type": "greeter"})
            ),
            turn("Hello!"),
            turn("Done."),
        )
    )
    result, bodies = run(project, tmp_path, scenario, "--agents", json.dumps(agents))
    assert result.returncode == 0, result.stderr
    unknown = last_tool_result(bodies[1])
    assert unknown["is_error"] and "greeter" in text_of(unknown["content"])
    assert "GREETER-PROMPT" in json.dumps(bodies[2]["system"])
    assert tools_of(bodies[2]) == ["Bash"]


def test_an_agent_whose_tools_all_are_missing_does_not_run(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    folder = project / ".claude" / "agents"
    folder.mkdir(parents=True)
    (folder / "web.md").write_text(
        "---\nname: web-researcher\ndescription: Searches the tracker\n"
        "tools: mcp__jira__search, mcp__jira__get_issue\n---\nSearch.\n"
    )
    scenario = Scenario(
        turns=(
            turn(
                tool_use(
                    "Task", {"description": "d", "prompt": "p", "subagent_type": "web-researcher"}
                )
            ),
            turn("Done."),
        )
    )
    result, bodies = run(project, tmp_path, scenario)
    assert result.returncode == 0, result.stderr
    refused = last_tool_result(bodies[1])
    assert refused["is_error"] and "mcp__jira__search, mcp__jira__get_issue" in text_of(
        refused["content"]
    )
    assert len(bodies) == 2


def test_the_session_runs_as_an_agent_with_agent_flag_or_setting(tmp_path: Path) -> None:
    project = agents_project(tmp_path)
    scenario = Scenario(turns=(turn("Reviewed."),))
    result, (body,) = run(
        project, tmp_path, scenario, "--agent", "code-reviewer", "--output-format", "json"
    )
    assert result.returncode == 0, result.stderr
    assert "REVIEWER-PROMPT-41b" in json.dumps(body["system"])
    assert sorted(tools_of(body)) == ["Glob", "Grep", "Read"]

    missing, bodies = run(project, tmp_path, scenario, "--agent", "nobody")
    assert missing.returncode == 1 and "agent 'nobody' not found" in missing.stderr
    assert bodies == []
