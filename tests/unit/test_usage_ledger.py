"""The usage ledger: what the session records for each request, and how it is read back."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from codeloop.context.compact import SummaryModel
from codeloop.context.pipeline import ContextManager, ContextSettings
from codeloop.context.tokens import ContextLimits
from codeloop.permissions.policy import Policy
from codeloop.session import Session
from codeloop.session_config import SessionConfig
from codeloop.store.transcript import TranscriptWriter
from codeloop.testing.scenario import UsageSpec, tool_use, turn, turn_usage
from codeloop.testing.scripted import ScriptedModel
from codeloop.tools.base import Workspace
from codeloop.tools.registry import default_tools
from codeloop.types import Usage
from codeloop.usage.attribute import UNRECORDED, _scaled, parts
from codeloop.usage.ledger import read_ledger
from codeloop.usage.report import build_report

SESSION = "1a8b7c6d-1234-4e5f-8a9b-0c1d2e3f4a5b"
FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"


def session(
    model: ScriptedModel,
    tmp: Path,
    *,
    context: ContextManager | None = None,
    max_output_tokens: int | None = None,
) -> tuple[Session, Path]:
    config = SessionConfig(
        model="claude-sonnet-4-5",
        system="test",
        max_tokens=1024,
        max_output_tokens=max_output_tokens,
        policy=Policy("bypassPermissions"),
    )
    path = tmp / f"{SESSION}.jsonl"
    writer = TranscriptWriter(path, SESSION, tmp)
    return Session(
        model, default_tools(), Workspace(cwd=tmp), config, transcript=writer, context=context
    ), path


async def run(s: Session, prompt: str) -> None:
    async for _ in s.submit(prompt):
        pass


def usage(input: int, output: int = 10) -> UsageSpec:
    return UsageSpec(input_tokens=input, output_tokens=output)


async def test_a_withheld_answer_is_counted_as_discarded(tmp_path: Path) -> None:
    """An answer cut at max_tokens is asked again with room to finish: both were billed."""
    turns = [
        turn("Half an ans", stop_reason="max_tokens", usage=usage(100, 1024)),
        turn("Half an answer, and the rest.", usage=usage(100, 30)),
    ]
    s, path = session(ScriptedModel(turns), tmp_path, max_output_tokens=8192)
    await run(s, "explain")
    await s.aclose()
    ledger = read_ledger(path)
    assert [(r.outcome, r.usage) for r in ledger.requests] == [
        ("discarded", Usage(100, 1024)),
        ("answer", Usage(100, 30)),
    ]
    assert ledger.usage_by_model == s.usage_by_model  # the session's own total agrees


async def test_a_folded_result_is_charged_its_stub_from_then_on(tmp_path: Path) -> None:
    # ~2 300 tokens: past where microcompact folds once the model has answered it.
    (tmp_path / "big.txt").write_text("".join(f"line {i} of the big file\n" for i in range(300)))
    turns = [
        turn(tool_use("Read", {"file_path": "big.txt"}), usage=usage(500)),
        turn(tool_use("Bash", {"command": "echo hi"}), usage=usage(1500)),
        turn("Done.", usage=usage(400)),
    ]
    model = ScriptedModel(turns)
    context = ContextManager(
        SummaryModel(model.stream, "claude-sonnet-4-5"),
        # folds past 1 750 tokens; compacts past 2 000 when there is anything to summarize
        ContextLimits(4_000, 1_000),
        Workspace(cwd=tmp_path),
        tmp_path / "tool-results",
        settings=ContextSettings(persist_results=False),
    )
    s, path = session(model, tmp_path, context=context)
    await run(s, "read big.txt")
    await s.aclose()
    ledger = read_ledger(path)
    read_id = s.messages[1].tool_uses[0].id
    sizes = [
        [seg.tokens for seg in r.segments or () if seg.tool_use_id == read_id]
        for r in ledger.requests
    ]
    assert sizes[0] == [] and sizes[1][0] > 1_000 and 0 < sizes[2][0] < 100  # the stub
    report = build_report([ledger])
    assert len(report.calls[read_id].requests) == 2
    assert report.savings.fold_tokens == ledger.result_tokens[read_id] - sizes[2][0]
    assert report.savings.compaction_tokens == 0
    # every prompt token of every request is charged to something it sent
    total = sum(r.usage.context_tokens for r in ledger.requests)
    assert sum(p.tokens for p in parts(ledger.requests) if p.type != "output") == total


async def test_a_manual_compaction_records_its_summary_call(tmp_path: Path) -> None:
    turns = [
        turn("An answer.", usage=usage(300)),
        turn("1. User requests: hello.", usage=usage(400)),
    ]
    model = ScriptedModel(turns)
    context = ContextManager(
        SummaryModel(model.stream, "claude-sonnet-4-5"),
        ContextLimits(200_000, 20_000),
        Workspace(cwd=tmp_path),
        tmp_path / "tool-results",
    )
    s, path = session(model, tmp_path, context=context)
    await run(s, "hello")
    compacted = await s.compact()
    await s.aclose()
    assert compacted.boundary is not None
    ledger = read_ledger(path)
    assert [r.purpose for r in ledger.requests] == ["turn", "summary"]
    assert [r.usage for r in ledger.requests] == [turn_usage(t) for t in turns]
    (compaction,) = ledger.compactions  # after the turn and its own summary request
    assert (compaction.after, compaction.post_tokens) == (2, compacted.boundary.tokens_after)


async def test_a_lost_request_line_costs_the_contents_not_the_count(tmp_path: Path) -> None:
    turns = [
        turn(tool_use("Bash", {"command": f"echo {i}"}), usage=usage(100 + i)) for i in range(3)
    ]
    s, path = session(ScriptedModel([*turns, turn("Done.", usage=usage(200))]), tmp_path)
    await run(s, "count")
    await s.aclose()
    lines = path.read_text().splitlines()
    requests = [i for i, line in enumerate(lines) if '"api_request"' in line]
    del lines[requests[1]]  # as if that line had been torn
    path.write_text("\n".join(lines) + "\n")
    ledger = read_ledger(path)
    # its answer still counts (from the assistant line); the next ones lost their contents
    assert [r.usage.input_tokens for r in ledger.requests] == [100, 101, 102, 200]
    assert [r.segments is None for r in ledger.requests] == [False, True, True, True]
    report = build_report([ledger])
    assert report.total.prompt == 100 + 101 + 102 + 200
    assert report.kinds[UNRECORDED].tally.prompt == 101 + 102 + 200


def test_a_transcript_of_an_older_version_is_charged_to_its_turns(tmp_path: Path) -> None:
    ledger = read_ledger(FIXTURES / "v0_session.jsonl")
    report = build_report([ledger])
    assert report.total.prompt == 1000 + 1200 and report.total.output == 20 + 30
    assert set(report.kinds) == {UNRECORDED, "output"} and not report.tools


async def test_sub_agent_requests_are_recorded_under_their_task_call(tmp_path: Path) -> None:
    turns = [
        turn(tool_use("Task", {"description": "look", "prompt": "List it."}), usage=usage(100)),
        turn(tool_use("Bash", {"command": "echo sub"}), usage=usage(5_000)),
        turn("It is listed.", usage=usage(6_000)),
        turn("Done.", usage=usage(3_000)),
    ]
    s, path = session(ScriptedModel(turns), tmp_path)
    await run(s, "delegate")
    await s.aclose()
    task_id = s.messages[1].tool_uses[0].id
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    requests = [line["request"] for line in lines if line.get("subtype") == "api_request"]
    assert [r.get("agentId") for r in requests] == [None, task_id, task_id, None]
    # the sub-agent's history starts afresh; the parent's builds on its own last request
    assert [r["context"]["keep"] > 0 for r in requests] == [False, False, True, True]
    assert requests[3]["base"] == requests[0]["id"]
    report = build_report([read_ledger(path)])
    assert (
        report.subagents[task_id].tally.prompt == 11_000
        and report.subagents[task_id].label == "look"
    )
    assert report.tools["Bash"].calls and report.subagent_results[task_id].tally.prompt > 0


@given(st.lists(st.integers(1, 10_000), min_size=1, max_size=50), st.integers(0, 10**7))
def test_scaled_sizes_add_up_exactly(estimates: list[int], total: int) -> None:
    sizes = _scaled(estimates, total)
    assert sum(sizes) == total
    weight = sum(estimates)
    assert all(abs(s - e * total / weight) < 1 for s, e in zip(sizes, estimates, strict=True))
