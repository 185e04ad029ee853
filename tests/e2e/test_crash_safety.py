"""Issue 16's crash-safety loose ends, through the real CLI: a Bash command's processes die with
codeloop even when it is killed with SIGKILL (sandboxed or not), and two runs continuing one
session at once cannot interleave its transcript."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil  # type: ignore[import-untyped]
import pytest

from codeloop.shell.sandbox import probe
from codeloop.store.transcript import read_transcript
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.history_check import history_problems
from codeloop.testing.scenario import Scenario, tool_use, turn
from codeloop.types import message_to_dict
from tests.e2e.cli import PROVIDER_MODELS, provider_env, run_cli


def wait_for(condition: Callable[[], object], seconds: float, what: str) -> object:
    """Poll `condition` until it is true (its value is returned) or `seconds` pass."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if found := condition():
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")


def sleeps(duration: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        # a zombie is dead, only not reaped yet
        if proc.info["cmdline"] == ["sleep", duration] and proc.info["status"] != "zombie":
            found.append(proc)
    return found


def gone(proc: psutil.Process) -> bool:
    try:
        return bool(proc.status() == psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True


@pytest.mark.parametrize("sandbox", [False, True], ids=["plain", "sandbox"])
def test_kill_9_of_codeloop_leaves_no_bash_child_behind(tmp_path: Path, sandbox: bool) -> None:
    if sandbox and probe()[0] is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI installs bubblewrap, but: {probe()[1]}")
        pytest.skip(probe()[1])
    duration = f"30.{os.getpid() % 1000:03d}{int(sandbox)}"
    # In a pipeline and behind the shell: the sleep is a grandchild, not codeloop's child.
    command = f"echo started; sleep {duration} | cat"
    scenario = Scenario(turns=(turn(tool_use("Bash", {"command": command})), turn("never")))
    flags = ["--sandbox"] if sandbox else []
    with FakeModelServer(scenario) as server:
        args = ["-p", "go", "--model", PROVIDER_MODELS["anthropic"], "--allowedTools", "Bash"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "codeloop", *args, *flags],
            cwd=tmp_path,
            env=provider_env(server, "anthropic", tmp_path)
            | {"CODELOOP_HOME": str(tmp_path / "home")},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            running = wait_for(lambda: sleeps(duration), 60, f"`sleep {duration}` to start")
            assert isinstance(running, list)
            (child,) = running
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
            wait_for(lambda: gone(child), 10, f"the sleep (pid {child.pid}) to be killed")
        finally:
            for left in sleeps(duration):  # never leave one behind, even when failing
                left.kill()
            if proc.poll() is None:
                proc.kill()
    assert sleeps(duration) == []


def test_two_runs_continuing_one_session_at_once_do_not_interleave(tmp_path: Path) -> None:
    # A's turn runs a command that waits for a file the test creates once B is done: A holds
    # the session for as long as B runs, however slow the machine.
    go = tmp_path / "go"
    wait = f"while [ ! -e {shlex.quote(str(go))} ]; do sleep 0.05; done; echo released"
    turns = (
        turn("first answer"),
        turn(tool_use("Bash", {"command": wait})),  # A, holding the session
        turn("answer to B"),
        turn("answer to A"),
    )
    home = tmp_path / "home"
    with FakeModelServer(Scenario(turns=turns)) as server:
        env = provider_env(server, "anthropic", tmp_path) | {"CODELOOP_HOME": str(home)}
        args = ["--model", PROVIDER_MODELS["anthropic"], "--output-format", "json"]
        first = run_cli(["-p", "first prompt", *args], cwd=tmp_path, env=env)
        assert first.returncode == 0, first.stderr
        session = first.json()["session_id"]

        def start(prompt: str, *extra: str) -> subprocess.Popen[str]:
            return subprocess.Popen(
                [sys.executable, "-m", "codeloop", "-p", "--continue", prompt, *args, *extra],
                cwd=tmp_path,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )

        a = start("prompt A", "--allowedTools", "Bash")
        try:
            server.wait_for_requests(2, timeout=60)  # A holds the session, mid-turn
            b = start("prompt B")
            b_out, b_err = b.communicate(timeout=120)
        finally:
            go.touch()
        a_out, a_err = a.communicate(timeout=120)
    assert (a.returncode, b.returncode) == (0, 0), (a_err, b_err)
    assert json.loads(a_out)["session_id"] == session
    fork = json.loads(b_out)["session_id"]
    assert fork != session
    assert f"session {session} is being written by another codeloop process" in b_err
    assert fork in b_err
    # Each transcript valid, and everything said is in one of them.
    paths = {p.stem: p for p in home.rglob("*.jsonl")}
    original, forked = read_transcript(paths[session]), read_transcript(paths[fork])
    for transcript in (original, forked):
        assert transcript.warnings == ()
        body = [message_to_dict(m) for m in transcript.messages]
        assert history_problems(body) == []
    said = [m.text for m in original.messages if m.text]
    assert said == ["first prompt", "first answer", "prompt A", "answer to A"]
    assert [r.text for m in original.messages for r in m.tool_results] == ["released"]
    # B goes on from the session up to its last answer: A's turn in progress is A's own.
    assert [m.text for m in forked.messages] == [
        "first prompt",
        "first answer",
        "prompt B",
        "answer to B",
    ]
