"""Auto memory through the real CLI against the fake server: the system prompt names the
project's memory folder, the model may write its notes there in the default permission mode
(while writing elsewhere outside the workspace stays refused), the next session starts with
MEMORY.md, and the variable or the setting that turns it off removes both."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from codeloop.store.data_paths import project_slug
from codeloop.testing.fake_server import FakeModelServer, RecordedRequest
from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.cli import provider_env, run_cli

MODEL = "claude-sonnet-4-5"
NOTE = "- Tests run with `make check` (not pytest directly)."
HEADER = "(user's auto-memory, persists across conversations)"


def folders(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    data = home / ".codeloop"
    memory = data / "projects" / project_slug(project) / "memory"
    return project, memory, {"CODELOOP_HOME": str(data), "HOME": str(home)}


def session(
    project: Path, env: dict[str, str], scenario: Scenario, **extra: str
) -> tuple[Any, list[RecordedRequest]]:
    with FakeModelServer(scenario) as server:
        run = run_cli(
            ["-p", "remember how to test", "--model", MODEL, "--output-format", "json"],
            cwd=project,
            env=provider_env(server, "anthropic", Path(env["HOME"])) | env | extra,
        )
        return run, server.requests


def user_texts(request: RecordedRequest) -> str:
    """Every text block of the request's user messages, one after the other."""
    return "\n".join(
        block.get("text", "")
        for message in request.body["messages"]
        if message["role"] == "user"
        for block in (
            message["content"]
            if isinstance(message["content"], list)
            else [{"text": message["content"]}]
        )
    )


def writes(memory: Path, elsewhere: Path) -> Scenario:
    return Scenario(
        turns=(
            turn(
                tool_use("Write", {"file_path": str(memory / "MEMORY.md"), "content": NOTE}),
                tool_use("Write", {"file_path": str(elsewhere), "content": "x"}),
            ),
            turn("Saved."),
        )
    )


def test_notes_written_in_one_session_reach_the_next(tmp_path: Path) -> None:
    project, memory, env = folders(tmp_path)
    elsewhere = tmp_path / "elsewhere.txt"
    first, requests = session(project, env, writes(memory, elsewhere))
    assert first.returncode == 0, first.stderr
    system = requests[0].body["system"][0]["text"]
    assert "# auto memory" in system and f"`{memory}/`" in system
    assert HEADER not in user_texts(requests[0])  # nothing saved yet
    # the memory folder is writable in the default mode; elsewhere outside the project is not
    assert (memory / "MEMORY.md").read_text() == NOTE
    assert not elsewhere.exists()
    results = [
        block
        for message in requests[1].body["messages"]
        for block in (message["content"] if isinstance(message["content"], list) else [])
        if block.get("type") == "tool_result"
    ]
    assert [bool(r.get("is_error")) for r in results] == [False, True]
    assert "outside the workspace" in json.dumps(results[1])

    second, requests = session(project, env, Scenario(turns=(turn("make check."),)))
    assert second.returncode == 0, second.stderr
    assert f"Contents of {memory / 'MEMORY.md'} {HEADER}:\n\n{NOTE}" in user_texts(requests[0])


@pytest.mark.parametrize("how", ["variable", "setting"])
def test_turned_off_there_is_no_folder_no_index_and_no_writing(tmp_path: Path, how: str) -> None:
    project, memory, env = folders(tmp_path)
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("- an older note\n")
    extra = {}
    if how == "variable":
        extra["CLAUDE_CODE_DISABLE_AUTO_MEMORY"] = "1"
    else:
        (project / ".claude").mkdir()
        (project / ".claude" / "settings.json").write_text('{"autoMemoryEnabled": false}')
    run, requests = session(project, env, writes(memory, tmp_path / "elsewhere.txt"), **extra)
    assert run.returncode == 0, run.stderr
    assert "auto memory" not in requests[0].body["system"][0]["text"]
    assert str(memory) not in json.dumps(requests[0].body["system"])
    assert "older note" not in user_texts(requests[0])
    assert (memory / "MEMORY.md").read_text() == "- an older note\n"  # the write was refused
