"""`codeloop acp` end to end: the official Python SDK's client side acts as the editor
(tests/acp_agent/editor.py) against a real `codeloop acp` process, the fake model server
behind it."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import pytest

from tests.needs import module

module("acp", "needs the acp extra (pip install -e '.[dev,acp]')")

import acp  # noqa: E402
from acp import RequestError, schema  # noqa: E402

from codeloop.testing.fake_server import FakeModelServer  # noqa: E402
from codeloop.testing.scenario import text, thinking, tool_use, turn  # noqa: E402
from tests.acp_agent.editor import Editor, acp_env, codeloop_acp, descendant, spawned  # noqa: E402
from tests.e2e.cli import run_cli  # noqa: E402
from tests.mcp_servers import PY_SERVER  # noqa: E402
from tests.sdk.drive import sent_text, tool_results  # noqa: E402

# A 1x1 PNG.
PIXEL = "".join(
    (
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ",
        "AAAABJRU5ErkJggg==",
    )
)


def project(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return work


def assert_told_in_order(editor: Editor) -> None:
    """Every tool call: its `tool_call` before anything else about it, and one at most."""
    for call_id, entries in editor.calls().items():
        first = entries[0]
        assert first[0] == "update" and first[1].session_update == "tool_call", call_id
        starts = [e for e in entries if e[0] == "update" and e[1].session_update == "tool_call"]
        assert len(starts) == 1, call_id


def statuses(entries: list[Any]) -> list[str]:
    return [e[1].status for e in entries if e[0] == "update" and e[1].status is not None]


def final_status(entries: list[Any]) -> str | None:
    found = statuses(entries)
    return found[-1] if found else None


async def test_an_editor_session_reads_runs_and_edits_with_permission(tmp_path: Path) -> None:
    """The issue's first acceptance point: text, Read, a read-only Bash, an Edit that asks."""
    work = project(tmp_path)
    target = work / "greeting.txt"
    target.write_text("hello\nworld\n")
    script = [
        turn(
            "Let me look at the file.",
            tool_use("Read", {"file_path": str(target)}),
            tool_use("Bash", {"command": "ls"}),
        ),
        turn(
            tool_use(
                "Edit", {"file_path": str(target), "old_string": "world", "new_string": "editor"}
            )
        ),
        turn("Changed world to editor."),
    ]
    editor = Editor()
    with FakeModelServer(script) as server:
        async with codeloop_acp(editor, acp_env(server, tmp_path), work) as (conn, _):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            answer = await conn.prompt(
                session_id=new.session_id, prompt=[acp.text_block("Greet the editor.")]
            )
    assert answer.stop_reason == "end_turn"
    assert (
        "Let me look at the file." in editor.text() and "Changed world to editor." in editor.text()
    )
    assert target.read_text() == "hello\neditor\n"
    assert_told_in_order(editor)
    starts = {u.tool_call_id: u for u in editor.updates("tool_call")}
    kinds = {u.kind for u in starts.values()}
    assert kinds == {"read", "execute", "edit"}
    for call_id, entries in editor.calls().items():
        assert statuses(entries) == ["pending", "in_progress", "completed"], starts[call_id]
    (edit_id,) = [i for i, u in starts.items() if u.kind == "edit"]
    assert starts[edit_id].locations == [schema.ToolCallLocation(path=str(target))]
    diffs = [
        item
        for u in editor.updates()
        if getattr(u, "tool_call_id", None) == edit_id
        for item in u.content or []
        if item.type == "diff"
    ]
    assert diffs and all(d.path == str(target) for d in diffs)
    assert any("editor" in d.new_text and "world" in (d.old_text or "") for d in diffs)
    (asked,) = editor.asks()
    tool_call, options = asked
    assert tool_call.tool_call_id == edit_id
    assert {o.kind for o in options} >= {"allow_once", "reject_once"}
    # The permission request came after the call's tool_call, and it ran once answered.
    entries = editor.calls()[edit_id]
    asked_at = [e[0] for e in entries].index("ask")
    running_at = next(
        i for i, e in enumerate(entries) if getattr(e[1], "status", None) == "in_progress"
    )
    assert 0 < asked_at < running_at
    assert editor.updates("available_commands_update")


async def test_initialize_says_what_codeloop_speaks(tmp_path: Path) -> None:
    async with spawned(Editor(), acp_env(None, tmp_path), tmp_path) as (conn, _):
        init = await conn.initialize(protocol_version=1)
    assert init.protocol_version == 1
    assert init.agent_capabilities is not None
    prompts = init.agent_capabilities.prompt_capabilities
    mcp = init.agent_capabilities.mcp_capabilities
    assert prompts is not None and mcp is not None
    assert (prompts.image, prompts.audio, prompts.embedded_context) == (True, False, True)
    assert (mcp.http, mcp.sse) == (True, True)
    assert init.agent_info is not None and init.agent_info.name == "codeloop"


async def test_rejections_and_cancelled_requests_reach_the_model(tmp_path: Path) -> None:
    work = project(tmp_path)
    first, second = work / "one.txt", work / "two.txt"
    script = [
        turn(tool_use("Write", {"file_path": str(first), "content": "1"})),
        turn(tool_use("Write", {"file_path": str(second), "content": "2"})),
        turn("Neither was written."),
    ]
    answers = iter(["reject_once", None])  # None: the editor cancels the request
    editor = Editor(pick=lambda tool_call, options: next(answers))
    with FakeModelServer(script) as server:
        async with codeloop_acp(editor, acp_env(server, tmp_path), work) as (conn, _):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            answer = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Write.")])
    assert answer.stop_reason == "end_turn"
    assert not first.exists() and not second.exists()
    (rejected,) = tool_results(server.requests[1])
    (cancelled,) = tool_results(server.requests[2])
    assert rejected["is_error"] and "rejected" in json.dumps(rejected)
    assert cancelled["is_error"] and "cancelled the permission request" in json.dumps(cancelled)
    for entries in editor.calls().values():
        assert final_status(entries) == "failed"


@pytest.mark.parametrize(
    ("choice", "kept_as"), [("allow_always", "allow"), ("reject_always", "deny")]
)
async def test_always_keeps_the_rule_the_terminal_keeps(
    tmp_path: Path, choice: str, kept_as: str
) -> None:
    """ "Always" keeps the policy's suggestion (the rule the TUI's dialog keeps) as an allow
    or a deny rule, and the second call meets it without asking."""
    work = project(tmp_path)
    (work / ".git").mkdir()
    script = [
        turn(tool_use("Write", {"file_path": str(work / "a.txt"), "content": "a"})),
        turn(tool_use("Write", {"file_path": str(work / "b.txt"), "content": "b"})),
        turn("Done."),
    ]
    editor = Editor(
        pick=lambda tool_call, options: next(o.option_id for o in options if o.kind == choice)
    )
    with FakeModelServer(script) as server:
        async with codeloop_acp(editor, acp_env(server, tmp_path), work) as (conn, _):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Write both.")])
    assert len(editor.asks()) == 1
    kept = json.loads((work / ".codeloop" / "settings.local.json").read_text())
    assert kept["permissions"] == {kept_as: ["Write"]}
    written = [(work / name).exists() for name in ("a.txt", "b.txt")]
    assert written == ([True, True] if kept_as == "allow" else [False, False])
    (second,) = tool_results(server.requests[2])
    assert bool(second.get("is_error")) == (kept_as == "deny")


async def test_modes_switch_what_is_asked(tmp_path: Path) -> None:
    work = project(tmp_path)
    target = work / "a.txt"
    script = [
        turn(tool_use("Write", {"file_path": str(target), "content": "plan"})),
        turn("Plan mode refused it."),
        turn(tool_use("Write", {"file_path": str(target), "content": "edits"})),
        turn("Written."),
    ]
    editor = Editor()
    with FakeModelServer(script) as server:
        async with codeloop_acp(editor, acp_env(server, tmp_path), work) as (conn, _):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            assert new.modes is not None and new.modes.current_mode_id == "default"
            ids = {m.id for m in new.modes.available_modes}
            assert {"default", "acceptEdits", "plan", "bypassPermissions"} <= ids
            await conn.set_session_mode(session_id=new.session_id, mode_id="plan")
            await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Try.")])
            assert not target.exists()
            await conn.set_session_mode(session_id=new.session_id, mode_id="acceptEdits")
            await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Again.")])
            with pytest.raises(RequestError) as bad:
                await conn.set_session_mode(session_id=new.session_id, mode_id="yolo")
    assert bad.value.code == -32602 and "yolo" in str(bad.value.data)
    assert target.read_text() == "edits"
    assert editor.asks() == []
    modes = [u.current_mode_id for u in editor.updates("current_mode_update")]
    assert modes == ["plan", "acceptEdits"]


async def test_thinking_plans_and_stop_reasons(tmp_path: Path) -> None:
    work = project(tmp_path)
    todos = [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing"},
    ]
    script = [
        # --max-turns 1: each prompt gets one model turn, so each is one turn of the script.
        turn(thinking("Let me plan.", "sig"), tool_use("TodoWrite", {"todos": todos})),
        turn("I can't help with that.", stop_reason="refusal"),
        turn(tool_use("Bash", {"command": "ls"})),
    ]
    editor = Editor()
    with FakeModelServer(script) as server:
        async with codeloop_acp(editor, acp_env(server, tmp_path), work, "--max-turns", "1") as (
            conn,
            _,
        ):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            session = new.session_id
            planned = await conn.prompt(session_id=session, prompt=[acp.text_block("Plan.")])
            refused = await conn.prompt(session_id=session, prompt=[acp.text_block("Bad.")])
            limited = await conn.prompt(session_id=session, prompt=[acp.text_block("List.")])
    assert planned.stop_reason == "max_turn_requests"
    assert refused.stop_reason == "refusal"
    assert limited.stop_reason == "max_turn_requests"
    assert "Let me plan." in "".join(u.content.text for u in editor.updates("agent_thought_chunk"))
    (plan,) = editor.updates("plan")
    assert [(e.content, e.status) for e in plan.entries] == [
        ("Read the code", "completed"),
        ("Fix the bug", "in_progress"),
    ]
    assert all(u.title != "TodoWrite" for u in editor.updates("tool_call"))
    # After each request: how full the window is, and the cost so far.
    usages = editor.updates("usage_update")
    assert len(usages) == 3 and all(u.size >= 100_000 and u.used >= 100 for u in usages)
    assert usages[-1].cost is not None and usages[-1].cost.amount > usages[0].cost.amount > 0


async def test_images_and_the_editors_file_content_reach_the_model(tmp_path: Path) -> None:
    work = project(tmp_path)
    notes = work / "notes.md"
    notes.write_text("on disk\n")
    editor = Editor()
    with FakeModelServer([turn("Seen.")]) as server:
        async with codeloop_acp(editor, acp_env(server, tmp_path), work) as (conn, _):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            blocks: list[Any] = [
                acp.text_block("Look at "),
                acp.resource_block(
                    acp.embedded_text_resource(notes.as_uri(), "unsaved in the editor\n")
                ),
                acp.image_block(PIXEL, "image/png"),
            ]
            answer = await conn.prompt(session_id=new.session_id, prompt=blocks)
            with pytest.raises(RequestError) as audio:
                await conn.prompt(
                    session_id=new.session_id, prompt=[acp.audio_block(PIXEL, "audio/wav")]
                )
    assert answer.stop_reason == "end_turn"
    assert audio.value.code == -32602 and "audio" in str(audio.value.data)
    (request,) = server.requests
    sent = request.body["messages"][-1]["content"]
    assert any(b["type"] == "image" and b["source"]["data"] == PIXEL for b in sent)
    text_sent = sent_text(request)
    assert "unsaved in the editor" in text_sent and "on disk" not in text_sent
    assert "@notes.md" in text_sent
    base64.b64decode(PIXEL)


async def test_an_mcp_server_the_editor_passes_serves_its_tools(tmp_path: Path) -> None:
    work = project(tmp_path)
    script = [turn(tool_use("mcp__ed__echo", {"text": "from the editor"})), turn("Echoed.")]
    editor = Editor()
    server_of_editor = schema.McpServerStdio(
        name="ed", command=PY_SERVER[0], args=[*PY_SERVER[1:], "--name", "ed"], env=[]
    )
    with FakeModelServer(script) as server:
        async with codeloop_acp(editor, acp_env(server, tmp_path), work) as (conn, _):
            new = await conn.new_session(cwd=str(work), mcp_servers=[server_of_editor])
            answer = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Echo.")])
    assert answer.stop_reason == "end_turn"
    (result,) = tool_results(server.requests[1])
    assert not result.get("is_error") and "from the editor" in json.dumps(result)
    ((tool_call, _),) = editor.asks()  # MCP tools ask, whoever started the server
    assert tool_call.title == "ed: echo"
    # Once the server is up, its prompts are slash commands too.
    offered = editor.updates("available_commands_update")[-1].available_commands
    assert "mcp__ed__review" in {c.name for c in offered}


async def test_cancel_ends_a_streaming_answer(tmp_path: Path) -> None:
    work = project(tmp_path)
    script = [turn(text("Starting", delay_after=60), text(" and never finishing.")), turn("Yes?")]
    editor = Editor()
    with FakeModelServer(script) as server:
        async with codeloop_acp(editor, acp_env(server, tmp_path), work) as (conn, _):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            running = asyncio.ensure_future(
                conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Go.")])
            )
            await editor.wait_for("agent_message_chunk")
            with pytest.raises(RequestError) as busy:  # one prompt at a time
                await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("And?")])
            await conn.cancel(session_id=new.session_id)
            # Far sooner than the 60 s the model's stream stalls for.
            cancelled = await asyncio.wait_for(running, 30)
            after = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Still?")])
    assert cancelled.stop_reason == "cancelled"
    assert busy.value.code == -32600 and "already running" in str(busy.value.data)
    assert after.stop_reason == "end_turn" and editor.text().endswith("Yes?")


async def test_cancel_stops_a_long_command(tmp_path: Path) -> None:
    psutil = pytest.importorskip("psutil")
    work = project(tmp_path)
    script = [turn(tool_use("Bash", {"command": "sleep 300"})), turn("Stopped.")]
    editor = Editor()
    with FakeModelServer(script) as server:
        async with codeloop_acp(
            editor, acp_env(server, tmp_path), work, "--permission-mode", "bypassPermissions"
        ) as (conn, process):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            running = asyncio.ensure_future(
                conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Wait.")])
            )
            await editor.wait_for("tool_call")
            sleeping = await asyncio.to_thread(descendant, psutil, process.pid, "sleep")
            await conn.cancel(session_id=new.session_id)
            answer = await asyncio.wait_for(running, 30)
            assert not sleeping.is_running() or sleeping.status() == psutil.STATUS_ZOMBIE
    assert answer.stop_reason == "cancelled"
    (entries,) = editor.calls().values()
    assert final_status(entries) == "failed"


async def test_bad_requests_are_answered_and_the_agent_keeps_serving(tmp_path: Path) -> None:
    work = project(tmp_path)
    editor = Editor()
    with FakeModelServer([turn("Still here.")]) as server:
        async with codeloop_acp(editor, acp_env(server, tmp_path), work) as (conn, _):
            with pytest.raises(RequestError) as unknown:
                await conn._conn.send_request("session/teleport", {"sessionId": "x"})
            with pytest.raises(RequestError) as malformed:
                await conn._conn.send_request("session/new", {"cwd": 7})
            with pytest.raises(RequestError) as relative:
                await conn.new_session(cwd="work", mcp_servers=[])
            with pytest.raises(RequestError) as no_session:
                await conn.prompt(session_id="nope", prompt=[acp.text_block("Hi.")])
            await conn.cancel(session_id="nope")  # a notification: nothing to answer
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            with pytest.raises(RequestError) as empty:
                await conn.prompt(session_id=new.session_id, prompt=[])
            answer = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Hi.")])
    assert unknown.value.code == -32601
    assert malformed.value.code == -32602
    assert relative.value.code == -32602 and "'work'" in str(relative.value.data)
    assert no_session.value.code == -32602 and "nope" in str(no_session.value.data)
    assert empty.value.code == -32602
    assert answer.stop_reason == "end_turn" and editor.text() == "Still here."


async def test_load_replays_the_conversation_in_a_new_process(tmp_path: Path) -> None:
    work = project(tmp_path)
    notes = work / "notes.txt"
    notes.write_text("remember 42\n")
    script = [
        turn(
            "Reading.",
            tool_use("Read", {"file_path": str(notes)}),
            tool_use(
                "TodoWrite", {"todos": [{"content": "Find the number", "status": "completed"}]}
            ),
        ),
        turn("The number is 42."),
        turn("Still 42."),
    ]
    first, second = Editor(), Editor()
    with FakeModelServer(script) as server:
        async with codeloop_acp(first, acp_env(server, tmp_path), work) as (conn, _):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Which number?")])
        # The first process is gone (stdin closed); a new one continues the session.
        async with codeloop_acp(second, acp_env(server, tmp_path), work) as (conn, _):
            loaded = await conn.load_session(
                cwd=str(work), session_id=new.session_id, mcp_servers=[]
            )
            second.log.append(("loaded",))
            answer = await conn.prompt(
                session_id=new.session_id, prompt=[acp.text_block("And now?")]
            )
            with pytest.raises(RequestError) as unknown:
                await conn.load_session(cwd=str(work), session_id="not-a-session", mcp_servers=[])
    assert loaded.modes is not None and answer.stop_reason == "end_turn"
    before = second.log[: second.log.index(("loaded",))]
    replayed = [e[1] for e in before if e[0] == "update"]
    kinds = [u.session_update for u in replayed]
    assert "user_message_chunk" in kinds
    assert kinds.index("user_message_chunk") < kinds.index("agent_message_chunk")
    said = [u.content.text for u in replayed if u.session_update == "user_message_chunk"]
    assert said == ["Which number?"]
    answered = "".join(
        u.content.text for u in replayed if u.session_update == "agent_message_chunk"
    )
    assert answered == "Reading.The number is 42."
    (start,) = [u for u in replayed if u.session_update == "tool_call"]
    assert (start.kind, start.title) == ("read", "Read notes.txt")
    done = [u for u in replayed if u.session_update == "tool_call_update"]
    assert done[-1].tool_call_id == start.tool_call_id and done[-1].status == "completed"
    (plan,) = [u for u in replayed if u.session_update == "plan"]
    assert [(e.content, e.status) for e in plan.entries] == [("Find the number", "completed")]
    # The continued conversation carries the old one.
    assert "The number is 42." in sent_text(server.requests[2])
    assert second.text().endswith("Still 42.")
    assert unknown.value.code in (-32602, -32603) and "not-a-session" in str(unknown.value.data)


async def test_the_model_reads_and_edits_the_editors_unsaved_buffer(tmp_path: Path) -> None:
    """With fs/* declared, Read sees the editor's buffer (not the disk) and Edit and Write
    land in the editor; without them, the disk as before."""
    work = project(tmp_path)
    code = work / "app.py"
    code.write_text("print('saved')\n")
    new_file = work / "new.py"
    script = [
        turn(tool_use("Read", {"file_path": str(code)})),
        turn(
            tool_use(
                "Edit",
                {"file_path": str(code), "old_string": "unsaved", "new_string": "edited"},
            ),
            tool_use("Write", {"file_path": str(new_file), "content": "x = 1\n"}),
        ),
        turn("Edited the buffer."),
    ]
    editor = Editor(buffers={str(code): "print('unsaved')\n"})
    with FakeModelServer(script) as server:
        async with codeloop_acp(
            editor, acp_env(server, tmp_path), work, "--permission-mode", "acceptEdits", fs=True
        ) as (conn, _):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            linked = acp.resource_link_block("app.py", code.as_uri())
            answer = await conn.prompt(
                session_id=new.session_id, prompt=[acp.text_block("Go. "), linked]
            )
    assert answer.stop_reason == "end_turn"
    # The file the prompt links is attached as the editor has it.
    assert "print('unsaved')" in sent_text(server.requests[0])
    assert "print('saved')" not in sent_text(server.requests[0])
    (read,) = tool_results(server.requests[1])
    assert "unsaved" in json.dumps(read) and "saved')" not in json.dumps(read).replace(
        "unsaved", ""
    )
    edited, written = tool_results(server.requests[2])
    assert not edited.get("is_error") and not written.get("is_error"), (edited, written)
    assert editor.written == [(str(code), "print('edited')\n"), (str(new_file), "x = 1\n")]
    # The disk is the editor's to save.
    assert code.read_text() == "print('saved')\n" and not new_file.exists()


async def test_bash_runs_in_the_editors_terminal(tmp_path: Path) -> None:
    """With `terminal` declared, Bash's commands run in the editor's terminals (the call
    shows the terminal), the cwd still carries over, and a cancel kills the command."""
    work = project(tmp_path)
    (work / "sub").mkdir()
    script = [
        turn(tool_use("Bash", {"command": "cd sub && echo in $(basename $PWD)"})),
        turn(tool_use("Bash", {"command": "pwd; exit 3"})),
        turn("Ran both."),
        turn(tool_use("Bash", {"command": "sleep 300"})),
        turn("Stopped."),
    ]
    editor = Editor()
    with FakeModelServer(script) as server:
        async with codeloop_acp(
            editor,
            acp_env(server, tmp_path),
            work,
            "--permission-mode",
            "bypassPermissions",
            terminal=True,
        ) as (conn, _):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            ran = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Run.")])
            running = asyncio.ensure_future(
                conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Wait.")])
            )
            while len(editor.terminals) < 1:
                editor.updated.clear()
                await editor.updated.wait()
            cancelled = await asyncio.wait_for(_cancelled(conn, new.session_id, running), 30)
    assert ran.stop_reason == "end_turn" and cancelled.stop_reason == "cancelled"
    first, second = tool_results(server.requests[1]), tool_results(server.requests[2])
    assert "in sub" in json.dumps(first)
    assert str(work / "sub") in json.dumps(second) and "Exit code 3" in json.dumps(second)
    created = [e for e in editor.log if e[0] == "terminal"]
    released = [e for e in editor.log if e[0] == "released"]
    assert len(created) == len(released) == 3 and not editor.terminals
    for call_id, entries in editor.calls().items():
        shown = [
            item
            for e in entries
            if e[0] == "update"
            for item in e[1].content or []
            if item.type == "terminal"
        ]
        assert shown, call_id
    assert_told_in_order(editor)


async def _cancelled(conn: Any, session_id: str, running: Any) -> Any:
    await conn.cancel(session_id=session_id)
    return await running


async def test_slash_commands_run_as_in_the_terminal(tmp_path: Path) -> None:
    work = project(tmp_path)
    commands = work / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "greet.md").write_text("Say hello to $ARGUMENTS in French.\n")
    editor = Editor()
    with FakeModelServer([turn("Bonjour, Ada.")]) as server:
        async with codeloop_acp(editor, acp_env(server, tmp_path), work) as (conn, _):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            await editor.wait_for("available_commands_update")
            greeted = await conn.prompt(
                session_id=new.session_id, prompt=[acp.text_block("/greet Ada")]
            )
            helped = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("/help")])
            with pytest.raises(RequestError) as failing:
                await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("/model x")])
    assert greeted.stop_reason == helped.stop_reason == "end_turn"
    assert "Say hello to Ada in French." in sent_text(server.requests[0])
    assert len(server.requests) == 1  # /help answered without the model
    assert "/greet" in editor.text() and editor.text().startswith("Bonjour, Ada.")
    (offered,) = editor.updates("available_commands_update")
    assert "greet" in {c.name for c in offered.available_commands}
    assert failing.value.code == -32602 and "/model" in str(failing.value.data)


async def test_the_model_picker_switches_the_model(tmp_path: Path) -> None:
    work = project(tmp_path)
    editor = Editor()
    with FakeModelServer([turn("One."), turn("Two.")]) as server:
        async with codeloop_acp(editor, acp_env(server, tmp_path), work) as (conn, _):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            options = {o.id: o for o in new.config_options or []}
            assert options["mode"].current_value == "default"
            model = options["model"]
            others = [o.value for o in model.options if o.value != model.current_value]
            await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("First.")])
            answer = await conn.set_config_option(
                config_id="model", session_id=new.session_id, value=others[0]
            )
            await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Second.")])
            with pytest.raises(RequestError) as unknown:
                await conn.set_config_option(
                    config_id="colour", session_id=new.session_id, value="blue"
                )
            with pytest.raises(RequestError) as elsewhere:
                await conn.set_config_option(
                    config_id="model", session_id=new.session_id, value="openai:gpt-6.2-sol"
                )
    first, second = (r.body["model"] for r in server.requests)
    assert first == model.current_value and second == others[0]
    assert {o.id: o.current_value for o in answer.config_options}["model"] == others[0]
    (update,) = editor.updates("config_option_update")
    assert {o.id: o.current_value for o in update.config_options}["model"] == others[0]
    assert unknown.value.code == -32602 and "colour" in str(unknown.value.data)
    assert elsewhere.value.code == -32602 and "openai" in str(elsewhere.value.data)


async def test_a_missing_key_asks_the_editor_to_authenticate(tmp_path: Path) -> None:
    work = project(tmp_path)
    async with spawned(Editor(), acp_env(None, tmp_path), work) as (conn, _):
        init = await conn.initialize(protocol_version=1)
        with pytest.raises(RequestError) as opening:
            await conn.new_session(cwd=str(work), mcp_servers=[])
        with pytest.raises(RequestError) as authenticating:
            await conn.authenticate(method_id="anthropic-api-key")
    offered = {m.id: [v.name for v in m.vars] for m in init.auth_methods or []}
    assert offered["anthropic-api-key"] == ["ANTHROPIC_API_KEY"]
    assert opening.value.code == -32000
    data = opening.value.data
    assert isinstance(data, dict) and "ANTHROPIC_API_KEY" in data["message"]
    assert "ANTHROPIC_API_KEY" in [v["name"] for m in data["authMethods"] for v in m["vars"]]
    assert authenticating.value.code == -32000


async def test_terminal_sessions_load_in_the_editor_and_back(tmp_path: Path) -> None:
    """A `codeloop -p` session continues in the editor; the editor's continues in `-p`."""
    work = project(tmp_path)
    script = [turn("Noted: 7."), turn("It was 7."), turn("Still 7.")]
    editor = Editor()
    with FakeModelServer(script) as server:
        env = acp_env(server, tmp_path)
        started = run_cli(["-p", "Remember 7.", "--output-format", "json"], cwd=work, env=env)
        assert started.returncode == 0, started.stderr
        session_id = started.json()["session_id"]
        async with codeloop_acp(editor, env, work) as (conn, _):
            await conn.load_session(cwd=str(work), session_id=session_id, mcp_servers=[])
            await conn.prompt(session_id=session_id, prompt=[acp.text_block("Which?")])
        back = run_cli(["-p", "And now?", "--resume", session_id], cwd=work, env=env)
    assert back.returncode == 0, back.stderr
    assert [u.content.text for u in editor.updates("user_message_chunk")] == ["Remember 7."]
    assert "Noted: 7." in sent_text(server.requests[1])
    assert "It was 7." in sent_text(server.requests[2]) and back.stdout.strip() == "Still 7."


async def test_the_models_questions_are_asked_in_the_editor(tmp_path: Path) -> None:
    work = project(tmp_path)
    question = {
        "question": "Which language?",
        "header": "Language",
        "options": [
            {"label": "Python", "description": "the usual"},
            {"label": "Rust", "description": "fast"},
        ],
    }
    script = [
        turn(tool_use("AskUserQuestion", {"questions": [question]})),
        turn("Rust it is."),
        turn(tool_use("AskUserQuestion", {"questions": [question]})),
        turn("Deciding myself."),
    ]

    def pick(tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption]) -> str:
        wanted = "Rust" if len(editor.asks()) == 1 else "Skip"
        return next(o.option_id for o in options if o.name == wanted)

    editor = Editor(pick=pick)
    with FakeModelServer(script) as server:
        async with codeloop_acp(editor, acp_env(server, tmp_path), work) as (conn, _):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Ask.")])
            await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Again.")])
    (answered,) = tool_results(server.requests[1])
    assert not answered.get("is_error") and '\\"Which language?\\" = \\"Rust\\"' in json.dumps(
        answered
    )
    (declined,) = tool_results(server.requests[3])
    assert declined["is_error"] and "declined" in json.dumps(declined)
    first_call = editor.updates("tool_call")[0]
    (asked, options), _ = editor.asks()
    assert asked.tool_call_id == first_call.tool_call_id and asked.title == "Language"
    assert [o.name for o in options] == ["Python", "Rust", "Skip"]


async def test_a_sub_agents_calls_show_under_its_agent_call(tmp_path: Path) -> None:
    work = project(tmp_path)
    notes = work / "notes.txt"
    notes.write_text("hello\n")
    script = [
        turn(tool_use("Agent", {"description": "Look around", "prompt": "Read the notes."})),
        turn(  # the sub-agent's turns
            tool_use("Read", {"file_path": str(notes)}),
            tool_use("Grep", {"pattern": "hello"}),
        ),
        turn("The notes say hello."),
        turn("Done."),
    ]
    editor = Editor()
    with FakeModelServer(script) as server:
        async with codeloop_acp(editor, acp_env(server, tmp_path), work) as (conn, _):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            answer = await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Go.")])
    assert answer.stop_reason == "end_turn" and len(server.requests) == 4
    (agent,) = editor.updates("tool_call")  # the sub-agent's calls are not calls of its own
    assert (agent.kind, agent.title) == ("think", "Look around")
    entries = editor.calls()[agent.tool_call_id]
    shown = [
        item.content.text
        for e in entries
        if e[0] == "update"
        for item in e[1].content or []
        if item.type == "content"
    ]
    assert any("Read notes.txt" in text for text in shown)
    assert any('grep "hello"' in text for text in shown)
    assert final_status(entries) == "completed"


async def test_the_tools_flag_applies_to_every_session(tmp_path: Path) -> None:
    work = project(tmp_path)
    with FakeModelServer([turn("Only reading.")]) as server:
        env = acp_env(server, tmp_path)
        async with codeloop_acp(Editor(), env, work, "--tools", "Read,Grep") as (conn, _):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("Hi.")])
        async with codeloop_acp(Editor(), env, work, "--tools", "Nope") as (conn, _):
            with pytest.raises(RequestError) as unknown:
                await conn.new_session(cwd=str(work), mcp_servers=[])
    (request,) = server.requests
    assert {t["name"] for t in request.body["tools"]} == {"Read", "Grep"}
    assert unknown.value.code == -32602 and "Nope" in str(unknown.value.data)


async def test_tool_use_summaries_reach_the_editor_as_thoughts(tmp_path: Path) -> None:
    """CLAUDE_CODE_EMIT_TOOL_USE_SUMMARIES in the editor's environment: each tool batch's
    label, made on the small fast model, shows as a thought once the next answer is in."""
    from codeloop.side_requests import TOOL_SUMMARY_PROMPT
    from codeloop.testing.scenario import Scenario

    work = project(tmp_path)
    (work / "notes.txt").write_text("remember the milk\n")
    read = tool_use("Read", {"file_path": str(work / "notes.txt")})
    conversations = {
        "read-the-notes": Scenario(turns=(turn(read), turn("They say: milk."))),
        TOOL_SUMMARY_PROMPT.split(".")[0]: Scenario(turns=(turn("Read the notes"),)),
    }
    editor = Editor()
    env = acp_env(None, tmp_path, CLAUDE_CODE_EMIT_TOOL_USE_SUMMARIES="1")
    with FakeModelServer(conversations) as server:
        env |= {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": "test-key"}
        async with codeloop_acp(editor, env, work) as (conn, _):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            done = await conn.prompt(
                session_id=new.session_id, prompt=[acp.text_block("read-the-notes please")]
            )
    assert done.stop_reason == "end_turn"
    thoughts = "".join(u.content.text for u in editor.updates("agent_thought_chunk"))
    assert "(Read the notes)" in thoughts
    assert len([r for r in server.requests if r.conversation != "read-the-notes"]) == 1
