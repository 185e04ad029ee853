"""Auto mode through the real CLI: a classifier model (a scripted answer of the fake server)
judges what would be asked; its denials reach the model and fire PermissionDenied hooks (a
Python script reading stdin JSON); rules and read-only tools never reach it; a classifier that
fails never allows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codeloop.testing.scenario import Fault, Scenario, tool_use, tool_use_id, turn
from tests.e2e.test_claude_compat import (
    RULES,
    last_tool_result,
    make_project,
    run,
    script,
    settings,
    text_of,
)

ALLOW = '{"ok": true}'
DENY = '{"ok": false, "reason": "[Irreversible Local Destruction] deletes the build output"}'
PYTHON = 'python3 -c "print(40 + 2)"'


def denied_hook(project: Path, *, retry: bool, extra: dict[str, Any] | None = None) -> Path:
    """A PermissionDenied hook logging its input to denied.jsonl and answering `retry`."""
    answer = {"hookSpecificOutput": {"hookEventName": "PermissionDenied", "retry": retry}}
    command = script(
        project,
        "denied.py",
        'with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "denied.jsonl"), "a") as f:\n'
        "    f.write(json.dumps(payload) + '\\n')\n"
        f"print(json.dumps({answer!r}))\n",
    )
    hook = [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]
    settings(project, {"hooks": {"PermissionDenied": hook}, **(extra or {})})
    return project / "denied.jsonl"


def logged(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_the_classifier_allows_or_denies_what_would_be_asked_and_the_model_reads_why(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    log = denied_hook(project, retry=True)
    scenario = Scenario(
        turns=(
            turn(tool_use("Bash", {"command": "ls build"})),  # read-only: no classifier
            turn(tool_use("Bash", {"command": PYTHON})),
            turn(ALLOW),  # the classifier
            turn(tool_use("Bash", {"command": "rm -rf build"})),
            turn(DENY),  # the classifier
            turn("Left the build alone."),
        )
    )
    result, bodies = run(
        project, tmp_path, scenario, "--permission-mode", "auto", "--output-format", "json"
    )
    assert result.returncode == 0, result.stderr
    assert result.json()["result"] == "Left the build alone."
    assert len(bodies) == 6  # ls never reached the classifier
    assert "out.o" in text_of(last_tool_result(bodies[1])["content"])
    classifier = json.dumps(bodies[2]["messages"])
    assert "tidy the build" in classifier and "print(40 + 2)" in classifier
    assert RULES in classifier  # the project's CLAUDE.md (and what it imports)
    assert "tools" not in bodies[2] or not bodies[2]["tools"]
    assert "42" in text_of(last_tool_result(bodies[3])["content"])
    # The denial: the call did not run, the hook saw it, the model read why and may retry.
    assert (project / "build" / "out.o").exists()
    (denial,) = logged(log)
    assert denial["hook_event_name"] == "PermissionDenied"
    assert denial["permission_mode"] == "auto"
    assert denial["tool_name"] == "Bash"
    assert denial["tool_input"]["command"] == "rm -rf build"
    assert denial["tool_use_id"] == tool_use_id("anthropic", 3, 0)
    assert denial["reason"].startswith("[Irreversible Local Destruction]")
    assert {"session_id", "transcript_path", "cwd"} <= denial.keys()
    seen = last_tool_result(bodies[5])
    assert seen["is_error"] is True
    assert "denied by auto mode: [Irreversible Local Destruction]" in text_of(seen["content"])
    assert "may retry" in text_of(seen["content"])
    # The classifier's requests are paid for like the conversation's.
    assert result.json()["usage"]["input_tokens"] == 100 * len(bodies)


def test_without_retry_the_denial_stands_and_deny_rules_come_first(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    log = denied_hook(project, retry=False, extra={"permissions": {"deny": ["Bash(git push:*)"]}})
    scenario = Scenario(
        turns=(
            turn(tool_use("Bash", {"command": "git push origin main"})),  # a deny rule
            turn(tool_use("Bash", {"command": "rm -rf build"})),
            turn(DENY),
            turn("Stopped."),
        )
    )
    result, bodies = run(project, tmp_path, scenario, "--permission-mode", "auto")
    assert result.returncode == 0, result.stderr
    assert len(bodies) == 4  # the deny rule decided without the classifier
    assert "deny rule" in text_of(last_tool_result(bodies[1])["content"])
    (denial,) = logged(log)  # a rule's denial is not a PermissionDenied
    assert denial["tool_input"]["command"] == "rm -rf build"
    text = text_of(last_tool_result(bodies[3])["content"])
    assert "denied by auto mode" in text and "retry" not in text
    assert (project / "build" / "out.o").exists()


def test_a_classifier_that_fails_never_allows(tmp_path: Path) -> None:
    """No verdict (an answer that is not one) or no classifier (the request fails): the call is
    asked as in default mode, and `-p` cannot ask, so it is denied; the hook hears it, and its
    retry does not apply."""
    project = make_project(tmp_path)
    log = denied_hook(project, retry=True)
    scenario = Scenario(
        turns=(
            turn(tool_use("Bash", {"command": "rm -rf build"})),
            turn("Looks fine to me!"),  # the classifier, with no verdict
            turn(tool_use("Bash", {"command": "rm -rf docs"})),
            # The classifier's request fails (401); the turn then serves the model's answer.
            turn("Nothing was deleted.", faults=[Fault(kind="auth")]),
        )
    )
    result, bodies = run(
        project, tmp_path, scenario, "--permission-mode", "auto", "--output-format", "json"
    )
    assert result.returncode == 0, result.stderr
    assert result.json()["result"] == "Nothing was deleted."
    assert (project / "build" / "out.o").exists() and (project / "docs" / "rules.md").exists()
    first, second = logged(log)
    assert first["reason"].startswith("Auto mode could not evaluate this action")
    assert second["reason"].startswith("Classifier unavailable")
    for body in (bodies[2], bodies[-1]):
        text = text_of(last_tool_result(body)["content"])
        assert "cannot ask the user" in text and "Auto mode could not judge" in text
        assert "may retry" not in text
    denials = result.json()["permission_denials"]
    assert [d["tool_input"]["command"] for d in denials] == ["rm -rf build", "rm -rf docs"]


def test_three_denials_in_a_row_pause_auto_mode_and_end_a_run_that_cannot_ask(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    turns = []
    for target in ("build", "docs", "CLAUDE.md"):
        turns += [turn(tool_use("Bash", {"command": f"rm -rf {target}"})), turn(DENY)]
    scenario = Scenario(turns=(*turns, turn("never asked for")))
    result, bodies = run(project, tmp_path, scenario, "--permission-mode", "auto")
    assert len(bodies) == 6  # the third denial ended the run
    assert "Auto mode has paused after 3 denials in a row" in result.stdout + result.stderr
    assert (project / "CLAUDE.md").exists()


def test_disable_auto_mode_refuses_auto_and_auto_mode_rules_are_read_where_documented(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    settings(project, {"disableAutoMode": "disable", "permissions": {"defaultMode": "auto"}})
    result, bodies = run(project, tmp_path, Scenario(turns=()), "--permission-mode", "auto")
    assert result.returncode == 1
    assert "auto mode is disabled by the settings" in result.stderr
    assert "Traceback" not in result.stderr and bodies == []
    # defaultMode auto falls back to default, with a warning; the write is not allowed.
    scenario = Scenario(turns=(turn(tool_use("Bash", {"command": PYTHON})), turn("ok")))
    result, bodies = run(project, tmp_path, scenario)
    assert result.returncode == 0, result.stderr
    assert "auto mode is disabled by the settings" in result.stderr
    assert len(bodies) == 2 and "cannot ask the user" in json.dumps(bodies[1]["messages"][-1])
    # autoMode prose reaches the classifier from local settings, never from shared ones.
    settings(project, {"autoMode": {"environment": ["SHARED-RULE-1 is trusted"]}})
    local = project / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"autoMode": {"allow": ["$defaults", "LOCAL-RULE-2 runs"]}}))
    scenario = Scenario(turns=(turn(tool_use("Bash", {"command": PYTHON})), turn(ALLOW), turn("")))
    result, bodies = run(project, tmp_path, scenario, "--permission-mode", "auto")
    assert result.returncode == 0, result.stderr
    classifier = json.dumps(bodies[1]["messages"])
    assert "LOCAL-RULE-2 runs" in classifier and "$defaults" not in classifier
    assert "SHARED-RULE-1" not in classifier
    assert "autoMode is not read from shared project settings" in result.stderr
