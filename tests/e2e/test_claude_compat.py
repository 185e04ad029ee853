"""A Claude Code project works unchanged: its settings, hooks and CLAUDE.md, through `codeloop -p`.

The projects here are what a Claude Code user has on disk: `.claude/settings.json` with
permissions and command hooks (Python scripts reading the JSON payload on stdin), and a
CLAUDE.md that imports another file. The model is the FakeModelServer; what reached it is read
from its request log.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, UsageSpec, earlier_calls, tool_use, turn
from tests.e2e.cli import PROVIDER_MODELS, CliRun, provider_env, run_cli

RULES = "RULES-7f3a: run `make check` before saying you are done."
BLOCK_REASON = "rm is not allowed in this repository; use `git clean -n` to preview instead"


def script(project: Path, name: str, body: str) -> str:
    """A hook script under .claude/hooks, and the command Claude Code's settings would hold."""
    path = project / ".claude" / "hooks" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("import json, os, re, sys\npayload = json.load(sys.stdin)\n" + body)
    return f'{shlex.quote(sys.executable)} "$CLAUDE_PROJECT_DIR/.claude/hooks/{name}"'


def settings(project: Path, data: dict[str, Any]) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))


def one_hook(project: Path, event: str, name: str, body: str) -> None:
    """Settings with a single command hook for `event`, running the script `body`."""
    command = script(project, name, body)
    settings(project, {"hooks": {event: [{"hooks": [{"type": "command", "command": command}]}]}})


def make_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "build").mkdir(parents=True)
    (project / "build" / "out.o").write_text("object code")
    (project / "docs").mkdir()
    (project / "docs" / "rules.md").write_text(RULES + "\n")
    (project / "CLAUDE.md").write_text("# Project\nFollow the rules in @docs/rules.md\n")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


def run_all(
    project: Path,
    tmp_path: Path,
    scenario: Scenario | Mapping[str, Scenario],
    invocations: list[list[str]],
    *,
    provider: str = "anthropic",
    extra_env: dict[str, str] | None = None,
) -> tuple[list[CliRun], list[dict[str, Any]]]:
    """`codeloop ARGS --model M` for each invocation, all served from one scenario (or one per
    conversation, see FakeModelServer); the runs and the request bodies the server received."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    with FakeModelServer(scenario) as server:
        env = provider_env(server, provider, home) | (extra_env or {})
        model = ["--model", PROVIDER_MODELS[provider]]
        results = [run_cli([*args, *model], cwd=project, env=env) for args in invocations]
        bodies = [r.body for r in server.requests]
    return results, bodies


def run(
    project: Path, tmp_path: Path, scenario: Scenario, *args: str, provider: str = "anthropic"
) -> tuple[CliRun, list[dict[str, Any]]]:
    (result,), bodies = run_all(
        project, tmp_path, scenario, [["-p", "tidy the build", *args]], provider=provider
    )
    return result, bodies


def last_tool_result(body: dict[str, Any]) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = body["messages"][-1]["content"]
    (block,) = [b for b in blocks if b["type"] == "tool_result"]
    return block


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content)


def test_claude_code_project_works_unchanged(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    no_rm = script(
        project,
        "no_rm.py",
        textwrap.dedent(
            f"""
            if re.search(r"\\brm\\b", payload["tool_input"].get("command", "")):
                print({BLOCK_REASON!r}, file=sys.stderr)
                sys.exit(2)
            """
        ),
    )
    formatter = script(
        project,
        "format.py",
        textwrap.dedent(
            """
            path = payload["tool_input"]["file_path"]
            with open(path) as f:
                lines = [line.rstrip() for line in f.read().splitlines()]
            with open(path, "w") as f:
                f.write("\\n".join(lines) + "\\n")
            """
        ),
    )
    settings(
        project,
        {
            "permissions": {"allow": ["Bash", "Write"], "deny": []},
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": no_rm}]}
                ],
                "PostToolUse": [
                    {
                        "matcher": "Edit|MultiEdit|Write",
                        "hooks": [{"type": "command", "command": formatter, "timeout": 30}],
                    }
                ],
            },
        },
    )
    scenario = Scenario(
        turns=(
            turn("Cleaning.", tool_use("Bash", {"command": "rm -rf build"})),
            turn(
                "Writing notes.",
                tool_use("Write", {"file_path": "notes.py", "content": "x = 1   \ny = 2\t\n"}),
            ),
            turn("Done."),
        )
    )
    result, bodies = run(project, tmp_path, scenario, "--output-format", "json")

    assert result.returncode == 0, result.stderr
    assert result.json()["result"] == "Done."
    assert len(bodies) == 3
    # The memory, with its import, reaches the model exactly once per request.
    for body in bodies:
        assert json.dumps(body).count("RULES-7f3a") == 1
        assert json.dumps(body).count("Follow the rules in @docs/rules.md") == 1
    # The blocked command never ran, and the model read the hook's reason.
    assert (project / "build" / "out.o").exists()
    blocked = last_tool_result(bodies[1])
    assert blocked.get("is_error") is True
    assert BLOCK_REASON in text_of(blocked["content"])
    # Write was allowed by the project's settings, and the formatter rewrote the file.
    assert not last_tool_result(bodies[2]).get("is_error")
    assert (project / "notes.py").read_text() == "x = 1\ny = 2\n"


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_second_request_starts_with_the_first_ones_bytes(tmp_path: Path, provider: str) -> None:
    project = make_project(tmp_path)
    scenario = Scenario(
        turns=(turn("Looking.", tool_use("Bash", {"command": "ls"})), turn("Nothing to tidy."))
    )
    result, (first, second) = run(project, tmp_path, scenario, provider=provider)
    assert result.returncode == 0, result.stderr
    assert first.get("system") == second.get("system")
    assert json.dumps(first["tools"]) == json.dumps(second["tools"])
    earlier = json.dumps(first["messages"])[:-1]  # all of it but the closing bracket
    assert json.dumps(second["messages"]).startswith(earlier)
    assert "RULES-7f3a" in earlier  # the memory is part of the repeated prefix


EVENT_FIELDS: dict[str, set[str]] = {
    "SessionStart": {"source"},
    "UserPromptSubmit": {"prompt"},
    "PreToolUse": {"tool_name", "tool_input", "tool_use_id"},
    "PostToolUse": {"tool_name", "tool_input", "tool_response", "tool_use_id"},
    "Notification": {"message"},
    "Stop": {"stop_hook_active"},
    "SubagentStop": {"stop_hook_active"},
    "SessionEnd": {"reason"},
}
COMMON_FIELDS = {"session_id", "transcript_path", "cwd", "hook_event_name"}


def logging_hooks(project: Path, events: list[str]) -> Path:
    log = project / "hook-log.jsonl"
    logger = script(
        project,
        "log.py",
        'with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "hook-log.jsonl"), "a") as f:\n'
        "    f.write(json.dumps(payload) + '\\n')\n",
    )
    settings(
        project,
        {
            "permissions": {"allow": ["Bash"]},
            "hooks": {
                event: [{"matcher": "*", "hooks": [{"type": "command", "command": logger}]}]
                for event in events
            },
        },
    )
    return log


def test_every_hook_event_fires_with_its_documented_fields(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    log = logging_hooks(project, list(EVENT_FIELDS))
    scenario = Scenario(
        turns=(
            turn("Listing.", tool_use("Bash", {"command": "echo listed"})),
            # Write is not allowed and a headless run cannot ask: the user is notified.
            turn("Writing.", tool_use("Write", {"file_path": "x.txt", "content": "x"})),
            # A sub-agent: its own one-turn loop ends with SubagentStop, not Stop.
            turn(tool_use("Task", {"description": "look around", "prompt": "List the files."})),
            turn("The sub-agent's report."),
            turn("Done."),
        )
    )
    result, _ = run(project, tmp_path, scenario, "--output-format", "json")
    assert result.returncode == 0, result.stderr
    session_id = result.json()["session_id"]

    payloads = [json.loads(line) for line in log.read_text().splitlines()]
    events = [p["hook_event_name"] for p in payloads]
    assert events == [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "PreToolUse",
        "Notification",
        "PreToolUse",
        "SubagentStop",
        "PostToolUse",
        "Stop",
        "SessionEnd",
    ]
    for payload in payloads:
        event = payload["hook_event_name"]
        assert COMMON_FIELDS | EVENT_FIELDS[event] <= set(payload), event
        assert payload["session_id"] == session_id
        assert payload["cwd"] == str(project)
    by_event: dict[str, Any] = {}
    for payload in payloads:  # the first of each event
        by_event.setdefault(payload["hook_event_name"], payload)
    assert by_event["SessionStart"]["source"] == "startup"
    assert by_event["UserPromptSubmit"]["prompt"] == "tidy the build"
    assert by_event["PostToolUse"]["tool_name"] == "Bash"
    assert by_event["PostToolUse"]["tool_input"] == {"command": "echo listed"}
    assert "listed" in json.dumps(by_event["PostToolUse"]["tool_response"])
    assert "Write" in by_event["Notification"]["message"]
    assert by_event["Stop"]["stop_hook_active"] is False
    assert by_event["SubagentStop"]["stop_hook_active"] is False
    task_post = payloads[events.index("SubagentStop") + 1]
    assert task_post["tool_name"] == "Agent"  # Claude Code's current name for Task
    assert "The sub-agent's report." in json.dumps(task_post["tool_response"])
    assert Path(by_event["Stop"]["transcript_path"]).exists()


def test_pre_compact_fires_before_an_automatic_compaction(tmp_path: Path) -> None:
    """Needs issue 5's autocompact in the loop, with `HookRunner.pre_compact` as its
    PreCompact seam. A small context window and a large reported usage force it, once there
    are turns older than the recent ones a compaction keeps word for word."""
    project = make_project(tmp_path)
    log = logging_hooks(project, ["PreCompact"])
    scenario = Scenario(
        turns=(
            *earlier_calls(),
            turn(
                "Reading.",
                tool_use("Bash", {"command": "echo big"}),
                usage=UsageSpec(input_tokens=90_000),
            ),
            turn("Summary: the user wants the build tidied; nothing done yet."),
            turn("Done."),
        )
    )
    (result,), _ = run_all(
        project,
        tmp_path,
        scenario,
        [["-p", "tidy the build"]],
        extra_env={"CODELOOP_CONTEXT_WINDOW": "100000"},
    )
    assert result.returncode == 0, result.stderr
    (payload,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert payload["hook_event_name"] == "PreCompact"
    assert payload["trigger"] == "auto" and payload["custom_instructions"] == ""
    assert "compacted the conversation (auto)" in result.stderr  # shown, not only recorded


def test_stream_json_reports_a_compaction(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    scenario = Scenario(
        turns=(
            *earlier_calls(),
            turn(tool_use("Bash", {"command": "echo big"}), usage=UsageSpec(input_tokens=90_000)),
            turn("Summary: nothing done yet."),
            turn("Done."),
        )
    )
    (result,), bodies = run_all(
        project,
        tmp_path,
        scenario,
        [["-p", "tidy the build", "--output-format", "stream-json"]],
        extra_env={"CODELOOP_CONTEXT_WINDOW": "100000"},
    )
    assert result.returncode == 0, result.stderr
    first, summary_request = bodies[0], bodies[len(earlier_calls()) + 1]
    # the summary request shares the session's prefix: same system prompt, memory first
    assert summary_request["system"] == first["system"]
    assert RULES in json.dumps(summary_request["messages"][0])
    (boundary,) = [
        line for line in result.json_lines() if line.get("subtype") == "compact_boundary"
    ]
    assert boundary["compact_metadata"]["trigger"] == "auto"
    assert boundary["compact_metadata"]["pre_tokens"] >= 90_000


def test_stop_hook_sends_the_model_back_once_then_lets_it_stop(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    one_hook(
        project,
        "Stop",
        "gate.py",
        "if not payload['stop_hook_active']:\n"
        "    print(json.dumps({'decision': 'block', 'reason': 'run the tests first'}))\n",
    )
    scenario = Scenario(turns=(turn("Done."), turn("Tests pass. Done.")))
    result, bodies = run(project, tmp_path, scenario, "--output-format", "json")
    assert result.returncode == 0, result.stderr
    assert result.json()["result"] == "Tests pass. Done."
    assert len(bodies) == 2
    assert "run the tests first" in json.dumps(bodies[1]["messages"][-1])


def test_a_stop_hook_that_always_blocks_cannot_keep_the_loop_going(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    one_hook(project, "Stop", "never.py", "print('not yet', file=sys.stderr)\nsys.exit(2)\n")
    scenario = Scenario(turns=tuple(turn(f"Done {i}.") for i in range(12)))
    result, bodies = run(project, tmp_path, scenario, "--output-format", "json")
    # The answer, then the 8 continuations in a row Claude Code allows.
    assert len(bodies) == 9
    assert "not yet" in json.dumps(bodies[-1]["messages"][-1])
    assert result.returncode == 0, result.stderr
    assert "Stop hook" in result.stderr


def test_user_prompt_hook_blocks_or_adds_context(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    one_hook(
        project,
        "UserPromptSubmit",
        "prompt.py",
        "if 'password' in payload['prompt']:\n"
        "    print('prompts must not carry secrets', file=sys.stderr)\n"
        "    sys.exit(2)\n"
        "print('The release branch is frozen.')\n",
    )
    (blocked, allowed), bodies = run_all(
        project,
        tmp_path,
        Scenario(turns=(turn("Noted."),)),
        [["-p", "my password is x"], ["-p", "what is frozen?"]],
    )
    assert blocked.returncode == 1
    assert "prompts must not carry secrets" in blocked.stderr
    assert allowed.returncode == 0, allowed.stderr
    (body,) = bodies  # the blocked prompt never reached the model
    assert "The release branch is frozen." in json.dumps(body["messages"])


def test_settings_errors_are_reported_and_the_rest_loads(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    local = project / ".claude" / "settings.local.json"
    local.parent.mkdir(parents=True)
    local.write_text('{"permissions": {"allow": ["Bash",]}}')
    settings(project, {"permissions": {"allow": ["Bash"], "additionalDirectories": "x"}})
    scenario = Scenario(
        turns=(turn("Run.", tool_use("Bash", {"command": "echo ran"})), turn("Ok."))
    )
    result, bodies = run(project, tmp_path, scenario)
    assert result.returncode == 0, result.stderr
    assert f"{local}:1:" in result.stderr and "invalid JSON" in result.stderr
    assert "permissions.additionalDirectories" in result.stderr
    assert "ran" in text_of(last_tool_result(bodies[1])["content"])  # allowed by settings


def test_settings_flag_inline_json(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    scenario = Scenario(
        turns=(turn("Run.", tool_use("Bash", {"command": "echo ran"})), turn("Ok."))
    )
    inline = json.dumps({"permissions": {"allow": ["Bash"]}})
    result, bodies = run(project, tmp_path, scenario, "--settings", inline)
    assert result.returncode == 0, result.stderr
    assert "ran" in text_of(last_tool_result(bodies[1])["content"])


def test_a_hook_allow_answers_the_prompt_but_not_deny_or_ask_rules(tmp_path: Path) -> None:
    """As Claude Code documents: permissionDecision "allow" skips the prompt a call would get;
    deny and ask rules are still applied."""
    project = make_project(tmp_path)
    allow_all = script(
        project,
        "allow.py",
        'print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", '
        '"permissionDecision": "allow", "permissionDecisionReason": "ok by hook"}}))\n',
    )
    settings(
        project,
        {
            "permissions": {"deny": ["Write(./locked/**)"], "ask": ["Write(./drafts/**)"]},
            "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"command": allow_all}]}]},
        },
    )
    calls = [
        tool_use("Write", {"file_path": "notes.txt", "content": "prompt answered by the hook"}),
        tool_use("Write", {"file_path": "locked/key.txt", "content": "denied by a rule"}),
        tool_use("Write", {"file_path": "drafts/a.txt", "content": "asked by a rule"}),
    ]
    result, bodies = run(project, tmp_path, Scenario(turns=(turn(*calls), turn("done"))))
    assert result.returncode == 0, result.stderr
    outcomes = [b.get("is_error", False) for b in bodies[1]["messages"][-1]["content"]]
    assert outcomes == [False, True, True]
    assert (project / "notes.txt").read_text() == "prompt answered by the hook"
    assert not (project / "locked").exists()
    assert not (project / "drafts").exists()
