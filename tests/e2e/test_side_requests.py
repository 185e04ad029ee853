"""Side requests through the real CLI against the fake server (issue 38): tool-use summaries
(CLAUDE_CODE_EMIT_TOOL_USE_SUMMARIES) and prompt suggestions (--prompt-suggestions), each on
the small fast model, each off by default with no side request at all."""

from __future__ import annotations

from pathlib import Path

from codeloop.side_requests import SUGGESTION_PROMPT, TOOL_SUMMARY_PROMPT
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.cli import CliRun, provider_env, run_cli

MODEL = "claude-sonnet-4-5"
SMALL = "claude-haiku-test"
TASK = "count-the-files"
SUMMARY_KEY = TOOL_SUMMARY_PROMPT.split(".")[0]
SUGGESTION_KEY = SUGGESTION_PROMPT.splitlines()[0]


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
    assert [s["summary"] for s in summaries] == ["Ran batch 1", "Ran batch 2"]
    calls = [
        [b["id"] for b in line["message"]["content"] if b["type"] == "tool_use"]
        for line in lines
        if line["type"] == "assistant"
    ]
    assert [s["preceding_tool_use_ids"] for s in summaries] == calls[:2]
    session_id = lines[0]["session_id"]
    assert all(s["session_id"] == session_id and s["uuid"] for s in summaries)
    # Each label after the assistant message of the response that followed its batch.
    assistants = [i for i, kind in enumerate(kinds) if kind == "assistant"]
    at = [i for i, kind in enumerate(kinds) if kind == "tool_use_summary"]
    assert assistants[1] < at[0] < assistants[2] < at[1] < kinds.index("result")
    # The side requests: the small fast model, no tools, the batch's calls with their output.
    sent = _side(server, SUMMARY_KEY)
    assert len(sent) == 2
    assert all(body["model"] == SMALL and "tools" not in body for body in sent)
    first = str(sent[0]["messages"])
    assert "echo one" in first and "ls" in first and "one\\n" in first
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
