"""`codeloop acp`'s standard streams as editors and registries use them: nothing but ACP on
stdout, a line of garbage survived, a clean exit when stdin closes (or was never there), and
stdout redirected to a file (which the SDK's own stdio refuses)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.needs import module

module("acp", "needs the acp extra (pip install -e '.[dev,acp]')")

from codeloop.testing.fake_server import FakeModelServer  # noqa: E402
from codeloop.testing.scenario import tool_use, turn  # noqa: E402
from tests.acp_agent.editor import ACP, acp_env, descendant  # noqa: E402


def request(id: int, method: str, params: dict[str, object]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}) + "\n"


def run_acp(tmp_path: Path, *args: str, **streams: Any) -> subprocess.CompletedProcess[str]:
    """`codeloop acp ARGS` to its end; `streams`: stdin (or input=...) and stdout as given,
    else captured."""
    streams.setdefault("stdout", subprocess.PIPE)
    if "input" not in streams:
        streams.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.run(
        [*ACP, *args],
        stderr=subprocess.PIPE,
        text=True,
        env=acp_env(None, tmp_path),
        cwd=tmp_path,
        timeout=120,
        **streams,
    )


def test_stdout_carries_only_answers_and_eof_ends_the_process(tmp_path: Path) -> None:
    lines = [
        "this is not json\n",
        request(1, "initialize", {"protocolVersion": 1}),
        request(2, "no/such/method", {}),
    ]
    done = run_acp(tmp_path, input="".join(lines))
    assert done.returncode == 0, done.stderr
    messages = [json.loads(line) for line in done.stdout.splitlines()]
    assert all(m["jsonrpc"] == "2.0" for m in messages)
    answers = {m["id"]: m for m in messages if "id" in m}
    assert answers[1]["result"]["protocolVersion"] == 1
    assert answers[2]["error"]["code"] == -32601
    assert "Error parsing JSON-RPC message" in done.stderr
    assert "Traceback" not in done.stderr


def test_no_stdin_is_a_clean_exit(tmp_path: Path) -> None:
    """The ACP registry's check starts the agent with stdin from /dev/null."""
    done = run_acp(tmp_path)
    assert (done.returncode, done.stdout) == (0, "")


def test_stdout_to_a_file(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    with out.open("w") as sink:
        done = run_acp(
            tmp_path, input=request(1, "initialize", {"protocolVersion": 1}), stdout=sink
        )
    assert done.returncode == 0, done.stderr
    (answer,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert answer["result"]["protocolVersion"] == 1


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["do something"], "a prompt"),
        (["-p", ""], "-p/--print"),
        (["-w"], "--worktree"),
        (["--resume"], "--resume"),
        (["--session-id", "6a8f3a52-3b1e-4a4e-9c55-3d0f6c1f1a10"], "--session-id"),
        (["--output-format", "json"], "--output-format"),
    ],
)
def test_flags_of_other_modes_are_refused_by_name(
    tmp_path: Path, args: list[str], named: str
) -> None:
    done = run_acp(tmp_path, *args)
    assert done.returncode == 2 and done.stdout == ""
    assert "codeloop acp does not take" in done.stderr and named in done.stderr


def test_stdin_closing_mid_command_ends_everything(tmp_path: Path) -> None:
    """The editor goes away while a command runs: codeloop stops the turn, kills the
    command and exits 0, leaving no process behind."""
    psutil = pytest.importorskip("psutil")
    work = tmp_path / "work"
    work.mkdir()
    script = [turn(tool_use("Bash", {"command": "sleep 300"})), turn("Stopped.")]
    with FakeModelServer(script) as server:
        agent = subprocess.Popen(
            [*ACP, "--permission-mode", "bypassPermissions"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=acp_env(server, tmp_path),
            cwd=work,
        )
        assert agent.stdin is not None and agent.stdout is not None
        agent.stdin.write(request(1, "initialize", {"protocolVersion": 1}))
        agent.stdin.write(request(2, "session/new", {"cwd": str(work), "mcpServers": []}))
        agent.stdin.flush()
        session = next(m for m in _messages(agent.stdout) if m.get("id") == 2)["result"]
        prompt = [{"type": "text", "text": "Wait."}]
        agent.stdin.write(
            request(3, "session/prompt", {"sessionId": session["sessionId"], "prompt": prompt})
        )
        agent.stdin.flush()
        next(m for m in _messages(agent.stdout) if _update_kind(m) == "tool_call")
        sleeping = descendant(psutil, agent.pid, "sleep")
        agent.stdin.close()
        assert agent.wait(timeout=60) == 0
    assert not sleeping.is_running() or sleeping.status() == psutil.STATUS_ZOMBIE


def _messages(stdout: Any) -> Iterator[dict[str, Any]]:
    for line in stdout:
        yield json.loads(line)


def _update_kind(message: dict[str, Any]) -> str | None:
    if message.get("method") != "session/update":
        return None
    kind: str = message["params"]["update"]["sessionUpdate"]
    return kind
