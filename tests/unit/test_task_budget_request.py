"""--task-budget on the scripted model and in the Messages API body: every request of the
main loop carries the total, with what remains once a compaction hid what was spent; the
body nests it beside the effort, and the beta it needs goes with it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from codeloop.models.anthropic import TASK_BUDGET_BETA, encode_body, request_headers
from codeloop.models.base import ModelRequest
from codeloop.testing.scenario import tool_use, turn
from codeloop.types import Message, TaskBudget
from tests.unit.test_loop_guards import Run


def test_each_request_of_the_loop_carries_the_budget(tmp_path: Path) -> None:
    run = Run([turn(tool_use("Bash", {"command": "true"})), turn("Done.")], tmp_path)
    asyncio.run(run(task_budget=5_000))
    assert [r.task_budget for r in run.model.requests] == [TaskBudget(5_000)] * 2


def test_without_a_budget_requests_carry_none(tmp_path: Path) -> None:
    run = Run([turn("Done.")], tmp_path)
    asyncio.run(run())
    assert run.model.requests[0].task_budget is None


def test_the_body_nests_it_beside_the_effort_with_its_beta() -> None:
    request = ModelRequest(
        "claude-sonnet-4-6",
        (Message.user("hi"),),
        effort="high",
        betas=("other-beta",),
        task_budget=TaskBudget(9_000, remaining=4_000),
    )
    body = json.loads(encode_body(request))
    assert body["output_config"] == {
        "effort": "high",
        "task_budget": {"type": "tokens", "total": 9_000, "remaining": 4_000},
    }
    assert request_headers(request)["anthropic-beta"] == f"other-beta,{TASK_BUDGET_BETA}"
