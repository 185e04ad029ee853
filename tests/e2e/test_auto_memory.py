"""Auto memory through the real CLI against the fake server: the system prompt names the
project's memory folder, the model may write its notes there in the default permission mode
(while writing elsewhere outside the workspace stays refused), the next session starts with
MEMORY.md, and the variable or the setting that turns it off removes both."""

from __future__ import annotations

import json
import subprocess
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
    project: Path, env: dict[str, str], scenario: Scenario, *args: str, **extra: str
) -> tuple[Any, list[RecordedRequest]]:
    with FakeModelServer(scenario) as server:
        run = run_cli(
            ["-p", "remember how to test", "--model", MODEL, "--output-format", "json", *args],
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


def tool_errors(request: RecordedRequest) -> list[bool]:
    """Whether each tool result the request carries is an error, in order."""
    return [
        bool(block.get("is_error"))
        for message in request.body["messages"]
        for block in (message["content"] if isinstance(message["content"], list) else [])
        if block.get("type") == "tool_result"
    ]


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


def write_settings(path: Path, settings: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings))


# Where a user may choose the folder: every settings source but the shared project's.
CHOSEN_IN = ["claude-user", "codeloop-user", "local", "flag", "managed"]


@pytest.mark.parametrize("where", CHOSEN_IN)
def test_a_folder_the_settings_choose_is_the_memory_everywhere(tmp_path: Path, where: str) -> None:
    project, default, env = folders(tmp_path)
    home = Path(env["HOME"])
    chosen = home / "notes" / "memory"  # written `~/notes/memory`: `~` is expanded
    settings = {"autoMemoryDirectory": "~/notes/memory"}
    args: tuple[str, ...] = ()
    paths = {
        "claude-user": home / ".claude" / "settings.json",
        "codeloop-user": Path(env["CODELOOP_HOME"]) / "settings.json",
        "local": project / ".claude" / "settings.local.json",
        "managed": tmp_path / "managed" / "managed-settings.json",
    }
    if where == "flag":
        args = ("--settings", json.dumps(settings))
    else:
        write_settings(paths[where], settings)
    env["CODELOOP_MANAGED_DIR"] = str(tmp_path / "managed")
    elsewhere = tmp_path / "elsewhere.txt"
    first, requests = session(project, env, writes(chosen, elsewhere), *args)
    assert first.returncode == 0, first.stderr
    assert "autoMemoryDirectory" not in first.stderr
    system = requests[0].body["system"][0]["text"]
    assert f"`{chosen}/`" in system and str(default) not in system
    # writing there is allowed in the default mode; elsewhere outside the project is not
    assert (chosen / "MEMORY.md").read_text() == NOTE
    assert tool_errors(requests[1]) == [False, True] and not elsewhere.exists()
    assert not default.exists()

    second, requests = session(project, env, Scenario(turns=(turn("make check."),)), *args)
    assert second.returncode == 0, second.stderr
    assert f"Contents of {chosen / 'MEMORY.md'} {HEADER}:\n\n{NOTE}" in user_texts(requests[0])


@pytest.mark.parametrize(
    ("file", "value", "why"),
    [
        (".claude/settings.json", "{tmp}/shared", "is not read from shared project settings"),
        (".codeloop/settings.json", "{tmp}/shared", "is not read from shared project settings"),
        (".claude/settings.local.json", "shared", "'shared' is a relative path"),
        (".claude/settings.local.json", "~", "'~' holds your home folder"),
        (".claude/settings.local.json", "~/.claude", "holds the configuration folder"),
        (".claude/settings.local.json", "~/.codeloop", "holds the configuration folder"),
        (".claude/settings.local.json", "{tmp}/project", "holds the working folder"),
        (".claude/settings.local.json", "{tmp}/alias", "holds the working folder"),
        (".claude/settings.local.json", "", 'expected a non-empty string, got ""'),
    ],
)
def test_a_folder_that_may_not_be_the_memory_is_refused_aloud(
    tmp_path: Path, file: str, value: str, why: str
) -> None:
    """A shared repository cannot aim the writes allowed without asking at a folder of its
    choosing; a relative path (relative to what?) is refused too, and so is a folder holding
    the home folder, the working folder or the agent's configuration (all of it would be
    writable unasked). One warning each, naming the file, the key and why; the default folder
    is the memory."""
    project, default, env = folders(tmp_path)
    (tmp_path / "alias").symlink_to(project)  # the working folder by another name
    write_settings(project / file, {"autoMemoryDirectory": value.format(tmp=tmp_path)})
    home = Path(env["HOME"])
    named = home / value[2:] if value.startswith("~/") else Path(value.format(tmp=tmp_path))
    target = project / "shared" if value == "shared" else named if named.is_absolute() else home
    run, requests = session(project, env, writes(target, tmp_path / "elsewhere.txt"))
    assert run.returncode == 0, run.stderr
    warnings = [line for line in run.stderr.splitlines() if "autoMemoryDirectory" in line]
    assert len(warnings) == 1, run.stderr
    assert str(project / file) in warnings[0] and why in warnings[0], warnings
    system = requests[0].body["system"][0]["text"]
    assert f"`{default}/`" in system
    assert not (target / "MEMORY.md").exists()  # the write there was refused


def test_a_chosen_folder_lets_notes_through_but_not_what_configures_the_agent(
    tmp_path: Path,
) -> None:
    """The folder's allow rule is for notes: where the folder holds settings or git hooks (a
    notes repository synced with git, say), writing those is still asked (a headless run
    cannot ask, so refused), as Claude Code asks for them."""
    project, _, env = folders(tmp_path)
    chosen = tmp_path / "notes"
    subprocess.run(["git", "init", "-q", str(chosen)], check=True)
    guarded = [chosen / ".claude" / "settings.json", chosen / ".git" / "hooks" / "pre-commit"]
    write_settings(
        project / ".claude" / "settings.local.json", {"autoMemoryDirectory": str(chosen)}
    )
    calls = [tool_use("Write", {"file_path": str(path), "content": "{}"}) for path in guarded]
    note = tool_use("Write", {"file_path": str(chosen / "MEMORY.md"), "content": NOTE})
    run, requests = session(project, env, Scenario(turns=(turn(note, *calls), turn("Saved."))))
    assert run.returncode == 0, run.stderr
    assert f"`{chosen}/`" in requests[0].body["system"][0]["text"]
    assert tool_errors(requests[1]) == [False, True, True]
    assert (chosen / "MEMORY.md").read_text() == NOTE
    assert not any(path.exists() for path in guarded)
    assert "configures the agent or runs code" in json.dumps(requests[1].body["messages"][-1])
