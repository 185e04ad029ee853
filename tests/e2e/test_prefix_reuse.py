"""Issue 37's cache-friendly folding, through the real CLI and the fake server, which records
every request and refuses, as a provider would, any over the window (JSON body / 4 tokens).

At a 32K window a session of Reads of distinct ~6 KB files and Bash calls outgrows the room
(about 25K tokens unfolded): old results must fold, and they fold in rare batches, so that
nearly every request extends the one before it byte for byte (all a prompt cache reuses),
while the result just made reaches the model whole. At 8K, where the system prompt and tools
fill the room before the first turn, nothing is compacted while there is nothing to summarize.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codeloop.testing.fake_server import RecordedRequest
from codeloop.testing.prefix_reuse import PROMPT, reuse, write_workload
from codeloop.testing.reading import last_read
from codeloop.testing.scenario import ToolUseSpec, Turn
from tests.e2e.cli import CliRun, windowed_session

TOOL_TURNS = 13  # and a last answer: 14 requests


def session(
    tmp_path: Path, provider: str, window: int, turns: list[Turn]
) -> tuple[CliRun, list[RecordedRequest]]:
    return windowed_session(tmp_path, provider, window, turns, PROMPT, summaries=20)


def whole_output(root: Path, scripted: Turn) -> list[str]:
    """The lines the result of a turn's call must hold: the file Read, or the log printed."""
    (call,) = (b.tool_use.input for b in scripted.blocks if isinstance(b, ToolUseSpec))
    path = str(call.get("file_path") or call["command"].removeprefix("cat "))
    return (root / path).read_text().splitlines()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_at_32k_requests_extend_each_other_and_the_newest_result_is_whole(
    tmp_path: Path, provider: str
) -> None:
    turns = write_workload(tmp_path, TOOL_TURNS, 6_500)
    run, requests = session(tmp_path, provider, 32_768, turns)

    assert run.returncode == 0, run.stderr[-3000:]
    assert run.json_lines()[-1]["subtype"] == "success"
    assert [r.status for r in requests if r.status != 200] == []  # none over the window
    main = [r for r in requests if r.conversation != "summaries"]
    assert len(main) == TOOL_TURNS + 1
    steps = reuse([r.body for r in main])
    extended = [s.extends for s in steps]
    assert sum(extended) >= 11, [(s.tokens, s.reused) for s in steps]
    newest = []
    for i, (request, scripted) in enumerate(zip(main[1:], turns, strict=False)):
        found = last_read(provider, request.body)
        assert found is not None, f"request {i + 1} brings no tool result"
        missing = [line for line in whole_output(tmp_path, scripted) if line not in found[1]]
        assert missing == [], f"request {i + 1}: the result of turn {i + 1} lacks {missing[:3]}"
        newest.append(len(found[1]) / 4)
    # Unfolded, the last request would carry every result: more than the window leaves the
    # prompt (32K less the answer's 8K), so folding was needed.
    assert steps[0].tokens + sum(newest) > 32_768 - 8_192


def test_at_8k_nothing_is_compacted_before_the_first_turn(tmp_path: Path) -> None:
    turns = write_workload(tmp_path, 1, 2_000)
    run, requests = session(tmp_path, "openai", 8_192, turns)

    assert run.returncode == 0, run.stderr[-3000:]
    assert [r.conversation for r in requests] == [None, None]  # no summary call
    assert not any(e.get("subtype") == "compact_boundary" for e in run.json_lines())
    first = json.dumps(requests[0].body["messages"])
    assert PROMPT in first and "summary" not in first.lower()
