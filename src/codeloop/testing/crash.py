"""Kill a real `codeloop -p` with SIGKILL at a chosen moment, continue the session in a new
process, and count what the continued run's first request lost, repeated or got wrong.

Shared by the acceptance test (tests/e2e/test_resume.py) and bench/crash_resume.py. Kill
moments are events, never delays: the fake server has seen N requests (or finished answering
the Nth), or the run has printed N stream-json lines. What must survive is judged from three
independent witnesses: the complete lines of the transcript file, the last request the killed
process sent (its history was saved before the call), and every message it printed (printed
only once saved).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from dataclasses import field
from pathlib import Path
from typing import Any, Literal

from codeloop.store.repair import INTERRUPTED_BY_EXIT
from codeloop.system.valueclass import valueclass
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.history_check import history_problems
from codeloop.testing.scenario import Scenario, turn

MODEL = "anthropic:claude-sonnet-4-5"
PROMPT = "Work through the steps."
NEXT_PROMPT = "go on"
# A Bash command for scenarios: busy until the harness creates `release` (at most 10 s), so a
# kill that follows the call's assistant line always lands while the tool runs.
WAIT_FOR_RELEASE = "for _ in $(seq 200); do [ -e release ] && break; sleep 0.05; done; echo freed"

WireMessage = dict[str, Any]


@valueclass
class KillPoint:
    """`request`: the Nth request arrived (its answer streams); `response`: the Nth answer was
    sent whole; `line`: the run printed its Nth stream-json line (1 is the init line; warning
    lines, which depend on the model and the settings, do not count)."""

    kind: Literal["request", "response", "line"]
    n: int

    def __str__(self) -> str:
        return f"{self.kind} {self.n}"


@valueclass(frozen=False)
class CrashOutcome:
    point: KillPoint
    killed: bool  # False: the run had ended by itself before the kill
    written: int  # messages in the transcript's complete lines at the kill
    repaired: int  # synthetic "interrupted" results the resume added
    lost: list[WireMessage] = field(default_factory=list)
    duplicated: int = 0
    problems: list[str] = field(default_factory=list)
    resumed_exit: int = 0


class _Printed:
    """The killed run's stdout lines, read as they come; wait for the Nth without polling."""

    def __init__(self, stream: Any) -> None:
        self.lines: list[dict[str, Any]] = []
        self._cond = threading.Condition()
        self._done = False
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: Any) -> None:
        for raw in stream:
            try:
                line = json.loads(raw)
            except ValueError:
                continue  # cut short by the kill
            if line.get("type") == "system" and line.get("subtype") in ("warning", "error"):
                continue
            with self._cond:
                self.lines.append(line)
                self._cond.notify_all()
        with self._cond:
            self._done = True
            self._cond.notify_all()

    def wait_for(self, count: int, timeout: float = 30.0) -> None:
        with self._cond:
            self._cond.wait_for(lambda: len(self.lines) >= count or self._done, timeout)

    def finish(self) -> list[dict[str, Any]]:
        self._thread.join(timeout=30)
        return self.lines


def crash_and_resume(workdir: Path, scenario: Scenario, point: KillPoint) -> CrashOutcome:
    """Run `scenario` in a fresh project under `workdir`, kill at `point`, then continue."""
    project, home = workdir / "project", workdir / "home"
    project.mkdir(parents=True)
    try:
        with FakeModelServer(scenario) as server:
            env = _env(server, home)
            killed, sent, printed = _run_and_kill(project, env, server, point)
        # None when the kill came before the prompt was saved (the run had not begun)
        transcripts = list((home / "projects").glob("*/*.jsonl"))
        if len(transcripts) > 1:
            raise RuntimeError(f"expected one transcript, found {transcripts}")
        written = _complete_lines(transcripts[0]) if transcripts else None
        with FakeModelServer([turn("Resumed.")]) as server:
            resumed_run = subprocess.run(
                _argv("-p", "--continue", NEXT_PROMPT),
                cwd=project,
                env=_env(server, home),
                capture_output=True,
                text=True,
                timeout=120,
            )
            requests = server.requests
    finally:
        (project / "release").touch()  # frees a tool the kill left waiting
    resumed = [_wire(m) for m in requests[0].body["messages"]] if requests else []
    outcome = _judge(point, killed, written or [], sent, printed, resumed, resumed_run.returncode)
    if written is None and not sent and not printed:
        # Nothing to continue: the continued run must say so, not invent a history.
        said_so = resumed_run.returncode == 1 and "no session to continue" in resumed_run.stderr
        outcome.problems = [] if said_so else [f"continuing nothing: {resumed_run.stderr!r}"]
        outcome.resumed_exit = 0 if said_so else resumed_run.returncode
    return outcome


def _run_and_kill(
    project: Path, env: dict[str, str], server: FakeModelServer, point: KillPoint
) -> tuple[bool, list[WireMessage], list[WireMessage]]:
    argv = _argv("-p", PROMPT, "--allowedTools", "Bash", "--output-format", "stream-json")
    proc = subprocess.Popen(
        argv, cwd=project, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    printed = _Printed(proc.stdout)
    try:
        if point.kind == "line":
            printed.wait_for(point.n)
        else:
            server.wait_for_requests(point.n, finished=point.kind == "response", timeout=30)
    finally:
        killed = proc.poll() is None
        proc.kill()
        proc.wait()
    # A request the kill cut off mid-body reached no model: it is recorded without one.
    requests = [r for r in server.requests if r.body is not None]
    sent = [_wire(m) for m in requests[-1].body["messages"]] if requests else []
    lines = printed.finish()
    shown = [_wire(line["message"]) for line in lines if line.get("type") in ("user", "assistant")]
    return killed, sent, shown


def _judge(
    point: KillPoint,
    killed: bool,
    written: list[WireMessage],
    sent: list[WireMessage],
    printed: list[WireMessage],
    resumed: list[WireMessage],
    resumed_exit: int,
) -> CrashOutcome:
    core = [m for m in resumed[:-1] if not _is_repair(m)]
    expected: list[WireMessage] = []
    for message in (*written, *sent, *printed):
        if message not in expected:
            expected.append(message)
    keys = [json.dumps(m, sort_keys=True) for m in resumed]
    outcome = CrashOutcome(
        point,
        killed,
        written=len(written),
        repaired=sum(_is_repair(m) for m in resumed),
        lost=[m for m in expected if m not in core],
        duplicated=len(keys) - len(set(keys)),
        problems=history_problems(resumed),
        resumed_exit=resumed_exit,
    )
    if not resumed or resumed[-1] != _wire({"role": "user", "content": NEXT_PROMPT}):
        outcome.problems.append("the resumed request does not end with the new prompt")
    if core != written:
        outcome.problems.append("the resumed history is not the transcript's, in order")
    return outcome


def _complete_lines(path: Path) -> list[WireMessage]:
    """The messages of every newline-terminated line, parsed without codeloop's reader."""
    data = path.read_bytes()
    lines = data.split(b"\n")[:-1]  # the last piece has no newline: cut short, or empty
    parsed = [json.loads(line) for line in lines if line.strip()]
    return [_wire(p["message"]) for p in parsed if p.get("type") in ("user", "assistant")]


def _wire(message: dict[str, Any]) -> WireMessage:
    """Role and content blocks only, without cache_control marks (they move every request)."""
    content = message["content"]
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    blocks = [{k: v for k, v in block.items() if k != "cache_control"} for block in content]
    return {"role": message["role"], "content": blocks}


def _is_repair(message: WireMessage) -> bool:
    blocks = message["content"]
    return (
        message["role"] == "user"
        and bool(blocks)
        and all(
            b.get("type") == "tool_result" and b.get("content") == INTERRUPTED_BY_EXIT
            for b in blocks
        )
    )


def _argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "codeloop", "--model", MODEL, *args]


def _env(server: FakeModelServer, home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "CODELOOP_HOME": str(home),
        "ANTHROPIC_BASE_URL": server.anthropic_base_url,
        "ANTHROPIC_API_KEY": "test-key",
    }
