"""The official TypeScript ACP SDK (@agentclientprotocol/sdk, tests/npm, installed by .ci/run)
as a second editor: the acceptance session, the editor's unsaved buffer, and an unknown
method, through its own connection, parser and handlers (tests/npm/acp_editor.mjs)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import text, tool_use, turn
from tests.acp_agent.editor import ACP, acp_env
from tests.needs import missing

EDITOR = Path(__file__).parents[1] / "npm" / "acp_editor.mjs"
if shutil.which("node") is None:
    missing("needs node")
if not (EDITOR.parent / "node_modules" / "@agentclientprotocol" / "sdk").is_dir():
    missing("needs the TypeScript ACP SDK: npm ci --prefix tests/npm")


def run_editor(script: dict[str, Any], env: dict[str, str]) -> list[dict[str, Any]]:
    done = subprocess.run(
        ["node", str(EDITOR), json.dumps(script)],
        env={**env, **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_a_typescript_editor_session(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    target = work / "greeting.txt"
    target.write_text("hello\nworld\n")
    script = [
        turn(
            "Looking.",
            tool_use("Read", {"file_path": str(target)}),
            tool_use("Bash", {"command": "ls"}),
        ),
        turn(
            tool_use(
                "Edit",
                {"file_path": str(target), "old_string": "buffer", "new_string": "editor"},
            )
        ),
        turn("Done."),
    ]
    steps = [
        {
            "method": "initialize",
            "params": {
                "protocolVersion": 1,
                "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": False}},
            },
        },
        {"method": "session/new", "params": {"cwd": str(work), "mcpServers": []}},
        {
            "method": "session/prompt",
            "params": {
                "sessionId": "$session",
                "prompt": [{"type": "text", "text": "Greet."}],
            },
        },
        {"method": "session/teleport", "params": {"sessionId": "$session"}},
    ]
    with FakeModelServer(script) as server:
        records = run_editor(
            {
                "command": ACP,
                "cwd": str(work),
                "buffers": {str(target): "hello\nbuffer\n"},
                "steps": steps,
            },
            acp_env(server, tmp_path),
        )
    answers = answers_of(records)
    assert answers["initialize"]["value"]["protocolVersion"] == 1
    assert answers["session/prompt"]["value"]["stopReason"] == "end_turn"
    assert answers["session/teleport"]["kind"] == "error"
    assert answers["session/teleport"]["code"] == -32601
    updates = [r["value"] for r in records if r["kind"] == "update"]
    assert "Looking." in "".join(
        u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"
    )
    starts = {u["toolCallId"]: u for u in updates if u["sessionUpdate"] == "tool_call"}
    assert {u["kind"] for u in starts.values()} == {"read", "execute", "edit"}
    for call_id in starts:
        statuses = [u.get("status") for u in updates if u.get("toolCallId") == call_id]
        assert [s for s in statuses if s][-1] == "completed", (starts[call_id], statuses)
    (ask,) = [r["value"] for r in records if r["kind"] == "ask"]
    assert starts[ask["toolCall"]["toolCallId"]]["kind"] == "edit"
    assert any(
        item["type"] == "diff"
        for u in updates
        if u.get("toolCallId") == ask["toolCall"]["toolCallId"]
        for item in u.get("content") or []
    )
    # The model read the editor's buffer; without fs writes, the edit went to disk.
    assert str(target) in [r["value"] for r in records if r["kind"] == "read"]
    assert "buffer" in json.dumps(server.requests[1].body["messages"][-1])
    assert target.read_text() == "hello\neditor\n"


def test_a_typescript_editor_cancels_and_loads(tmp_path: Path) -> None:
    """Cancel while the answer streams (`cancelled`, the session goes on), then a new
    process loads the session: the history first, then the answer."""
    work = tmp_path / "work"
    work.mkdir()
    script = [
        turn(text("Starting", delay_after=60), text(" and never finishing.")),
        turn("Yes?"),
        turn("Loaded."),
    ]
    initialize = {"method": "initialize", "params": {"protocolVersion": 1}}
    with FakeModelServer(script) as server:
        env = acp_env(server, tmp_path)
        first = run_editor(
            {
                "command": ACP,
                "cwd": str(work),
                "buffers": {},
                "steps": [
                    initialize,
                    {"method": "session/new", "params": {"cwd": str(work), "mcpServers": []}},
                    prompt_step("Go.", cancelAfter="agent_message_chunk"),
                    prompt_step("Still there?"),
                ],
            },
            env,
        )
        session_id = answers_of(first)["session/new"]["value"]["sessionId"]
        load = {"cwd": str(work), "sessionId": session_id, "mcpServers": []}
        second = run_editor(
            {
                "command": ACP,
                "cwd": str(work),
                "buffers": {},
                "sessionId": session_id,
                "steps": [
                    initialize,
                    {"method": "session/load", "params": load},
                    prompt_step("And?"),
                ],
            },
            env,
        )
    stops = [r["value"]["stopReason"] for r in first if r.get("method") == "session/prompt"]
    assert stops == ["cancelled", "end_turn"]
    loaded_at = next(i for i, r in enumerate(second) if r.get("method") == "session/load")
    replayed = [r["value"] for r in second[:loaded_at] if r["kind"] == "update"]
    said = [u["content"]["text"] for u in replayed if u["sessionUpdate"] == "user_message_chunk"]
    assert said == ["Go.", "Still there?"]
    assert answers_of(second)["session/prompt"]["value"]["stopReason"] == "end_turn"
    assert "Yes?" in json.dumps(server.requests[2].body["messages"])


def prompt_step(words: str, **more: Any) -> dict[str, Any]:
    prompt = [{"type": "text", "text": words}]
    return {
        "method": "session/prompt",
        "params": {"sessionId": "$session", "prompt": prompt},
        **more,
    }


def answers_of(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["method"]: r for r in records if r["kind"] in ("answer", "error")}
