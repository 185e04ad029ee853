"""Side requests through the real CLI against the fake server (issue 38): tool-use summaries
(CLAUDE_CODE_EMIT_TOOL_USE_SUMMARIES) and prompt suggestions (--prompt-suggestions), each on
the small fast model, each off by default with no side request at all."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from codeloop.side_requests import PROGRESS_PROMPT, SUGGESTION_PROMPT, TOOL_SUMMARY_PROMPT
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.cli import CliRun, provider_env, run_cli

MODEL = "claude-sonnet-4-5"
SMALL = "claude-haiku-test"
TASK = "count-the-files"
SUMMARY_KEY = TOOL_SUMMARY_PROMPT.split(".")[0]
SUGGESTION_KEY = SUGGESTION_PROMPT.splitlines()[0]
SDK_FLAGS = (
    *("--input-format", "stream-json", "--output-format", "stream-json", "--verbose"),
    *("--allowedTools", "Bash"),
)


def _server(*, summaries: int = 0, suggestions: int = 0) -> FakeModelServer:
    """The task (two tool batches, then the answer), and the side requests' answers."""
    main = Scenario(
        turns=(
            turn(tool_use("Bash", {"command": "echo one"}), tool_use("Bash", {"command": "ls"})),
            turn(tool_use("Bash", {"command": "echo two"})),
            turn("There are 3 files."),
        )
    )
    labels = Scenario(turns=tuple(turn(f"Ran batch {n}") for n in range(1, summaries + 1)))
    hints = Scenario(turns=tuple(turn("commit this") for _ in range(suggestions)))
    return FakeModelServer({TASK: main, SUMMARY_KEY: labels, SUGGESTION_KEY: hints})


def _run(tmp: Path, server: FakeModelServer, *flags: str, env: dict[str, str]) -> CliRun:
    args = ["-p", f"{TASK} please", "--model", MODEL, "--allowedTools", "Bash"]
    args += ["--output-format", "stream-json", "--verbose", *flags]
    base = provider_env(server, "anthropic", tmp) | {"CODELOOP_HOME": str(tmp / "home")}
    return run_cli(args, cwd=tmp, env=base | {"ANTHROPIC_SMALL_FAST_MODEL": SMALL} | env)


def _side(server: FakeModelServer, key: str) -> list[dict[str, object]]:
    return [r.body for r in server.requests if r.conversation == key]


def test_tool_use_summaries_follow_each_batch_once_the_next_response_finished(
    tmp_path: Path,
) -> None:
    with _server(summaries=2) as server:
        run = _run(tmp_path, server, env={"CLAUDE_CODE_EMIT_TOOL_USE_SUMMARIES": "1"})
    assert run.returncode == 0, run.stderr
    lines = run.json_lines()
    kinds = [line["type"] for line in lines]
    summaries = [line for line in lines if line["type"] == "tool_use_summary"]
    # The scripted server answers label requests in arrival order, and two labels under way
    # may go out in either order: which text each got is the double's, not codeloop's.
    assert sorted(s["summary"] for s in summaries) == ["Ran batch 1", "Ran batch 2"]
    calls = [
        [b["id"] for b in line["message"]["content"] if b["type"] == "tool_use"]
        for line in lines
        if line["type"] == "assistant"
    ]
    assert [s["preceding_tool_use_ids"] for s in summaries] == calls[:2]
    session_id = lines[0]["session_id"]
    assert all(s["session_id"] == session_id and s["uuid"] for s in summaries)
    # Each label once the response that followed its batch has finished, before the result.
    assistants = [i for i, kind in enumerate(kinds) if kind == "assistant"]
    at = [i for i, kind in enumerate(kinds) if kind == "tool_use_summary"]
    assert assistants[1] < at[0] and assistants[2] < at[1] < kinds.index("result")
    # The side requests: the small fast model, no tools, the batch's calls with their output.
    sent = _side(server, SUMMARY_KEY)
    assert len(sent) == 2
    assert all(body["model"] == SMALL and "tools" not in body for body in sent)
    assert not any(body.get("stream") for body in sent)  # short answers, read in one piece
    first = next(str(body["messages"]) for body in sent if "echo one" in str(body["messages"]))
    assert "ls" in first and "one\\n" in first  # the first batch's, whichever went out first
    # Their cost is the session's: the result's usage has the small model in it.
    assert SMALL in lines[-1]["modelUsage"]


def test_without_the_variable_no_summary_request_and_no_line(tmp_path: Path) -> None:
    with _server() as server:
        run = _run(tmp_path, server, env={})
    assert run.returncode == 0, run.stderr
    assert not [line for line in run.json_lines() if line["type"] == "tool_use_summary"]
    assert [r.conversation for r in server.requests] == [TASK] * 3


def test_prompt_suggestion_comes_after_the_result(tmp_path: Path) -> None:
    with _server(suggestions=1) as server:
        run = _run(tmp_path, server, "--prompt-suggestions", env={})
    assert run.returncode == 0, run.stderr
    lines = run.json_lines()
    assert lines[-2]["type"] == "result"
    last = lines[-1]
    assert last["type"] == "prompt_suggestion" and last["suggestion"] == "commit this"
    assert last["session_id"] == lines[-2]["session_id"] and last["uuid"]
    (sent,) = _side(server, SUGGESTION_KEY)
    assert sent["model"] == SMALL and "tools" not in sent
    assert "There are 3 files." in str(sent["messages"])  # the conversation it continues


def test_without_the_flag_no_suggestion_request(tmp_path: Path) -> None:
    with _server() as server:
        run = _run(tmp_path, server, env={})
    assert run.returncode == 0, run.stderr
    assert run.json_lines()[-1]["type"] == "result"
    assert SUGGESTION_KEY not in str([r.body for r in server.requests])


def test_prompt_suggestions_need_stream_json(tmp_path: Path) -> None:
    with _server() as server:
        run = run_cli(
            ["-p", "hi", "--model", MODEL, "--prompt-suggestions"],
            cwd=tmp_path,
            env=provider_env(server, "anthropic", tmp_path),
        )
        assert run.returncode != 0
        assert "--prompt-suggestions" in run.stderr and "stream-json" in run.stderr
        assert not server.requests


def test_sdk_initialize_asks_for_progress_and_suggestions(tmp_path: Path) -> None:
    """initialize's agentProgressSummaries: a task_progress line while the sub-agent runs
    (its tool waits for a file the test writes once the line came); promptSuggestions: a
    prompt_suggestion line after the result."""
    work = tmp_path / "work"
    work.mkdir()
    wait = "while [ ! -f go ]; do sleep 0.05; done; echo went"
    task = tool_use("Task", {"description": "wait", "prompt": "wait-for-go, then say so"})
    progress_key = PROGRESS_PROMPT.split(" in ")[0]
    conversations = {
        "delegate-it": Scenario(turns=(turn(task),)),
        "wait-for-go": Scenario(
            turns=(turn(tool_use("Bash", {"command": wait})), turn("finale-key: it went"))
        ),
        "finale-key": Scenario(turns=(turn("Done waiting."),)),
        # One report per new action of the sub-agent: its Bash call, then its answer at most.
        progress_key: Scenario(turns=(turn("Waiting for go"), turn("Saying it went"))),
        SUGGESTION_KEY: Scenario(turns=(turn("check the output"),)),
    }
    with FakeModelServer(conversations) as server:
        env = provider_env(server, "anthropic", tmp_path) | {
            "CODELOOP_HOME": str(tmp_path / "home"),
            "ANTHROPIC_SMALL_FAST_MODEL": SMALL,
            "CODELOOP_AGENT_PROGRESS_MS": "50",
        }
        proc = subprocess.Popen(
            [sys.executable, "-m", "codeloop", "--model", MODEL, *SDK_FLAGS],
            cwd=work,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        init = {"subtype": "initialize", "promptSuggestions": True, "agentProgressSummaries": True}
        prompt = {"role": "user", "content": "delegate-it please"}
        frames = [
            {"type": "control_request", "request_id": "init", "request": init},
            {"type": "user", "message": prompt, "parent_tool_use_id": None},
        ]
        proc.stdin.write("".join(json.dumps(f) + "\n" for f in frames))
        proc.stdin.flush()
        lines: list[dict[str, Any]] = []
        for raw in proc.stdout:
            line = json.loads(raw)
            lines.append(line)
            if line.get("subtype") == "task_progress":
                (work / "go").write_text("go")
            if line["type"] == "result":
                proc.stdin.close()
        stderr = proc.stderr.read()
        proc.wait(timeout=60)
    assert proc.returncode == 0, stderr
    assert "not supported" not in stderr  # both options taken
    kinds = [line["type"] for line in lines]
    progress = [line for line in lines if line.get("subtype") == "task_progress"]
    assert progress and progress[0]["summary"] == "Waiting for go"
    call_id = next(
        b["id"]
        for line in lines
        if line["type"] == "assistant" and line["parent_tool_use_id"] is None
        for b in line["message"]["content"]
        if b["type"] == "tool_use"
    )
    assert {p["tool_use_id"] for p in progress} == {call_id}
    assert all(p["type"] == "system" and p["uuid"] and p["session_id"] for p in progress)
    # While the sub-agent still ran: before its final answer.
    sub_answers = [
        i
        for i, line in enumerate(lines)
        if line["type"] == "assistant" and line["parent_tool_use_id"] == call_id
    ]
    assert lines.index(progress[0]) < sub_answers[-1]
    assert kinds[-2:] == ["result", "prompt_suggestion"]
    assert lines[-1]["suggestion"] == "check the output"
    sent = [r.body for r in server.requests if r.conversation == progress_key]
    assert sent and all(body["model"] == SMALL for body in sent)
    assert "while [ ! -f go ]" in str(sent[0]["messages"])


def test_sdk_without_the_options_no_side_request(tmp_path: Path) -> None:
    with _server() as server:
        proc = subprocess.run(
            [sys.executable, "-m", "codeloop", "--model", MODEL, *SDK_FLAGS],
            cwd=tmp_path,
            env=provider_env(server, "anthropic", tmp_path)
            | {"CODELOOP_HOME": str(tmp_path / "home")},
            input=json.dumps(
                {
                    "type": "user",
                    "message": {"role": "user", "content": f"{TASK} please"},
                    "parent_tool_use_id": None,
                }
            )
            + "\n",
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert proc.returncode == 0, proc.stderr
    last = json.loads(proc.stdout.splitlines()[-1])
    assert last["type"] == "result"
    assert [r.conversation for r in server.requests] == [TASK] * 3


def test_text_output_shows_the_labels_with_verbose(tmp_path: Path) -> None:
    with _server(summaries=2) as server:
        args = ["-p", f"{TASK} please", "--model", MODEL, "--allowedTools", "Bash", "--verbose"]
        env = provider_env(server, "anthropic", tmp_path) | {
            "CODELOOP_HOME": str(tmp_path / "home"),
            "CLAUDE_CODE_EMIT_TOOL_USE_SUMMARIES": "1",
        }
        run = run_cli(args, cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "There are 3 files."
    assert "⎿ Ran batch 1" in run.stderr and "⎿ Ran batch 2" in run.stderr
