"""Issue 20's tools through the real CLI against the fake model server: plan mode left by an
accepted plan, the task list through an automatic compaction, a question no one can answer
in `-p`, and WebFetch against a local web server with and without a domain rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codeloop.testing.fake_server import FakeModelServer, RecordedRequest
from codeloop.testing.scenario import Scenario, UsageSpec, earlier_calls, tool_use, turn
from codeloop.testing.web_server import WebServer
from tests.e2e.cli import CliRun, provider_env, run_cli

MODEL = "claude-sonnet-4-5"


def cli(
    tmp: Path, server: FakeModelServer, *args: str, env: dict[str, str] | None = None
) -> CliRun:
    return run_cli(
        ["-p", *args, "--model", MODEL, "--output-format", "json"],
        cwd=tmp,
        env=provider_env(server, "anthropic", tmp)
        | {"CODELOOP_HOME": str(tmp / "home")}
        | (env or {}),
    )


def results(request: RecordedRequest) -> list[dict[str, Any]]:
    """The tool results the request's last message carries."""
    content = request.body["messages"][-1]["content"]
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else json.dumps(content)


def edit(path: Path) -> Any:
    return tool_use("Edit", {"file_path": str(path), "old_string": "draft", "new_string": "final"})


def test_plan_mode_refuses_edits_until_the_plan_is_accepted(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("draft\n")
    turns = [
        turn(tool_use("Read", {"file_path": str(target)})),
        turn(edit(target)),
        turn(tool_use("ExitPlanMode", {"plan": "1. Replace draft with final."})),
        turn(edit(target)),
        turn("Done."),
    ]
    with FakeModelServer(Scenario(turns=tuple(turns))) as server:
        run = cli(
            tmp_path,
            server,
            "make it final",
            "--permission-mode",
            "plan",
            "--allowedTools",
            "Edit,ExitPlanMode",  # in -p, the ExitPlanMode rule is what accepts plans
        )
        requests = server.requests
    assert run.returncode == 0, run.stderr
    assert "Plan mode is active" in json.dumps(requests[0].body["messages"])
    (refused,) = results(requests[2])
    assert refused["is_error"] and "plan mode" in result_text(refused)
    (accepted,) = results(requests[3])
    assert not accepted.get("is_error") and "accepted your plan" in result_text(accepted)
    (edited,) = results(requests[4])
    assert not edited.get("is_error"), edited
    assert target.read_text() == "final\n"


def test_a_refused_plan_keeps_the_session_in_plan_mode(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("draft\n")
    turns = [
        turn(tool_use("ExitPlanMode", {"plan": "1. Replace draft with final."})),
        turn(tool_use("Read", {"file_path": str(target)})),
        turn(edit(target)),
        turn("Here is my plan instead."),
    ]
    with FakeModelServer(Scenario(turns=tuple(turns))) as server:
        run = cli(
            tmp_path, server, "make it final", "--permission-mode", "plan", "--allowedTools", "Edit"
        )
        requests = server.requests
    assert run.returncode == 0, run.stderr
    (refused,) = results(requests[1])
    assert refused["is_error"] and "approval of the plan" in result_text(refused)
    assert "--allowedTools ExitPlanMode" in result_text(refused)
    (still,) = results(requests[3])
    assert still["is_error"] and "plan mode" in result_text(still)
    assert target.read_text() == "draft\n"


def test_the_task_list_survives_an_automatic_compaction(tmp_path: Path) -> None:
    todos = [
        {"content": "Write the parser", "status": "completed", "activeForm": "Writing it"},
        {"content": "Test the parser", "status": "in_progress", "activeForm": "Testing it"},
        {"content": "Document quirks", "status": "pending", "activeForm": "Documenting"},
    ]
    turns = [
        turn(tool_use("TodoWrite", {"todos": todos})),
        *earlier_calls(),  # something for the summary to replace
        turn(
            tool_use("Bash", {"command": "echo big"}),
            usage=UsageSpec(input_tokens=90_000),
        ),
        turn("1. The user wants a parser."),  # the summary
        turn("Carrying on with the tests."),
    ]
    env = {"CODELOOP_CONTEXT_WINDOW": "100000"}
    with FakeModelServer(Scenario(turns=tuple(turns))) as server:
        run = cli(tmp_path, server, "build a parser", "--allowedTools", "Bash", env=env)
        requests = server.requests
    assert run.returncode == 0, run.stderr
    assert "compacted the conversation (auto)" in run.stderr
    after = json.dumps(requests[-1].body["messages"])
    assert "1. The user wants a parser." in after
    assert "[in_progress] Test the parser" in after and "[pending] Document quirks" in after
    (transcript,) = (tmp_path / "home").rglob(f"{run.json()['session_id']}.jsonl")
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    kept = [line["todos"] for line in lines if line.get("subtype") == "todos"]
    assert kept == [todos]


def test_a_question_in_print_mode_says_no_one_can_answer(tmp_path: Path) -> None:
    question = {
        "question": "Which database?",
        "header": "Database",
        "options": [
            {"label": "SQLite", "description": "A file"},
            {"label": "Postgres", "description": "A server"},
        ],
        "multiSelect": False,
    }
    turns = [turn(tool_use("AskUserQuestion", {"questions": [question]})), turn("SQLite, then.")]
    with FakeModelServer(Scenario(turns=tuple(turns))) as server:
        run = cli(tmp_path, server, "set up storage")
        requests = server.requests
    assert run.returncode == 0, run.stderr
    (answer,) = results(requests[1])
    assert answer["is_error"] and "No one can answer" in result_text(answer)


def fetch(url: str) -> Any:
    return tool_use("WebFetch", {"url": url, "prompt": "what do otters do? page-question"})


def web_scenarios(urls: list[str]) -> dict[str, Scenario]:
    main = Scenario(turns=(*[turn(fetch(u)) for u in urls], turn("Fetched.")))
    # The small model's answers (their request carries the page and the prompt).
    side = Scenario(turns=tuple(turn("They hold hands.") for _ in urls))
    # Keys are found in the JSON text of a request's messages, where a newline is `\n`.
    return {"read about otters": main, "page-question\\n\\nAnswer from": side}


def test_web_fetch_against_a_local_server_with_a_domain_rule(tmp_path: Path) -> None:
    with WebServer() as web:
        urls = [web.url + p for p in ("/page", "/elsewhere", "/missing", "/huge")]
        with FakeModelServer(web_scenarios(urls)) as server:
            run = cli(
                tmp_path,
                server,
                "read about otters",
                "--allowedTools",
                "WebFetch(domain:127.0.0.1)",
            )
            requests = server.requests
        fetched = [path for path, _ in web.requests]
    assert run.returncode == 0, run.stderr
    main = [r for r in requests if r.conversation == "read about otters"]
    side = [r for r in requests if r.conversation != "read about otters"]
    page, redirect, missing, huge = (results(r)[0] for r in main[1:])
    assert not page.get("is_error") and "They hold hands." in result_text(page)
    assert "REDIRECT" in result_text(redirect) and "localhost" in result_text(redirect)
    assert missing["is_error"] and "404" in result_text(missing)
    assert not huge.get("is_error") and "first 10 MB" in result_text(huge)
    assert fetched == ["/page", "/elsewhere", "/missing", "/huge"]  # the redirect not followed
    # The small model answered about the page, the huge one cut to size.
    assert len(side) == 2 and all("haiku" in r.body["model"] for r in side)
    asked = json.dumps(side[0].body["messages"])
    assert "All about otters" in asked and "page-question" in asked
    assert len(json.dumps(side[-1].body["messages"])) < 150_000


def test_web_fetch_is_refused_without_the_rule(tmp_path: Path) -> None:
    with WebServer() as web:
        urls = [web.url + "/page"]
        with FakeModelServer(web_scenarios(urls)) as server:
            asked = cli(tmp_path, server, "read about otters")
            denied = results(server.requests[-1])
        with FakeModelServer(web_scenarios(urls)) as server:
            # Every mode, even bypassPermissions, and a rule for all of WebFetch: loopback
            # stays out of reach until a domain rule names it.
            bypass = cli(
                tmp_path,
                server,
                "read about otters",
                "--permission-mode",
                "bypassPermissions",
                "--allowedTools",
                "WebFetch",
            )
            guarded = results(server.requests[-1])
        assert web.requests == []
    assert asked.returncode == 0 and bypass.returncode == 0
    assert denied[0]["is_error"] and "WebFetch" in result_text(denied[0])
    assert guarded[0]["is_error"] and "loopback" in result_text(guarded[0])
    assert "WebFetch(domain:127.0.0.1)" in result_text(guarded[0])
