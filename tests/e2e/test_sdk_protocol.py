"""The Agent SDK's stream-json protocol spoken to the real CLI frame by frame, for what the
SDKs' own drivers (tests/sdk) leave to timing: frames that arrive together."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import tool_use, turn
from tests.e2e.cli import PROVIDER_MODELS, provider_env

BLOCKED = "touching files is blocked"
STREAMS = ("--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
FLAGS = (*STREAMS, "--allowedTools", "Bash")


def send(stdin: IO[str], *frames: dict[str, Any]) -> None:
    stdin.write("".join(json.dumps(frame) + "\n" for frame in frames))
    stdin.flush()


def answer(stdin: IO[str], request: dict[str, Any], response: dict[str, Any]) -> None:
    """The SDK's success response to codeloop's control request."""
    body = {"subtype": "success", "request_id": request["request_id"], "response": response}
    send(stdin, {"type": "control_response", "response": body})


def start(
    server: FakeModelServer, work: Path, tmp_path: Path, *flags: str
) -> subprocess.Popen[str]:
    """codeloop as the SDK runs it, in `work`, talking to `server`."""
    model = ("--model", PROVIDER_MODELS["anthropic"])
    return subprocess.Popen(
        [sys.executable, "-m", "codeloop", *model, *flags],
        cwd=work,
        env=provider_env(server, "anthropic", tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_prompt_sent_with_initialize_runs_in_the_session_initialize_asked_for(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    marker = work / "touched"
    bash = tool_use("Bash", {"command": f"touch {marker}"})
    with FakeModelServer([turn(bash), turn("Fine.")]) as server:
        proc = start(server, work, tmp_path, *FLAGS)
        assert proc.stdin is not None and proc.stdout is not None
        hooks = {"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["guard"]}]}
        initialize = {"subtype": "initialize", "hooks": hooks}
        prompt = {"role": "user", "content": "Touch the marker."}
        # In one write: the prompt is read while the session initialize asked for is built.
        send(
            proc.stdin,
            {"type": "control_request", "request_id": "init", "request": initialize},
            {"type": "user", "message": prompt, "parent_tool_use_id": None},
        )
        hooked, result = [], None
        for line in proc.stdout:
            frame = json.loads(line)
            request = frame.get("request", {})
            if frame["type"] == "control_request" and request.get("subtype") == "hook_callback":
                hooked.append(request["callback_id"])
                decision = {"permissionDecision": "deny", "permissionDecisionReason": BLOCKED}
                output = {"hookSpecificOutput": {"hookEventName": "PreToolUse", **decision}}
                answer(proc.stdin, frame, output)
            if frame["type"] == "result":
                result = frame
                proc.stdin.close()
        assert proc.stderr is not None
        stderr = proc.stderr.read()
        proc.wait(timeout=60)
    assert proc.returncode == 0, stderr
    assert hooked == ["guard"]
    assert not marker.exists()
    assert result is not None and result["result"] == "Fine."
    assert BLOCKED in json.dumps(server.requests[1].body["messages"][-1])


def test_an_allow_that_sets_the_mode_holds_for_the_next_calls(tmp_path: Path) -> None:
    """The SDK's answer to can_use_tool may change the permission mode (updatedPermissions):
    the calls after it run in that mode, and the next prompt's init line says so."""
    work = tmp_path / "work"
    work.mkdir()
    first, second = work / "a.txt", work / "b.txt"
    writes = [tool_use("Write", {"file_path": str(p), "content": p.name}) for p in (first, second)]
    scenario = [turn(writes[0]), turn(writes[1]), turn("Both."), turn("Still here.")]
    with FakeModelServer(scenario) as server:
        proc = start(server, work, tmp_path, *STREAMS, "--permission-prompt-tool", "stdio")
        assert proc.stdin is not None and proc.stdout is not None
        prompts = [{"role": "user", "content": text} for text in ("Write two.", "And now?")]
        send(proc.stdin, {"type": "user", "message": prompts[0], "parent_tool_use_id": None})
        asked, modes = [], []
        for line in proc.stdout:
            frame = json.loads(line)
            request = frame.get("request", {})
            if frame["type"] == "control_request" and request.get("subtype") == "can_use_tool":
                asked.append(request["input"]["file_path"])
                update = {"type": "setMode", "mode": "acceptEdits", "destination": "session"}
                answer(proc.stdin, frame, {"behavior": "allow", "updatedPermissions": [update]})
            if frame.get("subtype") == "init":
                modes.append(frame["permissionMode"])
            if frame["type"] == "result" and len(modes) == 1:
                send(
                    proc.stdin, {"type": "user", "message": prompts[1], "parent_tool_use_id": None}
                )
            elif frame["type"] == "result":
                proc.stdin.close()
        assert proc.stderr is not None
        stderr = proc.stderr.read()
        proc.wait(timeout=60)
    assert proc.returncode == 0, stderr
    assert asked == [str(first)]  # the second write came under acceptEdits
    assert first.read_text() == "a.txt" and second.read_text() == "b.txt"
    assert modes == ["default", "acceptEdits"]
