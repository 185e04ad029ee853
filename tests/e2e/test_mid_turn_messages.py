"""A message sent while the model works, through the real CLI speaking the Agent SDK's
protocol (stream-json on stdin) and through the Python API, against the fake server, which
holds the model's answer at its message_start until the message is in: it does not interrupt;
the model gets it inside the next tool results, and one result answers both messages; when no
tool call follows, it starts the next turn instead."""

from __future__ import annotations

import asyncio
import json
import queue
import threading
from pathlib import Path
from typing import IO, Any

from codeloop.api import Client
from codeloop.options import Options
from codeloop.testing.fake_server import FakeModelServer, RecordedRequest
from codeloop.testing.scenario import tool_use, turn
from tests.e2e.cli import provider_env
from tests.e2e.test_sdk_protocol import FLAGS, send, start

FIRST, SECOND = "Tidy the build.", "Also keep the old flag working."
REMINDER = f"The user sent a new message while you were working:\n{SECOND}"
TIMEOUT = 60


class Lines:
    """The process's stdout, line by line, read in a thread: a test waits for the line it
    needs, with a timeout, instead of blocking for ever."""

    def __init__(self, stdout: IO[str]) -> None:
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        threading.Thread(target=self._read, args=(stdout,), daemon=True).start()

    def _read(self, stdout: IO[str]) -> None:
        for line in stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def until(self, wanted: Any) -> dict[str, Any]:
        while (frame := self.lines.get(timeout=TIMEOUT)) is not None:
            self.seen.append(frame)
            if wanted(frame):
                return frame
        raise AssertionError(f"the output ended without it: {self.seen}")

    def rest(self) -> list[dict[str, Any]]:
        while (frame := self.lines.get(timeout=TIMEOUT)) is not None:
            self.seen.append(frame)
        return self.seen


def user(text: str, uuid: str) -> dict[str, Any]:
    message = {"role": "user", "content": text}
    return {"type": "user", "message": message, "parent_tool_use_id": None, "uuid": uuid}


def converse(tmp_path: Path, server: FakeModelServer) -> list[dict[str, Any]]:
    """The first message; while the model's first answer is held, the second one (and a
    control request after it: its answer shows the second one was read); then the rest."""
    held = server.hold(0)
    proc = start(server, tmp_path, tmp_path, *FLAGS)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    lines = Lines(proc.stdout)
    send(proc.stdin, user(FIRST, "u-1"))
    server.wait_for_requests(1, timeout=TIMEOUT)
    barrier = {"subtype": "mcp_status"}
    send(proc.stdin, user(SECOND, "u-2"))
    send(proc.stdin, {"type": "control_request", "request_id": "read", "request": barrier})
    lines.until(lambda f: f["type"] == "control_response")
    held.set()
    lines.until(lambda f: f["type"] == "result")
    proc.stdin.close()
    out = lines.rest()
    stderr = proc.stderr.read()
    assert proc.wait(timeout=TIMEOUT) == 0, stderr
    return out


def texts(request: RecordedRequest) -> list[str]:
    """The text blocks of the request's last user message."""
    content = request.body["messages"][-1]["content"]
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    return [b["text"] for b in blocks if b.get("type") == "text"]


def test_a_message_sent_mid_turn_rides_with_the_next_tool_results(tmp_path: Path) -> None:
    scenario = [turn("Looking.", tool_use("Bash", {"command": "echo built"})), turn("Both done.")]
    with FakeModelServer(scenario) as server:
        out = converse(tmp_path, server)
        requests = server.requests
    results = [f for f in out if f["type"] == "result"]
    assert len(results) == 1 and results[0]["result"] == "Both done."
    assert results[0]["user_message_uuids"] == ["u-1", "u-2"]
    assert not any(f["type"] == "result" and f["is_error"] for f in out)  # not interrupted
    assert len(requests) == 2
    last = requests[1].body["messages"][-1]["content"]
    assert last[0]["type"] == "tool_result" and "built" in json.dumps(last[0])
    assert any(REMINDER in text for text in texts(requests[1]))


def test_without_another_tool_call_the_message_starts_the_next_turn(tmp_path: Path) -> None:
    with FakeModelServer([turn("Tidied."), turn("Kept it.")]) as server:
        out = converse(tmp_path, server)
        requests = server.requests
    results = [f for f in out if f["type"] == "result"]
    assert [r["result"] for r in results] == ["Tidied.", "Kept it."]
    assert [r["user_message_uuids"] for r in results] == [["u-1"], ["u-2"]]
    assert texts(requests[1])[-1] == SECOND  # a prompt of its own, not a reminder
    assert not any(REMINDER in json.dumps(r.body) for r in requests)


def test_the_python_api_sends_it_the_same_way(tmp_path: Path) -> None:
    scenario = [turn(tool_use("Bash", {"command": "echo built"})), turn("Both done.")]

    async def run(server: FakeModelServer) -> list[Any]:
        held = server.hold(0)
        env = provider_env(server, "anthropic", tmp_path) | {"CODELOOP_HOME": str(tmp_path)}
        options = Options(model="claude-sonnet-4-5", cwd=tmp_path, allowed_tools=["Bash"], env=env)
        async with Client(options) as client:
            first = await client.query(FIRST)
            await asyncio.to_thread(server.wait_for_requests, 1, timeout=TIMEOUT)
            second = await client.query(SECOND)
            held.set()
            messages = [m async for m in client.receive_response()]
            return [first, second, messages]

    with FakeModelServer(scenario) as server:
        first, second, messages = asyncio.run(run(server))
        requests = server.requests
    result = messages[-1]
    assert result.result == "Both done." and result.user_message_uuids == [first, second]
    assert any(REMINDER in text for text in texts(requests[1]))
