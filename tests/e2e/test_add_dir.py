"""`/add-dir PATH` adds a working directory mid-session, as Claude Code's command does: writes
there are the project's from then on (and rewound like theirs), the model is told on its next
turn, DirectoryAdded hooks (bash and Python scripts reading stdin JSON) fire with `directory`
and `source` and what they say reaches the model; what is no new directory is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codeloop.builder import build_session
from codeloop.commands.headless import expand_command
from codeloop.options import Options
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.test_claude_compat import make_project, run_all, script, settings
from tests.e2e.test_hook_events import COMMON, bash_script, payloads
from tests.unit.test_builder import environment

LOG = (
    'with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "hook-log.jsonl"), "a") as f:\n'
    "    f.write(json.dumps(payload) + '\\n')\n"
)


def directory_hooks(project: Path) -> None:
    """A Python hook logging its input, a bash one answering with a systemMessage."""
    log = script(project, "log.py", LOG)
    prepare = bash_script(
        project,
        "prepare.sh",
        "dir=$(python3 -c 'import json,sys; print(json.load(sys.stdin)[\"directory\"])')\n"
        'echo "{\\"systemMessage\\": \\"dependencies installed in $dir\\"}"\n',
    )
    hooks = [{"type": "command", "command": c} for c in (log, prepare)]
    settings(project, {"hooks": {"DirectoryAdded": [{"matcher": "slash_command", "hooks": hooks}]}})


def texts(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"])


async def test_an_added_directory_is_the_projects_from_then_on(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    directory_hooks(project)
    scenario = Scenario(
        turns=(
            turn(tool_use("Write", {"file_path": str(other / "before.txt"), "content": "x"})),
            turn("Not allowed there."),
            turn(tool_use("Write", {"file_path": str(other / "after.txt"), "content": "y"})),
            turn("Written."),
        )
    )
    with FakeModelServer(scenario) as server:
        env = environment(tmp_path, server.anthropic_base_url)
        options = Options(
            model="claude-sonnet-4-5", cwd=project, env=env, permission_mode="acceptEdits"
        )
        session = await build_session(options)
        try:
            _ = [event async for event in session.submit("write before.txt")]
            expanded = await expand_command(session, "/add-dir ../other")
            _ = [event async for event in session.submit("write after.txt")]
            assert session.checkpoints is not None
            last = session.checkpoints.list()[-1].number  # taken before after.txt was written
            assert (other / "after.txt").read_text() == "y"
            await session.rewind(last, conversation=False)
        finally:
            await session.aclose()
        bodies = [r.body for r in server.requests]
    # Outside the working directories, acceptEdits does not cover the write; once added, it does.
    assert not (other / "before.txt").exists()
    assert not (other / "after.txt").exists()  # written there, and the rewind took it back
    assert expanded.submit is None
    assert expanded.output == f"Added {other} as a working directory for this session."
    # The model hears of it with the next prompt, and of what the hook said, not before.
    reminder = f"The user added {other} as a working directory"
    assert reminder not in texts(bodies[1])
    told = texts(bodies[2])
    assert reminder in told
    assert f"dependencies installed in {other}" in told
    (fired,) = payloads(project / "hook-log.jsonl")
    assert fired["hook_event_name"] == "DirectoryAdded"
    assert fired["directory"] == str(other)
    assert fired["source"] == "slash_command"
    assert set(fired) >= COMMON


def test_headless_add_dir_fires_its_hooks_and_refuses_what_is_no_directory(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    (tmp_path / "lib").mkdir()
    (tmp_path / "notes.txt").write_text("a file")
    directory_hooks(project)
    runs, bodies = run_all(
        project,
        tmp_path,
        Scenario(turns=()),
        [
            ["-p", "/add-dir ../lib"],
            ["-p", "/add-dir ../missing"],
            ["-p", "/add-dir ../notes.txt"],
            ["-p", "/add-dir build"],  # already inside the project
        ],
    )
    added, missing, a_file, inside = runs
    assert added.returncode == 0, added.stderr
    assert f"Added {tmp_path / 'lib'} as a working directory" in added.stdout
    for refused, why in (
        (missing, f"{tmp_path / 'missing'}: no such directory"),
        (a_file, f"{tmp_path / 'notes.txt'} is not a directory"),
        (inside, f"{project / 'build'} is already inside the working directory {project}"),
    ):
        assert refused.returncode != 0
        assert why in refused.stderr
        assert "Traceback" not in refused.stderr
    # One add, one DirectoryAdded; no model call for any of it.
    assert [p["directory"] for p in payloads(project / "hook-log.jsonl")] == [str(tmp_path / "lib")]
    assert bodies == []
