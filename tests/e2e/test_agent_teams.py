"""Agent teams through the real CLI (CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1): the lead creates a
team and spawns a teammate that works in the background; TeammateIdle hooks (Python and bash,
reading stdin JSON) fire when it is about to go idle, and exit 2 keeps it working with the
hook's reason; its messages reach the lead as prompts, and the run ends once nobody works."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.test_claude_compat import make_project, run_all, script, settings
from tests.e2e.test_hook_events import COMMON, bash_script, payloads

TEAMS_ON = {"CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS": "1"}
FEEDBACK = "write intro.md before you stop"


def team_hooks(project: Path) -> tuple[Path, Path]:
    """A Python TeammateIdle hook keeping the teammate at work until intro.md exists, a bash
    one logging its input, and a logger of TaskCreated."""
    logger = script(
        project,
        "log.py",
        'with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "hook-log.jsonl"), "a") as f:\n'
        "    f.write(json.dumps(payload) + '\\n')\n"
        f'if payload["hook_event_name"] == "TeammateIdle" and not os.path.exists('
        'os.path.join(payload["cwd"], "intro.md")):\n'
        f'    print("{FEEDBACK}", file=sys.stderr)\n'
        "    sys.exit(2)\n",
    )
    tee = bash_script(
        project, "tee.sh", 'f="$CLAUDE_PROJECT_DIR/idle-bash.jsonl"\ncat >> "$f"\necho >> "$f"\n'
    )

    def command(cmd: str) -> dict[str, Any]:
        return {"hooks": [{"type": "command", "command": cmd}]}

    settings(
        project,
        {
            "hooks": {
                "TeammateIdle": [command(logger), command(tee)],
                "TaskCreated": [command(logger)],
            }
        },
    )
    return project / "hook-log.jsonl", project / "idle-bash.jsonl"


def user_texts(body: dict[str, Any]) -> str:
    """Everything the request's last user message says (text and tool results)."""
    return json.dumps(body["messages"][-1]["content"])


def test_a_teammate_kept_working_by_teammate_idle_reports_to_the_lead(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    log, bash_log = team_hooks(project)
    spawn = {
        "description": "write the intro",
        "prompt": "Write intro.md for the docs.",
        "name": "writer",
        "team_name": "docs",
    }
    sent = {"to": "team-lead", "message": "intro.md is written", "summary": "intro done"}
    # One script per conversation (keyed by what each one's messages say), so the lead's and
    # the teammate's requests, which race, each get their own next turn whatever the order.
    lead = Scenario(
        turns=(
            turn(tool_use("TeamCreate", {"team_name": "docs", "description": "the docs"})),
            turn(tool_use("Agent", spawn)),
            turn("Working on it."),
            # Woken by the teammate's message.
            turn("Noted."),
            # The teammate went idle: the lead's last prompt is its idle note.
            turn("All done."),
        )
    )
    writer = Scenario(
        turns=(
            turn("Working on it."),
            # TeammateIdle refused the idle: the teammate goes on.
            turn(tool_use("TaskCreate", {"subject": "Write the intro", "description": "md"})),
            turn(tool_use("Write", {"file_path": "intro.md", "content": "# Intro\n"})),
            turn(tool_use("SendMessage", sent)),
            turn("Noted."),
        )
    )
    scenario = {"write the docs": lead, "You are writer, a teammate": writer}
    (result,), bodies = run_all(
        project,
        tmp_path,
        scenario,
        [["-p", "write the docs", "--output-format", "json", "--permission-mode", "acceptEdits"]],
        extra_env=TEAMS_ON,
    )
    assert result.returncode == 0, result.stderr
    assert len(bodies) == 10  # every turn was asked for, none more
    assert result.json()["result"] == "All done."
    tools = {tool["name"]: tool for tool in bodies[0]["tools"]}
    assert {"TeamCreate", "SendMessage", "TaskCreate"} <= set(tools)
    assert {"name", "team_name"} <= set(tools["Agent"]["input_schema"]["properties"])
    assert (project / "intro.md").read_text() == "# Intro\n"

    # The hook's reason was the teammate's next message, and only then did it write.
    (kept_on,) = [b for b in bodies if "TeammateIdle hook feedback" in user_texts(b)]
    assert FEEDBACK in user_texts(kept_on)
    # The teammate's message and its idle note reached the lead as prompts.
    to_lead = [b for b in bodies if "<teammate-message" in user_texts(b)]
    assert len(to_lead) == 2
    assert 'teammate_id=\\"writer\\" summary=\\"intro done\\"' in user_texts(to_lead[0])
    assert "intro.md is written" in user_texts(to_lead[0])
    assert "writer is idle" in user_texts(to_lead[1])

    session_id = result.json()["session_id"]
    seen = payloads(log)
    idle = [p for p in seen if p["hook_event_name"] == "TeammateIdle"]
    assert len(idle) == 2  # refused once, then let go
    for payload in idle:
        assert set(payload) >= COMMON | {"teammate_name", "team_name"}, payload
        assert (payload["teammate_name"], payload["team_name"]) == ("writer", "docs")
        assert payload["session_id"] == session_id
    (created,) = [p for p in seen if p["hook_event_name"] == "TaskCreated"]
    assert (created["teammate_name"], created["team_name"]) == ("writer", "docs")
    bash_seen = [json.loads(line) for line in bash_log.read_text().splitlines() if line]
    assert [p["teammate_name"] for p in bash_seen] == ["writer", "writer"]


def test_without_the_switch_there_are_no_teams(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    spawn = {"description": "x", "prompt": "x", "name": "writer", "team_name": "docs"}
    scenario = Scenario(turns=(turn(tool_use("Agent", spawn)), turn("Alone, then.")))
    (result,), bodies = run_all(project, tmp_path, scenario, [["-p", "write the docs"]])
    assert result.returncode == 0, result.stderr
    tools = {tool["name"]: tool for tool in bodies[0]["tools"]}
    assert not {"TeamCreate", "SendMessage"} & set(tools)
    assert not {"name", "team_name"} & set(tools["Agent"]["input_schema"]["properties"])
    refused = user_texts(bodies[1])
    assert "Agent teams are off" in refused and "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS" in refused
