"""Claude Code's task list tools through the real CLI: TaskCreated and TaskCompleted hooks (bash
and Python, reading stdin JSON) fire before a task is added or completed and can refuse it,
sub-agents share the list, and a resumed session finds it again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.test_claude_compat import (
    last_tool_result,
    make_project,
    run_all,
    script,
    settings,
    text_of,
)
from tests.e2e.test_hook_events import COMMON, bash_script, payloads

TASK_FIELDS = {"task_id", "task_subject", "task_description"}
TASKS_ON = {"CLAUDE_CODE_ENABLE_TASKS": "1"}


def task_hooks(project: Path) -> Path:
    """A bash TaskCreated hook refusing deploy tasks, a Python TaskCompleted hook refusing a
    completion until tests-passed exists, and a logger of both events' input."""
    logger = script(
        project,
        "log.py",
        'with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "hook-log.jsonl"), "a") as f:\n'
        "    f.write(json.dumps(payload) + '\\n')\n",
    )
    no_deploy = bash_script(
        project,
        "no_deploy.sh",
        "input=$(cat)\n"
        'if printf %s "$input" | grep -q \'"task_subject": "Deploy\'; then\n'
        '  echo "deploy tasks belong to the release team" >&2\n'
        "  exit 2\n"
        "fi\n",
    )
    tests_first = script(
        project,
        "tests_first.py",
        'if not os.path.exists(os.path.join(payload["cwd"], "tests-passed")):\n'
        "    print(f\"task {payload['task_id']} ({payload['task_subject']}): run the tests"
        ' first", file=sys.stderr)\n'
        "    sys.exit(2)\n",
    )

    def command(cmd: str) -> list[dict[str, Any]]:
        return [{"hooks": [{"type": "command", "command": cmd}]}]

    settings(
        project,
        {
            "hooks": {
                "TaskCreated": [*command(logger), *command(no_deploy)],
                "TaskCompleted": [*command(logger), *command(tests_first)],
            }
        },
    )
    return project / "hook-log.jsonl"


def result_of(body: dict[str, Any]) -> tuple[str, bool]:
    block = last_tool_result(body)
    return text_of(block["content"]), bool(block.get("is_error"))


def test_task_hooks_fire_refuse_and_sub_agents_share_the_list(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    log = task_hooks(project)
    parser = {"subject": "Write the parser", "description": "Parse config.toml; tests pass"}
    scenario = Scenario(
        turns=(
            turn(tool_use("TaskCreate", {**parser, "activeForm": "Writing the parser"})),
            turn(tool_use("TaskCreate", {"subject": "Deploy it", "description": "Ship to prod"})),
            turn(tool_use("TaskUpdate", {"taskId": "1", "status": "completed"})),
            turn(tool_use("Bash", {"command": "touch tests-passed"})),
            turn(tool_use("TaskUpdate", {"taskId": "1", "status": "completed"})),
            turn(tool_use("Agent", {"description": "plan review", "prompt": "Add a review."})),
            # The sub-agent's turns: it adds to the same list.
            turn(tool_use("TaskCreate", {"subject": "Review", "description": "Read the diff"})),
            turn("Added the review task."),
            turn(tool_use("TaskList", {})),
            turn("Done."),
            # The resumed session's turns.
            turn(tool_use("TaskGet", {"taskId": "3"})),
            turn("Still there."),
        )
    )
    (first, again), bodies = run_all(
        project,
        tmp_path,
        scenario,
        [
            ["-p", "plan the work", "--output-format", "json", "--allowedTools", "Bash(touch *)"],
            ["-p", "what is left?", "--continue"],
        ],
        extra_env=TASKS_ON,
    )
    assert first.returncode == 0, first.stderr
    assert again.returncode == 0, again.stderr
    names = [tool["name"] for tool in bodies[0]["tools"]]
    assert {"TaskCreate", "TaskGet", "TaskUpdate", "TaskList"} <= set(names)
    assert "TodoWrite" not in names  # one or the other, as in Claude Code

    assert result_of(bodies[1]) == ("Task #1 created successfully: Write the parser", False)
    # The bash hook refused the deploy task: its stderr reaches the model, no task #2.
    refused, is_error = result_of(bodies[2])
    assert is_error and "Task #2 was not created" in refused
    assert "deploy tasks belong to the release team" in refused
    # The Python hook refused the completion until the tests had passed.
    refused, is_error = result_of(bodies[3])
    assert is_error and "Task #1 was not marked completed" in refused
    assert "task 1 (Write the parser): run the tests first" in refused
    assert result_of(bodies[5]) == ("Updated task #1 status", False)
    # The sub-agent's task joined the session's list (#2 stays used by the refused one).
    assert result_of(bodies[7]) == ("Task #3 created successfully: Review", False)
    listing, _ = result_of(bodies[9])
    assert listing.splitlines() == ["#1 [completed] Write the parser", "#3 [pending] Review"]
    # The resumed session reads the same list.
    shown, _ = result_of(bodies[11])
    assert shown.splitlines()[:2] == ["Task #3: Review", "Status: pending"]

    seen = payloads(log)
    session_id = first.json()["session_id"]
    events = [(p["hook_event_name"], p["task_id"]) for p in seen]
    assert events == [
        ("TaskCreated", "1"),
        ("TaskCreated", "2"),
        ("TaskCompleted", "1"),
        ("TaskCompleted", "1"),
        ("TaskCreated", "3"),
    ]
    for payload in seen:
        assert set(payload) >= COMMON | TASK_FIELDS, payload
        assert payload["session_id"] == session_id
        assert "teammate_name" not in payload  # no agent team here
    assert seen[0]["task_description"] == parser["description"]
    # The sub-agent's hook input names it; the main thread's does not.
    assert "agent_id" in seen[4] and "agent_id" not in seen[0]
    stored = json.loads(next((tmp_path / "home").rglob("task-list.json")).read_text())
    assert [t["id"] for t in stored["tasks"]] == ["1", "3"]
    assert stored["tasks"][0]["activeForm"] == "Writing the parser"


def test_without_the_switch_the_session_keeps_todo_write(tmp_path: Path) -> None:
    """Claude Code's non-interactive default: TodoWrite, no task tools, so hooks on the task
    events have nothing to fire for."""
    project = make_project(tmp_path)
    scenario = Scenario(turns=(turn("Nothing to plan."),))
    (result,), bodies = run_all(project, tmp_path, scenario, [["-p", "hi"]])
    assert result.returncode == 0, result.stderr
    names = [tool["name"] for tool in bodies[0]["tools"]]
    assert "TodoWrite" in names
    assert not {"TaskCreate", "TaskGet", "TaskUpdate", "TaskList"} & set(names)
