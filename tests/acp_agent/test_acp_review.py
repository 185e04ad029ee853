"""codeloop's ACP extension methods for reviewing a saved session, over a real `codeloop acp`:
`_codeloop/timeline` (its messages, each compaction with its summary, its checkpoints with
the command that rewinds to each) and `_codeloop/usage` (`codeloop usage --json`'s report);
an unknown session or method is refused with a message."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.needs import module

module("acp", "needs the acp extra (pip install -e '.[dev,acp]')")

import acp  # noqa: E402
from acp import RequestError  # noqa: E402

from codeloop.testing.fake_server import FakeModelServer  # noqa: E402
from codeloop.testing.scenario import tool_use, turn  # noqa: E402
from tests.acp_agent.editor import Editor, acp_env, codeloop_acp  # noqa: E402


async def test_a_saved_session_s_timeline_and_usage(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "app.py").write_text("x = 1\n")
    edit = {"file_path": "app.py", "old_string": "x = 1", "new_string": "x = 2"}
    script = [
        turn(tool_use("Read", {"file_path": "app.py"})),
        turn(tool_use("Edit", edit)),
        turn("Changed x."),
    ]
    summaries = [turn("Summary: x is 2 now.")]
    with FakeModelServer(script, summaries=summaries) as server:
        async with codeloop_acp(
            Editor(), acp_env(server, tmp_path), work, "--permission-mode", "acceptEdits"
        ) as (conn, _):
            new = await conn.new_session(cwd=str(work), mcp_servers=[])
            for words in ("Set x to 2", "/compact"):
                await conn.prompt(session_id=new.session_id, prompt=[acp.text_block(words)])
            asked = {"sessionId": new.session_id[:8], "cwd": str(work)}
            timeline = await conn.ext_method("codeloop/timeline", asked)
            usage = await conn.ext_method("codeloop/usage", asked)
            with pytest.raises(RequestError) as unknown:
                await conn.ext_method("codeloop/timeline", {"sessionId": "abcdef12"})
            with pytest.raises(RequestError) as no_method:
                await conn.ext_method("codeloop/nothing", asked)
    assert timeline["sessionId"] == new.session_id
    said = [e["text"] for e in timeline["entries"] if e["kind"] == "message" and e["text"]]
    assert said[:1] == ["Set x to 2"] and "Changed x." in said
    (compaction,) = [e for e in timeline["entries"] if e["kind"] == "compaction"]
    assert compaction["trigger"] == "manual" and compaction["summary"] == "Summary: x is 2 now."
    (checkpoint,) = timeline["checkpoints"]
    assert checkpoint["label"] == "Edit: app.py" and checkpoint["prompt"] == "Set x to 2"
    assert checkpoint["rewind"] == f"codeloop rewind --session {new.session_id} --to 1"
    assert [m["model"] for m in usage["by_model"]] == ["claude-sonnet-5-5"]
    assert "Edit" in {t["tool"] for t in usage["by_tool"]}
    assert "no session abcdef12" in str(unknown.value.data)
    assert no_method.value.code == -32601
