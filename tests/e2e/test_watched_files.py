"""FileChanged and ConfigChange through the real CLI: files changed during a session fire their
hooks with Claude Code's fields; FileChanged's exports reach Bash and its `watchPaths` (from a
SessionStart hook) extend the watch list; a settings change the hooks do not block is named
to the user (codeloop applies settings at start), a blocked one stays quiet."""

from __future__ import annotations

from pathlib import Path

from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.test_claude_compat import (
    last_tool_result,
    make_project,
    run,
    script,
    settings,
    text_of,
)
from tests.e2e.test_hook_events import payloads

LOG = (
    'with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "hook-log.jsonl"), "a") as f:\n'
    "    f.write(json.dumps(payload) + '\\n')\n"
)


def hook(command: str, matcher: str | None = None) -> dict[str, object]:
    group: dict[str, object] = {"hooks": [{"type": "command", "command": command}]}
    return group if matcher is None else {"matcher": matcher, **group}


def test_file_changed_fires_for_watched_files_and_its_exports_reach_bash(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    data = project / "data.csv"
    log = script(project, "log.py", LOG)
    envrc = script(
        project,
        "envrc.py",
        'with open(os.environ["CLAUDE_ENV_FILE"], "a") as f:\n'
        '    f.write("export FROM_ENVRC=loaded-" + payload["event"] + "\\n")\n',
    )
    watch = script(
        project,
        "watch.py",
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'SessionStart',"
        f" 'watchPaths': [{str(data)!r}]}}}}))\n",
    )
    settings(
        project,
        {
            "hooks": {
                "SessionStart": [hook(watch)],
                # Names the file to watch, and runs only for it.
                "FileChanged": [hook(envrc, ".envrc"), hook(log)],
            }
        },
    )
    scenario = Scenario(
        turns=(
            turn(tool_use("Bash", {"command": "echo 'use flake' > .envrc"})),
            turn(tool_use("Bash", {"command": "echo $FROM_ENVRC; echo a,b > data.csv"})),
            turn(tool_use("Bash", {"command": "rm .envrc; echo ignored > other.txt"})),
            turn("Done."),
        )
    )
    result, bodies = run(project, tmp_path, scenario, "--allowedTools", "Bash")
    assert result.returncode == 0, result.stderr
    # The FileChanged hook's export reached the next Bash command.
    assert "loaded-add" in text_of(last_tool_result(bodies[2])["content"])
    changed = payloads(project / "hook-log.jsonl")
    assert [(p["file_path"], p["event"]) for p in changed] == [
        (str(project / ".envrc"), "add"),
        (str(data), "add"),  # watched because the SessionStart hook said so
        (str(project / ".envrc"), "unlink"),
    ]
    assert all(p["hook_event_name"] == "FileChanged" for p in changed)
    assert {"session_id", "transcript_path", "cwd", "permission_mode"} <= set(changed[0])


def test_config_change_fires_and_an_unblocked_change_is_named_once(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    skill = project / ".claude" / "skills" / "deploy" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: deploy\ndescription: Deploys.\n---\nDeploy it.\n")
    audit = script(
        project,
        "audit.py",
        LOG + "if payload['source'] == 'local_settings':\n    sys.exit(2)\n",
    )
    settings(project, {"hooks": {"ConfigChange": [hook(audit)]}})
    local = project / ".claude" / "settings.local.json"
    scenario = Scenario(
        turns=(
            turn(tool_use("Bash", {"command": f"echo '{{}}' > {local}"})),
            turn(tool_use("Bash", {"command": f"echo More. >> {skill}"})),
            turn(tool_use("Bash", {"command": f"echo Again. >> {skill}"})),
            turn("Done."),
        )
    )
    result, _ = run(project, tmp_path, scenario, "--permission-mode", "bypassPermissions")
    assert result.returncode == 0, result.stderr
    changes = payloads(project / "hook-log.jsonl")
    assert [(p["source"], p["file_path"]) for p in changes] == [
        ("local_settings", str(local)),
        ("skills", str(skill)),
        ("skills", str(skill)),
    ]
    assert all(p["hook_event_name"] == "ConfigChange" for p in changes)
    # The blocked change is quiet; the skill's is named, once, with what it means.
    assert str(local) not in result.stderr
    assert result.stderr.count(f"{skill} changed during the session") == 1
    assert "applies from the next session" in result.stderr
