"""MessageDisplay through the real CLI: a Python hook reading stdin JSON rewrites what `-p`
shows of each assistant message, while the transcript and the model keep the original."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.cli import PROVIDER_MODELS, provider_env, run_cli
from tests.e2e.test_claude_compat import make_project, run, script, settings

SECRET = "db-7.internal.example"
FIRST = f"Looking at {SECRET} first.\nThen the build.\n"
FINAL = f"Done; {SECRET} is fine."


def redacting_hook(project: Path, *, fail: bool = False) -> Path:
    """A MessageDisplay hook logging its input and showing the delta with the host redacted
    (or failing after logging, with `fail`)."""
    body = (
        'with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "display.jsonl"), "a") as f:\n'
        "    f.write(json.dumps(payload) + '\\n')\n"
    )
    if fail:
        body += "sys.exit(1)\n"
    else:
        body += (
            f"shown = payload['delta'].replace({SECRET!r}, '[host]')\n"
            "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'MessageDisplay',"
            " 'displayContent': shown}, 'systemMessage': 'discarded'}))\n"
        )
    command = script(project, "display.py", body)
    settings(
        project,
        {"hooks": {"MessageDisplay": [{"hooks": [{"type": "command", "command": command}]}]}},
    )
    return project / "display.jsonl"


def scenario() -> Scenario:
    return Scenario(
        turns=(
            turn(FIRST, tool_use("Bash", {"command": "ls build"})),
            turn(tool_use("Bash", {"command": "ls docs"})),  # no text: no MessageDisplay
            turn(FINAL),
        )
    )


def calls(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def transcript_text(tmp_path: Path) -> str:
    return "".join(p.read_text() for p in (tmp_path / "home").rglob("*.jsonl"))


def test_display_rewrites_what_p_shows_not_what_the_model_or_transcript_hold(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    log = redacting_hook(project)
    result, bodies = run(project, tmp_path, scenario())
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Done; [host] is fine.\n"
    assert "discarded" not in result.stderr  # systemMessage is not MessageDisplay's
    first, final = calls(log)
    for call, text in ((first, FIRST), (final, FINAL)):
        assert call["hook_event_name"] == "MessageDisplay"
        assert {"session_id", "transcript_path", "cwd", "permission_mode"} <= call.keys()
        assert (call["index"], call["final"], call["delta"]) == (0, True, text)
    assert first["turn_id"] == final["turn_id"] and first["message_id"] != final["message_id"]
    assert not first["message_id"].startswith("msg_")
    # The model and the transcript keep the original text.
    assert json.dumps(FIRST)[1:-1] in json.dumps(bodies[1]["messages"])
    transcript = transcript_text(tmp_path)
    assert json.dumps(FINAL)[1:-1] in transcript and "[host]" not in transcript


def test_stream_json_shows_the_display_text_and_a_failing_hook_shows_the_original(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    redacting_hook(project)
    result, _ = run(project, tmp_path, scenario(), "--output-format", "stream-json", "--verbose")
    assert result.returncode == 0, result.stderr
    lines = result.json_lines()
    said = result.assistant_texts()
    assert said == ["Looking at [host] first.\nThen the build.\n", "Done; [host] is fine."]
    assert lines[-1]["result"] == "Done; [host] is fine."
    assert SECRET not in result.stdout

    log = redacting_hook(project, fail=True)
    log.unlink()
    result, _ = run(project, tmp_path, scenario())
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{FINAL}\n"
    assert len(calls(log)) == 2 and "MessageDisplay" not in result.stderr


def test_the_interactive_ui_sends_batches_of_lines_and_shows_their_replacements(
    tmp_path: Path,
) -> None:
    """Without a terminal the UI reads and writes plain lines; it streams like the terminal
    does, so the hook sees the message line by line."""
    project = make_project(tmp_path)
    log = redacting_hook(project)
    answer = f"First {SECRET}\nsecond line\nlast {SECRET}"
    scenario = Scenario(turns=(turn(answer, chunk_chars=7),))
    with FakeModelServer(scenario) as server:
        env = provider_env(server, "anthropic", tmp_path / "home")
        model = ["--model", PROVIDER_MODELS["anthropic"]]
        done = run_cli(model, cwd=project, env=env, stdin="check\n")
        sent = [r.body for r in server.requests]
    assert done.returncode == 0, done.stderr
    assert "First [host] second line last [host]" in done.stdout  # one markdown paragraph
    assert SECRET not in done.stdout
    batches = [(c["index"], c["final"], c["delta"]) for c in calls(log)]
    assert batches == [
        (0, False, f"First {SECRET}\n"),
        (1, False, "second line\n"),
        (2, True, f"last {SECRET}"),
    ]
    assert len(sent) == 1 and sent[0]["messages"][0]["role"] == "user"
