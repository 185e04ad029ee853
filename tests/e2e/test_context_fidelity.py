"""Issue 16's acceptance, through the real CLI: on a window that cannot hold two of the files,
a session reading a different file every turn shows the model, in every request, the whole
file it just read (its first, middle and last lines), and never sends a request the server
would refuse. The fake server refuses, as a provider would, anything over the window (JSON
body / 4 tokens) and answers the compactions' summary calls as they come.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from codeloop.testing.fake_server import FakeModelServer, RecordedRequest
from codeloop.testing.reading import last_read, reading_turns, write_file
from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.e2e.cli import PROVIDER_MODELS, provider_env, run_cli, windowed_session

TURNS = 120


def tokens(request: RecordedRequest) -> float:
    return len(json.dumps(request.body, separators=(",", ":"))) / 4


@pytest.mark.parametrize(
    ("provider", "window", "file_bytes"),
    [("anthropic", 60_000, 30_000), ("openai", 32_000, 18_000), ("anthropic", 18_000, 7_000)],
    ids=["60k", "32k-openai", "18k"],
)
def test_every_request_shows_the_file_just_read_whole(
    tmp_path: Path, provider: str, window: int, file_bytes: int
) -> None:
    rng = random.Random(window)
    data = tmp_path / "data"
    data.mkdir()
    marks = [write_file(data / f"f{i:03d}.py", i, file_bytes, rng) for i in range(TURNS)]
    turns = reading_turns(TURNS, rng)
    prompt = "Read every file in data/, one a turn."
    run, requests = windowed_session(tmp_path, provider, window, turns, prompt, summaries=100)

    assert run.returncode == 0, run.stderr[-3000:]
    assert run.json_lines()[-1]["subtype"] == "success"
    refused = [(tokens(r), r.status) for r in requests if r.status != 200]
    assert refused == []
    assert max(tokens(r) for r in requests) < window
    main = [r for r in requests if r.conversation != "summaries"]
    assert len(main) == TURNS + 1
    compactions = [e for e in run.json_lines() if e.get("subtype") == "compact_boundary"]
    assert compactions, "this session cannot fit its window without a summary"
    assert len(compactions) == len(requests) - len(main)
    for i, request in enumerate(main[1:]):
        found = last_read(provider, request.body)
        assert found is not None, f"request {i + 1} carries no tool result"
        first, middle, last = marks[i]
        _, result = found
        missing = [line for line in (first, middle, last) if line not in result]
        assert missing == [], f"request {i + 1}: the Read of file {i} lacks {missing}"


def test_a_window_too_small_for_one_turn_is_reported_once_at_start(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    scenario = Scenario(turns=(turn(tool_use("Read", {"file_path": "a.txt"})), turn("ok")))
    with FakeModelServer(scenario) as server:
        env = provider_env(server, "anthropic", tmp_path) | {
            "CODELOOP_HOME": str(tmp_path / "home"),
            "CODELOOP_CONTEXT_WINDOW": "3000",
        }
        run = run_cli(["-p", "hi", "--model", PROVIDER_MODELS["anthropic"]], cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("is too small for this session") == 1
    assert "context window (3,000 tokens)" in run.stderr and "CODELOOP_CONTEXT_WINDOW" in run.stderr
    assert "Traceback" not in run.stderr
