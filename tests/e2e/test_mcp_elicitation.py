"""A server asking the user for input mid-call (an MCP elicitation), end to end: the SDK-built
server's `ask` tool elicits a form; Elicitation and ElicitationResult hooks (Python scripts
reading stdin JSON, as users write them) answer and change it, with Claude Code's fields."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.test_hook_events import payloads
from tests.e2e.test_mcp import make_project, run, tool_results
from tests.mcp_servers import approve_all, python_server, write_mcp_json

# Logs its input; answers with what the test put in ANSWER (a JSON object, or exit 2).
HOOK = """\
import json, os, sys
payload = json.load(sys.stdin)
with open(os.environ["HOOK_LOG"], "a") as log:
    log.write(json.dumps(payload) + "\\n")
answer = os.environ.get("ANSWER_" + payload["hook_event_name"], "")
if answer == "exit2":
    sys.exit(2)
if answer:
    print(answer)
"""


def settings(project: Path, events: list[str]) -> None:
    script = project / ".claude" / "hooks" / "elicit.py"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(HOOK)
    command = f"{sys.executable} {script}"
    hooks = {
        e: [{"matcher": "py", "hooks": [{"type": "command", "command": command}]}] for e in events
    }
    path = project / ".claude" / "settings.json"
    path.write_text(json.dumps({"hooks": hooks}))


def ask_twice(project: Path, tmp_path: Path, env: dict[str, str]) -> tuple[Any, list[Any]]:
    write_mcp_json(project, {"py": python_server("--name", "py")})
    approve_all(project)
    scenario = Scenario(
        turns=(
            turn(tool_use("mcp__py__ask", {"question": "Favourite colour?"})),
            turn("done"),
        )
    )
    return run(project, tmp_path, scenario, "-p", "ask", "--allowedTools", "mcp__py", env=env)


def test_an_elicitation_hook_answers_and_a_result_hook_sees_and_changes_it(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    settings(project, ["Elicitation", "ElicitationResult"])
    log = tmp_path / "hooks.jsonl"
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "Elicitation",
            "action": "accept",
            "content": {"answer": "blue"},
        }
    }
    override = {
        "hookSpecificOutput": {
            "hookEventName": "ElicitationResult",
            "action": "accept",
            "content": {"answer": "green"},
        }
    }
    env = {
        "HOOK_LOG": str(log),
        "ANSWER_Elicitation": json.dumps(answer),
        "ANSWER_ElicitationResult": json.dumps(override),
    }
    result, bodies = ask_twice(project, tmp_path, env)
    assert result.returncode == 0, result.stderr
    # The server got the result hook's answer, and the model its tool result.
    assert tool_results(bodies[1])[0] == ("the user answered: green", False, ["text"])
    asked, answered = payloads(log)
    assert asked["hook_event_name"] == "Elicitation"
    assert asked["mcp_server_name"] == "py" and asked["mode"] == "form"
    assert asked["message"] == "Favourite colour?"
    assert asked["requested_schema"]["properties"]["answer"]["type"] == "string"
    assert {"session_id", "transcript_path", "cwd", "permission_mode"} <= set(asked)
    assert answered["hook_event_name"] == "ElicitationResult"
    assert answered["action"] == "accept" and answered["content"] == {"answer": "blue"}
    assert answered["mcp_server_name"] == "py" and answered["mode"] == "form"


def test_exit_2_declines_and_with_no_one_to_ask_the_request_is_cancelled_and_said(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    settings(project, ["Elicitation"])
    log = tmp_path / "hooks.jsonl"
    result, bodies = ask_twice(
        project, tmp_path, {"HOOK_LOG": str(log), "ANSWER_Elicitation": "exit2"}
    )
    assert result.returncode == 0, result.stderr
    assert tool_results(bodies[1])[0] == ("the user did not answer: decline", False, ["text"])

    other = make_project(tmp_path / "no-hooks")
    result, bodies = ask_twice(other, tmp_path, {})
    assert result.returncode == 0, result.stderr
    assert tool_results(bodies[1])[0] == ("the user did not answer: cancel", False, ["text"])
    assert "MCP server py asked for input ('Favourite colour?')" in result.stderr
