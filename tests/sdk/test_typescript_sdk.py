"""The official Claude Agent SDK for TypeScript drives codeloop (pathToClaudeCodeExecutable)
through the core scenarios, each a small Node program (node/drive.mjs) run against the fake
model server. The SDK comes from the npm registry (node/package.json, installed by .ci/run
with `npm ci --omit=optional`: without its Claude Code binary)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, Turn, tool_use, turn
from tests.needs import missing
from tests.sdk.drive import CODELOOP, result_text, sdk_env, sent_text, tool_results

NODE_DIR = Path(__file__).parent / "node"
if shutil.which("node") is None:
    missing("needs node")
if not (NODE_DIR / "node_modules" / "@anthropic-ai" / "claude-agent-sdk").is_dir():
    missing("needs the TypeScript SDK: npm ci --omit=optional --prefix tests/sdk/node")


def drive(
    name: str, turns: list[Turn] | Scenario, tmp_path: Path
) -> tuple[list[dict[str, Any]], FakeModelServer]:
    """Run the named scenario; its printed records, and the server (for what it was sent)."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    with FakeModelServer(turns) as server:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            # A run against a source tree (PYTHONPATH=src) runs that tree's codeloop.
            **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
            **sdk_env(server, tmp_path),
            "CODELOOP_TEST_BIN": str(CODELOOP),
            "CODELOOP_TEST_WORK": str(work),
        }
        done = subprocess.run(
            ["node", str(NODE_DIR / "drive.mjs"), name],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines()], server


def messages(records: list[dict[str, Any]], kind: str | None = None) -> list[dict[str, Any]]:
    found = [r["value"] for r in records if r["kind"] == "message"]
    return [m for m in found if kind is None or m["type"] == kind]


def test_query(tmp_path: Path) -> None:
    records, server = drive("query", [turn("Paris.")], tmp_path)
    (init, *_), (result,) = messages(records, "system"), messages(records, "result")
    assert init["subtype"] == "init" and init["session_id"] == result["session_id"]
    assert (result["subtype"], result["result"]) == ("success", "Paris.")
    assert "capital of France" in sent_text(server.requests[0])


def test_multi_turn_keeps_history(tmp_path: Path) -> None:
    records, server = drive("multiturn", [turn("Noted: 7."), turn("It was 7.")], tmp_path)
    results = messages(records, "result")
    assert [r["result"] for r in results] == ["Noted: 7.", "It was 7."]
    assert results[0]["session_id"] == results[1]["session_id"]
    assert "Noted: 7." in sent_text(server.requests[1])


def test_can_use_tool_denies(tmp_path: Path) -> None:
    target = tmp_path / "work" / "notes.txt"
    write = tool_use("Write", {"file_path": str(target), "content": "hello"})
    records, server = drive("deny", [turn(write), turn("Understood.")], tmp_path)
    asked = [r["value"] for r in records if r["kind"] == "asked"]
    assert [a["name"] for a in asked] == ["Write"]
    assert not target.exists()
    (denied,) = tool_results(server.requests[1])
    assert denied.get("is_error") and "No writing today." in result_text(denied)


def test_a_pre_tool_use_hook_blocks(tmp_path: Path) -> None:
    marker = tmp_path / "work" / "touched"
    bash = tool_use("Bash", {"command": f"touch {marker}"})
    records, server = drive("hook", [turn(bash), turn("Fine.")], tmp_path)
    hooked = [r["value"] for r in records if r["kind"] == "hook"]
    assert hooked and hooked[0]["tool"] == "Bash" and hooked[0]["toolUseId"]
    assert not marker.exists()
    (blocked,) = tool_results(server.requests[1])
    assert "touching files is blocked" in result_text(blocked)


def test_a_tool_of_an_sdk_mcp_server(tmp_path: Path) -> None:
    call = tool_use("mcp__calc__add", {"a": 40, "b": 2})
    records, server = drive("mcp", [turn(call), turn("42.")], tmp_path)
    assert [r["value"] for r in records if r["kind"] == "called"] == [{"a": 40, "b": 2}]
    (answered,) = tool_results(server.requests[1])
    assert "SUM=42" in result_text(answered)


def test_interrupt_mid_stream(tmp_path: Path) -> None:
    slow = turn("one two three four five " * 40, chunk_chars=4)
    slow = slow.model_copy(update={"delay": 0.02})
    records, _ = drive("interrupt", [slow, turn("Back again.")], tmp_path)
    first, second = messages(records, "result")
    assert first["is_error"] and first["subtype"] == "error_during_execution"
    assert second["result"] == "Back again." and not second["is_error"]


def test_permission_mode_and_model_mid_session(tmp_path: Path) -> None:
    target = tmp_path / "work" / "a.txt"
    write = tool_use("Write", {"file_path": str(target), "content": "x"})
    turns = [turn(write), turn("Denied."), turn(write), turn("Written."), turn("Haiku.")]
    _, server = drive("control", turns, tmp_path)
    assert target.read_text() == "x"
    models = [r.body["model"] for r in server.requests]
    assert models[:4] == ["claude-sonnet-5-5"] * 4 and models[4].startswith("claude-haiku")
    (denied,) = tool_results(server.requests[1])  # before acceptEdits
    assert denied.get("is_error")


@pytest.mark.parametrize("attempts", [1, 2])
def test_structured_output(tmp_path: Path, attempts: int) -> None:
    answer = {"city": "Paris", "population": 2102650}
    wrong = tool_use("StructuredOutput", {"city": "Paris", "population": "many"})
    right = tool_use("StructuredOutput", answer)
    turns = [turn(wrong)] * (attempts - 1) + [turn(right), turn("Done.")]
    records, _ = drive("structured", turns, tmp_path)
    (result,) = messages(records, "result")
    assert result["subtype"] == "success" and result["structured_output"] == answer


def test_rewind_files(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    one, two = work / "one.txt", work / "two.txt"
    turns = [
        turn(tool_use("Write", {"file_path": str(one), "content": "1\n"})),
        turn("Wrote one."),
        turn(tool_use("Write", {"file_path": str(two), "content": "2\n"})),
        turn("Wrote two."),
        turn("Still here."),
    ]
    records, _ = drive("rewind", turns, tmp_path)
    answers = {k: v for r in records if r["kind"] == "rewound" for k, v in r["value"].items()}
    assert answers["bogus"] == {
        "canRewind": False,
        "error": "No file checkpoint found for this message.",
    }
    assert answers["dry"]["canRewind"] is True
    assert sorted(answers["dry"]["filesChanged"]) == [str(one), str(two)]
    assert answers["real"]["canRewind"] is True
    assert not one.exists() and not two.exists()
    assert messages(records, "result")[-1]["result"] == "Still here."
