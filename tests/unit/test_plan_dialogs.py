"""An interactive frontend's side of plan mode and questions, through a real session against
the fake model server: the permission dialog refuses a plan with feedback (the model reads
it, the session stays in plan mode) and then accepts one; the question dialog answers
AskUserQuestion, or declines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codeloop.builder import build_session
from codeloop.options import Options
from codeloop.permissions.policy import Answer, PermissionRequest
from codeloop.testing.fake_server import FakeModelServer, RecordedRequest
from codeloop.testing.scenario import Scenario, tool_use, turn
from codeloop.tools.questions import Question
from tests.unit.test_opusplan import env_for

QUESTION = {
    "question": "Which flag name?",
    "header": "Flag",
    "options": [
        {"label": "--fast", "description": "Short"},
        {"label": "--quick", "description": "Longer"},
    ],
    "multiSelect": False,
}


def text_of(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else json.dumps(content)


def last_result(request: RecordedRequest) -> dict[str, Any]:
    content = request.body["messages"][-1]["content"]
    block: dict[str, Any] = next(b for b in content if b.get("type") == "tool_result")
    return block


async def test_the_dialogs_refuse_then_accept_a_plan_and_answer_questions(
    tmp_path: Path,
) -> None:
    scenario = Scenario(
        turns=(
            turn(tool_use("ExitPlanMode", {"plan": "1. Add a flag by hand."})),
            turn(tool_use("ExitPlanMode", {"plan": "1. Add a flag with argparse."})),
            turn(tool_use("AskUserQuestion", {"questions": [QUESTION]})),
            turn(tool_use("AskUserQuestion", {"questions": [QUESTION]})),
            turn("Done."),
        )
    )
    shown: list[tuple[str, str, str]] = []
    asked: list[tuple[Question, ...]] = []

    with FakeModelServer(scenario) as server:
        session = await build_session(
            Options(
                model="claude-sonnet-4-5",
                permission_mode="plan",
                cwd=tmp_path,
                env=env_for(server, tmp_path / "home"),
            )
        )

        async def dialog(request: PermissionRequest) -> Answer:
            mode = session.config.policy.mode
            shown.append((request.tool_name, request.input["plan"], mode))
            if len(shown) == 1:
                return Answer("deny", "Use argparse instead.")
            return Answer("allow_once")

        async def questions(qs: tuple[Question, ...]) -> dict[str, str] | None:
            asked.append(qs)
            return {qs[0].question: "--fast"} if len(asked) == 1 else None

        session.config.policy.ask_user = dialog
        session.questions.ask = questions
        try:
            async for _ in session.submit("add a speed flag"):
                pass
        finally:
            await session.aclose()
        requests = server.requests
    assert shown == [
        ("ExitPlanMode", "1. Add a flag by hand.", "plan"),
        ("ExitPlanMode", "1. Add a flag with argparse.", "plan"),
    ]
    refused, accepted, answered, declined = (last_result(r) for r in requests[1:])
    assert refused["is_error"] and "Use argparse instead." in text_of(refused)
    assert not accepted.get("is_error")
    assert session.config.policy.mode == "default"
    (first,) = asked[0]
    assert first.header == "Flag" and [o.label for o in first.options] == ["--fast", "--quick"]
    assert '"Which flag name?" = "--fast"' in text_of(answered)
    assert declined["is_error"] and "declined" in text_of(declined)
