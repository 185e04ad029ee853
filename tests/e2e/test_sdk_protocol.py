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


def test_a_prompt_sent_with_initialize_runs_in_the_session_initialize_asked_for(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    marker = work / "touched"
    bash = tool_use("Bash", {"command": f"touch {marker}"})
    with FakeModelServer([turn(bash), turn("Fine.")]) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "codeloop", "--model", PROVIDER_MODELS["anthropic"], *FLAGS],
            cwd=work,
            env=provider_env(server, "anthropic", tmp_path),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
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
                answer = {"hookSpecificOutput": {"hookEventName": "PreToolUse", **decision}}
                response = {"subtype": "success", "request_id": frame["request_id"]}
                send(
                    proc.stdin,
                    {"type": "control_response", "response": response | {"response": answer}},
                )
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
