"""Sessions that survive: kill -9 and continue, resume, fork, session ids, budget, listing.

Every run is the real CLI in a subprocess against FakeModelServer; kill moments are events
(requests seen by the server, lines printed by the run), never delays.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from itertools import islice
from pathlib import Path
from typing import Any

import pytest

from codeloop.store.data_paths import project_dir
from codeloop.store.repair import INTERRUPTED_BY_EXIT, LOST_BEFORE
from codeloop.store.transcript import read_transcript
from codeloop.testing.crash import WAIT_FOR_RELEASE, KillPoint, crash_and_resume
from codeloop.testing.fake_server import FakeModelServer, RecordedRequest
from codeloop.testing.history_check import history_problems
from codeloop.testing.scenario import Scenario, Turn, UsageSpec, fault, tool_use, turn
from codeloop.types import message_to_dict
from tests.e2e.cli import CliRun, provider_env, run_cli

MODEL = "anthropic:claude-sonnet-4-5"
JSON = ("--output-format", "json")
TOOLS = ("--allowedTools", "Bash")
FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"


def crash_session(*, gate_at: int | None = None, stall_at: int | None = None) -> Scenario:
    """Four tool turns (the second calls two tools), then an answer. `gate_at`: that turn's
    last tool waits until the harness releases it; `stall_at`: that answer stalls mid-stream."""
    turns: list[Turn] = []
    for i in range(4):
        calls = [tool_use("Bash", {"command": f"echo step {i}"})]
        if i == 1:
            calls.append(tool_use("Bash", {"command": "echo second call"}))
        if i == gate_at:
            calls[-1] = tool_use("Bash", {"command": WAIT_FOR_RELEASE})
        turns.append(turn(f"Step {i}.", *calls, chunk_chars=6))
    turns.append(turn("All steps done.", chunk_chars=6))
    if stall_at is not None:
        stalled = turns[stall_at].model_copy(update={"faults": (fault("stall", after=3),)})
        turns[stall_at] = stalled
    return Scenario(turns=tuple(turns))


@pytest.mark.parametrize(
    ("scenario", "point", "written", "repaired"),
    [
        # killed while the first answer streams: only the prompt was saved
        (crash_session(stall_at=0), KillPoint("request", 1), 1, 0),
        # killed while the third answer streams, two whole turns saved
        (crash_session(stall_at=2), KillPoint("request", 3), 5, 0),
        # killed while the second turn's two tools run: both calls get "interrupted" results
        (crash_session(gate_at=1), KillPoint("line", 4), 4, 1),
        # killed while the fourth turn's tool runs, after the turns before it were saved
        (crash_session(gate_at=3), KillPoint("line", 8), 8, 1),
    ],
    ids=["first-answer", "mid-stream", "two-tools-running", "late-tool-running"],
)
def test_kill_9_then_continue_loses_nothing(
    scenario: Scenario, point: KillPoint, written: int, repaired: int, tmp_path: Path
) -> None:
    outcome = crash_and_resume(tmp_path, scenario, point)
    assert outcome.killed, "the run ended before the kill: the test proves nothing"
    assert outcome.written == written
    assert outcome.repaired == repaired
    assert outcome.lost == []
    assert outcome.duplicated == 0
    assert outcome.problems == []
    assert outcome.resumed_exit == 0


def test_kill_between_turns_loses_nothing(tmp_path: Path) -> None:
    # killed right after the first tool results were printed: the next request may be in flight
    outcome = crash_and_resume(tmp_path, crash_session(), KillPoint("line", 3))
    assert outcome.written >= 3
    assert (outcome.lost, outcome.duplicated, outcome.problems) == ([], 0, [])


# --- resume, fork, session ids ------------------------------------------------------------


def cli_env(server: FakeModelServer | None, home: Path) -> dict[str, str]:
    """Without a server, a key and an address nothing listens on: these runs must fail (or
    list) before any request."""
    env = provider_env(server, "anthropic", home) | {"CODELOOP_HOME": str(home / "data")}
    if server is None:
        env |= {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    return env


def cli(args: list[str], project: Path, server: FakeModelServer | None, home: Path) -> CliRun:
    return run_cli(["--model", MODEL, *args], cwd=project, env=cli_env(server, home))


def served(
    turns: list[Turn], args: list[str], project: Path, home: Path
) -> tuple[CliRun, list[RecordedRequest]]:
    """One run against a fresh fake server answering `turns`; the requests it sent."""
    with FakeModelServer(turns) as server:
        return cli(args, project, server, home), server.requests


def listing(project: Path, home: Path) -> CliRun:
    return run_cli(["sessions"], cwd=project, env=cli_env(None, home))


def transcripts(home: Path, project: Path) -> list[Path]:
    env = {"CODELOOP_HOME": str(home / "data")}
    return sorted(project_dir(project, env).glob("*.jsonl"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path.resolve()


def test_resume_by_id_from_another_process(project: Path, tmp_path: Path) -> None:
    first, _ = served([turn("First answer.")], ["-p", "remember 42", *JSON], project, tmp_path)
    session_id = first.json()["session_id"]
    served([turn("Other.")], ["-p", "another session"], project, tmp_path)
    resume = ["-p", "what number?", "--resume", session_id[:8], *JSON]
    run, requests = served([turn("It was 42.")], resume, project, tmp_path)
    sent = requests[0].body["messages"]
    assert run.returncode == 0, run.stderr
    assert run.json()["session_id"] == session_id
    assert [m["content"][0]["text"] for m in sent] == [
        "remember 42",
        "First answer.",
        "what number?",
    ]
    assert len(transcripts(tmp_path, project)) == 2
    history = read_transcript(transcripts_by_id(tmp_path, project)[session_id]).messages
    assert [m.text for m in history] == [
        "remember 42",
        "First answer.",
        "what number?",
        "It was 42.",
    ]


def transcripts_by_id(home: Path, project: Path) -> dict[str, Path]:
    return {p.stem: p for p in transcripts(home, project)}


def test_fork_session_leaves_the_original_untouched(project: Path, tmp_path: Path) -> None:
    first, _ = served([turn("Plan A.")], ["-p", "plan", *JSON], project, tmp_path)
    original_id = first.json()["session_id"]
    original = transcripts_by_id(tmp_path, project)[original_id]
    before = original.read_bytes()
    fork_id = "0b2a6a43-5d7e-4c47-9a1f-1f3a7e2b9c10"
    fork = ["-p", "other way", "-c", "--fork-session", "--session-id", fork_id.upper(), *JSON]
    run, requests = served([turn("Plan B.")], fork, project, tmp_path)
    sent = requests[0].body["messages"]
    assert run.returncode == 0, run.stderr
    assert run.json()["session_id"] == fork_id
    assert original.read_bytes() == before
    assert [m["content"][0]["text"] for m in sent] == ["plan", "Plan A.", "other way"]
    forked = read_transcript(transcripts_by_id(tmp_path, project)[fork_id])
    assert [m.text for m in forked.messages] == ["plan", "Plan A.", "other way", "Plan B."]


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (["--session-id", "not-a-uuid"], 2, "not a UUID"),
        (["--fork-session"], 2, "--fork-session needs --resume or --continue"),
        (["--continue"], 1, "no session to continue"),
        (["--resume", "abc123"], 1, "no session abc123"),
        (["--resume", "../etc"], 1, "not a session id"),
    ],
)
def test_session_flag_mistakes_are_one_line(
    args: list[str], status: int, message: str, project: Path, tmp_path: Path
) -> None:
    run = cli(["-p", "hi", *args], project, None, tmp_path)
    assert run.returncode == status
    assert message in run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_session_id_in_use_and_session_of_another_directory(project: Path, tmp_path: Path) -> None:
    session_id = "7d1e2c3b-1111-4a2b-8c3d-123456789abc"
    first, _ = served([turn("Hi.")], ["-p", "hi", "--session-id", session_id], project, tmp_path)
    assert first.returncode == 0, first.stderr
    again = cli(["-p", "hi", "--session-id", session_id], project, None, tmp_path)
    assert again.returncode == 2 and "already in use" in again.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = cli(["-p", "hi", "--resume", session_id], elsewhere, None, tmp_path)
    assert run.returncode == 1
    assert f"belongs to {project}" in run.stderr


def test_version_0_transcript_is_migrated_and_resumed(project: Path, tmp_path: Path) -> None:
    """The prototype's format: a header line, flat messages with ids and epoch times; it ends
    with a tool call that never got its result."""
    session_id = "5f0c7a52-0a4e-4c8e-9d7e-000000000000"
    env = {"CODELOOP_HOME": str(tmp_path / "data")}
    folder = project_dir(project, env)
    folder.mkdir(parents=True)
    shutil.copy(FIXTURES / "v0_session.jsonl", folder / f"{session_id}.jsonl")
    run, requests = served(
        [turn("Carrying on.")], ["-p", "go on", "-r", session_id], project, tmp_path
    )
    sent = requests[0].body["messages"]
    assert run.returncode == 0, run.stderr
    assert history_problems(sent) == []
    assert sent[0] == {"role": "user", "content": [{"type": "text", "text": "list the files"}]}
    assert sent[1]["content"][1]["name"] == "Bash"
    assert sent[2]["content"][0]["content"] == "a.py\nb.py"
    assert sent[5]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_v0_2", "content": INTERRUPTED_BY_EXIT}
        | {"is_error": True}
    ]
    assert sent[-1]["content"][0]["text"] == "go on"
    # the old lines stay as they were; new ones follow in the current format
    lines = (folder / f"{session_id}.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["kind"] == "header"
    assert json.loads(lines[-1])["version"] == 1
    again = read_transcript(folder / f"{session_id}.jsonl")
    assert again.warnings == ()
    assert [m.uuid for m in again.messages[:2]] == ["v0-msg-1", "v0-msg-2"]
    assert again.messages[-1].text == "Carrying on."


# --- interrupt, budget, cost, listing -------------------------------------------------------


def test_ctrl_c_leaves_a_complete_transcript(project: Path, tmp_path: Path) -> None:
    script = [turn("Waiting.", tool_use("Bash", {"command": WAIT_FOR_RELEASE})), turn("never")]
    with FakeModelServer(script) as server:
        env = provider_env(server, "anthropic", tmp_path) | {"CODELOOP_HOME": str(tmp_path / "d")}
        argv = [sys.executable, "-m", "codeloop", "--model", MODEL, "-p", "wait"]
        argv += ["--allowedTools", "Bash", "--output-format", "stream-json"]
        proc = subprocess.Popen(argv, cwd=project, env=env, stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            lines = (json.loads(line) for line in proc.stdout)
            printed = islice((p for p in lines if p.get("subtype") != "warning"), 2)
            assert [p["type"] for p in printed] == ["system", "assistant"]  # init, the call
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=30) == 130
        finally:
            proc.kill()
            (project / "release").touch()
    (path,) = project_dir(project, {"CODELOOP_HOME": str(tmp_path / "d")}).glob("*.jsonl")
    assert path.read_bytes().endswith(b"\n")
    messages = read_transcript(path).messages
    assert [m.role for m in messages] == ["user", "assistant", "user"]
    (result,) = messages[-1].tool_results
    assert result.is_error and "Interrupted" in result.text


def test_max_budget_ends_the_run_with_its_own_subtype(project: Path, tmp_path: Path) -> None:
    # claude-sonnet-4-5: $3 per million input tokens, so each turn below costs $0.30
    big = UsageSpec(input_tokens=100_000, output_tokens=0)
    script = [turn(tool_use("Bash", {"command": "echo x"}), usage=big)] * 3
    args = ["-p", "spend", "--max-budget-usd", "0.5", *TOOLS, *JSON]
    run, requests = served(script, args, project, tmp_path)
    assert len(requests) == 2
    assert run.returncode == 1
    result = run.json()
    assert result["subtype"] == "error_max_budget_usd" and result["is_error"] is True
    assert result["total_cost_usd"] == 0.6
    assert "cost budget" in run.stderr


def test_bad_budget_is_a_usage_error(project: Path, tmp_path: Path) -> None:
    run = cli(["-p", "hi", "--max-budget-usd", "-1"], project, None, tmp_path)
    assert run.returncode == 2 and "--max-budget-usd" in run.stderr


def test_costs_match_a_hand_computed_fixture(project: Path, tmp_path: Path) -> None:
    # claude-sonnet-4-5 per million tokens: input $3, output $15, cache write $3.75, read $0.30
    #   turn 1: 1 000 in, 200 out, 4 000 cache write       = 0.003 + 0.003 + 0.015  = 0.021
    #   turn 2: 500 in, 100 out, 4 000 cache read           = 0.0015 + 0.0015 + 0.0012 = 0.0042
    usage1 = UsageSpec(input_tokens=1_000, output_tokens=200, cache_creation_input_tokens=4_000)
    usage2 = UsageSpec(input_tokens=500, output_tokens=100, cache_read_input_tokens=4_000)
    script = [turn(tool_use("Bash", {"command": "echo 1"}), usage=usage1), turn("ok", usage=usage2)]
    run, _ = served(script, ["-p", "count", *TOOLS, *JSON], project, tmp_path)
    assert run.returncode == 0, run.stderr
    result = run.json()
    assert result["total_cost_usd"] == 0.0252
    assert result["modelUsage"] == {
        "claude-sonnet-4-5": {
            "inputTokens": 1_500,
            "outputTokens": 300,
            "cacheReadInputTokens": 4_000,
            "cacheCreationInputTokens": 4_000,
            "webSearchRequests": 0,
            "costUSD": 0.0252,
            "contextWindow": 200_000,
            "maxOutputTokens": 64_000,
        }
    }
    assert "$0.0252" in listing(project, tmp_path).stdout


def test_sessions_lists_newest_first(project: Path, tmp_path: Path) -> None:
    assert "No sessions" in listing(project, tmp_path).stdout
    ids = []
    for prompt in ("first task", "second task\nwith a second line"):
        script = [turn(tool_use("Bash", {"command": "echo"})), turn("ok")]
        run, _ = served(script, ["-p", prompt, *TOOLS, *JSON], project, tmp_path)
        ids.append(run.json()["session_id"])
    older = transcripts_by_id(tmp_path, project)[ids[0]]
    os.utime(older, (1_700_000_000, 1_700_000_000))  # 2023-11-14, whatever the clock says
    listed = listing(project, tmp_path)
    assert listed.returncode == 0
    header, newest, oldest = listed.stdout.splitlines()
    assert header.split() == ["SESSION", "LAST", "ACTIVE", "TURNS", "COST", "FIRST", "PROMPT"]
    assert newest.startswith(ids[1]) and newest.endswith("second task with a second line")
    assert oldest.startswith(ids[0]) and "2023-11-1" in oldest and oldest.endswith("first task")
    assert newest.split()[3] == "2"  # turns


# --- damaged transcripts ------------------------------------------------------------------


def finished_session(project: Path, home: Path) -> Path:
    """A real run's transcript: a prompt, a tool round, an answer."""
    script = [turn("Looking.", tool_use("Bash", {"command": "echo hi"})), turn("It said hi.")]
    run, _ = served(script, ["-p", "say hi", *TOOLS], project, home)
    assert run.returncode == 0, run.stderr
    (path,) = transcripts(home, project)
    return path


def continued(project: Path, home: Path, *extra: str) -> tuple[CliRun, list[Any]]:
    """`--continue` with a new prompt; the messages of the request it sent, which the fake
    server accepted (it refuses what the API refuses)."""
    run, requests = served([turn("Carrying on.")], ["-p", "go on", "-c", *extra], project, home)
    assert run.returncode == 0, run.stderr
    (request,) = requests
    assert request.status == 200
    sent: list[Any] = request.body["messages"]
    assert history_problems(sent) == []
    return run, sent


def texts(messages: list[Any]) -> list[str]:
    return [
        b.get("text") or b.get("content") or b.get("name") for m in messages for b in m["content"]
    ]


def warnings_printed(run: CliRun, path: Path) -> list[str]:
    """The warning lines a stream-json run printed about the transcript at `path`."""
    lines = run.json_lines()
    return [e["text"] for e in lines if e.get("subtype") == "warning" and path.name in e["text"]]


def test_garbage_in_the_first_line_resumes_with_a_note_for_what_was_lost(
    project: Path, tmp_path: Path
) -> None:
    path = finished_session(project, tmp_path)
    said = [m for m in read_transcript(path).messages]
    data = path.read_bytes()
    path.write_bytes(b"\x00\x13garbage{{\n" + data[data.index(b"\n") + 1 :])
    run, sent = continued(project, tmp_path)
    assert sent[0]["content"][0]["text"] == LOST_BEFORE
    assert texts(sent[1:4]) == texts([message_to_dict(m) for m in said[1:]])
    assert texts(sent)[-1] == "go on"
    assert "line 1 is not a JSON object" in run.stderr
    assert "recovered 3 message(s)" in run.stderr and "put in 1 note(s)" in run.stderr


def test_one_bad_byte_in_a_middle_line_keeps_its_message(project: Path, tmp_path: Path) -> None:
    path = finished_session(project, tmp_path)
    path.write_bytes(path.read_bytes().replace(b"Looking.", b"Look\xffing.", 1))
    run, sent = continued(project, tmp_path, "--output-format", "stream-json")
    assert texts(sent)[:5] == ["say hi", "Look\ufffding.", "Bash", "hi", "It said hi."]
    (warning, summary) = warnings_printed(run, path)
    assert "line 2 has bytes that are not UTF-8" in warning
    assert "recovered 4 message(s)" in summary and summary in run.stderr


def test_an_empty_transcript_is_named_and_the_session_goes_on(
    project: Path, tmp_path: Path
) -> None:
    path = finished_session(project, tmp_path)
    path.write_bytes(b"")
    run, sent = continued(project, tmp_path, "--output-format", "stream-json")
    assert texts(sent)[-1] == "go on" and "say hi" not in texts(sent)
    (warning,) = warnings_printed(run, path)
    assert f"its transcript {path} is empty (0 bytes" in warning
    assert "no earlier message could be recovered" in warning and warning in run.stderr
    assert [m.text for m in read_transcript(path).messages][-2:] == ["go on", "Carrying on."]


def test_a_write_that_fails_while_resuming_is_named_a_write_failure(
    project: Path, tmp_path: Path
) -> None:
    """The file may not grow (as on a full disk): putting a cut-short last line on a line of
    its own fails, and the message says it was a write."""
    path = finished_session(project, tmp_path)
    path.write_bytes(path.read_bytes() + b'{"type":"user","mess')
    size = path.stat().st_size

    def no_growth() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    env = cli_env(None, tmp_path) | {"PYTHONDONTWRITEBYTECODE": "1"}
    argv = [sys.executable, "-m", "codeloop", "--model", MODEL, "-p", "go on", "-c"]
    run = subprocess.run(
        argv, cwd=project, env=env, capture_output=True, text=True, preexec_fn=no_growth
    )
    assert run.returncode == 1
    assert f"cannot write the session {path}: File too large" in run.stderr
    assert "cannot read" not in run.stderr and "Traceback" not in run.stderr
    assert path.stat().st_size == size
