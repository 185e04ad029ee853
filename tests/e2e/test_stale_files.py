"""Staleness by content through the real CLI against the fake model server: a file changed by
a command after the model read it, its mtime kept (`touch -r`, `cp -p`), is not overwritten."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from codeloop.testing.fake_server import FakeModelServer, RecordedRequest
from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.cli import provider_env, run_cli

MODEL = "claude-sonnet-4-5"
FLAGS = ["--model", MODEL, "--output-format", "json", "--allowedTools", "Bash,Write,Edit"]
# The user's version, as long as the model's draft and stamped with the draft's mtime.
CHANGE = (
    "printf 'users v2\\n' > notes.new && touch -r notes.txt notes.new && "
    "cp -p notes.new notes.txt && rm notes.new"
)


def tool_result(request: RecordedRequest) -> dict[str, Any]:
    """The one tool result the request's last message carries."""
    (block,) = [
        b
        for b in request.body["messages"][-1]["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    return block


def test_a_file_changed_with_its_mtime_kept_is_not_overwritten(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("draft v1\n")
    mtime = target.stat().st_mtime_ns
    turns = [
        turn(tool_use("Read", {"file_path": str(target)})),
        turn(tool_use("Bash", {"command": CHANGE})),
        turn(tool_use("Write", {"file_path": str(target), "content": "the model's v3\n"})),
        turn(tool_use("Edit", {"file_path": str(target), "old_string": "v", "new_string": "V"})),
        turn("Done."),
    ]
    with FakeModelServer(Scenario(turns=tuple(turns))) as server:
        run = run_cli(
            ["-p", "tidy the notes", *FLAGS],
            cwd=tmp_path,
            env=provider_env(server, "anthropic", tmp_path)
            | {"CODELOOP_HOME": str(tmp_path / "home")},
        )
        requests = server.requests
    assert run.returncode == 0, run.stderr
    changed = tool_result(requests[2])
    assert not changed.get("is_error"), changed
    assert target.read_text() == "users v2\n" and target.stat().st_mtime_ns == mtime
    for request in requests[3:5]:
        refused = tool_result(request)
        text = json.dumps(refused["content"])
        assert refused["is_error"], refused
        assert "changed on disk since you last read it" in text
        assert "content changed, mtime unchanged" in text
    assert target.read_text() == "users v2\n"  # the user's change survived both


async def test_a_read_the_conversation_was_rewound_past_no_longer_permits_a_write(
    tmp_path: Path,
) -> None:
    """/rewind of the conversation to before a Read takes the file's content out of what the
    model has seen: overwriting the file then needs a new Read, as it did before that Read."""
    from codeloop.builder import build_session
    from codeloop.options import Options
    from tests.e2e.test_claude_compat import make_project
    from tests.unit.test_builder import environment

    project = make_project(tmp_path)
    target = project / "notes.txt"
    target.write_text("the user's notes\n")
    draft = tool_use("Write", {"file_path": str(project / "draft.txt"), "content": "d\n"})
    write = tool_use("Write", {"file_path": str(target), "content": "the model's\n"})
    turns = [turn(draft), turn("Drafted."), turn(tool_use("Read", {"file_path": str(target)}))]
    turns += [turn("Read."), turn(write), turn("Done.")]
    with FakeModelServer(Scenario(turns=tuple(turns))) as server:
        env = environment(tmp_path, server.anthropic_base_url)
        options = Options(model=MODEL, cwd=project, env=env, permission_mode="acceptEdits")
        session = await build_session(options)
        try:
            _ = [event async for event in session.submit("draft")]
            _ = [event async for event in session.submit("read notes.txt")]
            assert session.checkpoints is not None
            (before_read,) = session.checkpoints.list()  # taken before the draft was written
            await session.rewind(before_read.number, files=False)
            assert "read notes.txt" not in repr(session.messages)
            _ = [event async for event in session.submit("overwrite notes.txt")]
        finally:
            await session.aclose()
        refused = tool_result(server.requests[-1])
    assert refused["is_error"] is True
    assert "has not been read since this session started" in json.dumps(refused)
    assert target.read_text() == "the user's notes\n"


def test_after_continue_a_file_changed_between_the_runs_is_not_overwritten(tmp_path: Path) -> None:
    """The Read of the first run is in the resumed history, but the file changed after it
    (its mtime kept): the Edit is refused, saying why that Read does not count, and goes
    through once the model has read the file again."""
    target = tmp_path / "notes.txt"
    target.write_text("x = 1\n")
    edit = tool_use("Edit", {"file_path": str(target), "old_string": "= 2", "new_string": "= 3"})
    turns = [turn(tool_use("Read", {"file_path": str(target)})), turn("Read.")]
    turns += [turn(edit), turn(tool_use("Read", {"file_path": str(target)})), turn(edit)]
    turns += [turn("Edited.")]
    with FakeModelServer(Scenario(turns=tuple(turns))) as server:
        env = provider_env(server, "anthropic", tmp_path) | {"CODELOOP_HOME": str(tmp_path / "h")}
        first = run_cli(["-p", "read notes.txt", *FLAGS], cwd=tmp_path, env=env)
        mtime = target.stat().st_mtime_ns
        target.write_text("x = 2\n")  # the user's change, the mtime put back
        os.utime(target, ns=(mtime, mtime))
        second = run_cli(["-p", "make it 3", "--continue", *FLAGS], cwd=tmp_path, env=env)
        refused, _, edited = (tool_result(r) for r in server.requests[-3:])
    assert first.returncode == 0 and second.returncode == 0, second.stderr
    assert refused["is_error"] is True
    assert "not been read since this session started or was resumed" in refused["content"]
    assert "is_error" not in edited
    assert target.read_text() == "x = 3\n"
