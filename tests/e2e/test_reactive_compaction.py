"""Issue 32: a prompt the API keeps refusing as too long, through the real CLI and the fake
server. Compacting is tried once; when it cannot help (the history is already at the floor, or
the summary request is refused as well) or did not help enough, the run's end says that a
summary was tried and why it could not help, wherever the user reads it: the last stderr
line in text mode, the json result's `result` and `errors`, stream-json's result line."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from codeloop.context.compact import SUMMARY_PROMPT
from codeloop.testing.fake_server import FakeModelServer, RecordedRequest
from codeloop.testing.scenario import Scenario, Turn, fault, tool_use, turn
from tests.e2e.cli import PROVIDER_MODELS, CliRun, provider_env, run_cli

SUMMARY = "1. User requests and intent: the user said hi.\n7. Next step: answer them."
TRIED = "A summary of the conversation was tried to make room, but "


def run_with(
    tmp: Path,
    turns: list[Turn],
    output: str,
    *,
    provider: str = "anthropic",
    max_prompt_tokens: int | None = None,
) -> tuple[CliRun, list[RecordedRequest]]:
    with FakeModelServer(
        Scenario(turns=tuple(turns)),
        max_prompt_tokens=max_prompt_tokens,
        summaries=[turn(SUMMARY)],
    ) as server:
        args = ["-p", "hi", "--model", PROVIDER_MODELS[provider], "--allowedTools", "Bash"]
        run = run_cli(
            [*args, "--output-format", output],
            cwd=tmp,
            env=provider_env(server, provider, tmp) | {"CODELOOP_HOME": str(tmp / "home")},
        )
        return run, list(server.requests)


def ended_with(run: CliRun, output: str) -> str:
    """What the user is told the run ended on, where this output format tells it."""
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr[-3000:]
    if output == "text":
        assert run.stdout == ""
        last = run.stderr.strip().splitlines()[-1]
        assert last.startswith("codeloop: ")
        return last.removeprefix("codeloop: ")
    result: dict[str, Any] = run.json() if output == "json" else run.json_lines()[-1]
    assert result["type"] == "result" and result["is_error"] is True
    assert result["terminal_reason"] == "prompt_too_long" and result["api_error_status"] == 400
    assert result["errors"] == [result["result"]]
    return str(result["result"])


def is_summary_call(request: RecordedRequest) -> bool:
    last = json.dumps(request.body["messages"][-1])
    return SUMMARY_PROMPT.splitlines()[0] in last


def carried(message: str) -> int:
    """The tokens the end says the system prompt, tools and memory take."""
    found = re.search(r"memory sent with every request take about ([\d,]+) tokens", message)
    assert found, message
    return int(found.group(1).replace(",", ""))


@pytest.mark.parametrize(
    ("provider", "output"),
    [
        ("anthropic", "text"),
        ("anthropic", "json"),
        ("anthropic", "stream-json"),
        ("openai", "json"),
    ],
)
def test_a_history_already_at_the_floor_ends_saying_the_summary_could_not_shrink_it(
    tmp_path: Path, provider: str, output: str
) -> None:
    """One short prompt the API calls too long every time: the summary is made, but what it
    would leave is no smaller than "hi", so the request is not sent again in vain."""
    refused = turn("never", faults=[fault("prompt_too_long", times=9)])
    run, requests = run_with(tmp_path, [refused], output, provider=provider)
    message = ended_with(run, output)
    # the refused request, the summary call, and no retry of a request that cannot fit
    assert [is_summary_call(r) for r in requests] == [False, True]
    assert message.startswith("prompt too long (HTTP 400): ")
    assert TRIED + "the history it would leave (about " in message
    assert "is no smaller than the history now (about " in message
    assert (
        "which is already at the floor (a compaction keeps up to 2,000 tokens of history as it is)"
        in message
    )
    assert carried(message) > 1_000 and message.endswith(" Nothing was dropped.")
    if output == "stream-json":
        statuses = [e["status"] for e in run.json_lines() if e.get("subtype") == "status"]
        assert statuses == ["compacting", None]


@pytest.mark.parametrize(
    "wording",
    [
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
        "Input is too long for requested model.",
        "the request exceeds the available context size, try increasing it",
    ],
    ids=["gemini", "bedrock", "llama.cpp"],
)
def test_other_apis_wordings_of_too_long_get_the_same_recovery_and_account(
    tmp_path: Path, wording: str
) -> None:
    refused = turn("never", faults=[fault("prompt_too_long", times=9, message=wording)])
    run, requests = run_with(tmp_path, [refused], "json")
    message = ended_with(run, "json")
    assert [is_summary_call(r) for r in requests] == [False, True]
    assert message.startswith(f"prompt too long (HTTP 400): {wording.rstrip('.')}. {TRIED}")


def test_a_summary_request_refused_as_too_long_too_is_named(tmp_path: Path) -> None:
    """A window smaller than what every request carries: the summary request is refused as
    well, and the end says so, with the size of what no compaction can remove."""
    run, requests = run_with(tmp_path, [turn("never")], "json", max_prompt_tokens=800)
    message = ended_with(run, "json")
    assert [is_summary_call(r) for r in requests] == [False, True]
    assert all(r.status == 400 for r in requests)
    assert message.startswith("prompt too long (HTTP 400): prompt is too long: ")
    assert TRIED + "the summary request failed: prompt too long (HTTP 400): " in message
    assert carried(message) > 800 and message.endswith(" Nothing was dropped.")


def test_a_compaction_that_did_not_make_it_fit_is_named_at_the_end(tmp_path: Path) -> None:
    """Big tool outputs, so the summary does shrink the history: the request is sent again once,
    refused again, and the end says what the compaction achieved."""
    big = [tool_use("Bash", {"command": f"echo {i}; seq 1 4000"}) for i in range(3)]
    refused = turn("never", faults=[fault("prompt_too_long", times=2)])
    run, requests = run_with(tmp_path, [*(turn(call) for call in big), refused], "text")
    message = ended_with(run, "text")
    assert [is_summary_call(r) for r in requests] == [False] * 4 + [True, False]
    assert len(requests[-1].body["messages"]) < len(requests[-3].body["messages"])
    assert "compacted the conversation (reactive)" in run.stderr
    assert message.startswith("prompt too long (HTTP 400): ")
    found = re.search(r"compacted to make room \(about ([\d,]+) → ([\d,]+) tokens;", message)
    assert found, message
    before, after = (int(n.replace(",", "")) for n in found.groups())
    assert before > after > carried(message)
    assert message.endswith(") and the request sent again.")
