"""Command hooks, run for real: small Python scripts read the payload and answer."""

from __future__ import annotations

import json
import shlex
import sys
import textwrap
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]
import pytest

from codeloop.hooks.hook_config import HookCommand, HookMatcher, HooksConfig
from codeloop.hooks.hook_runner import HookRunner, matches, tool_response


def hook(tmp_path: Path, name: str, body: str) -> str:
    """A shell command running a Python script that has `payload` (stdin, parsed) in scope."""
    script = tmp_path / f"{name}.py"
    script.write_text(
        "import json, os, sys, time\npayload = json.load(sys.stdin)\n" + textwrap.dedent(body)
    )
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def runner(tmp_path: Path, hooks: HooksConfig, **kwargs: Any) -> HookRunner:
    return HookRunner(hooks, "sess-1", tmp_path / "t.jsonl", tmp_path, **kwargs)


def on(event: str, *commands: str, matcher: str = "", timeout: float | None = None) -> HooksConfig:
    return {event: (HookMatcher(matcher, tuple(HookCommand(c, timeout) for c in commands)),)}


async def test_payload_environment_and_working_directory(tmp_path: Path) -> None:
    record = hook(
        tmp_path,
        "record",
        """
        payload["_env"] = os.environ["CLAUDE_PROJECT_DIR"]
        payload["_cwd"] = os.getcwd()
        with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "seen.json"), "w") as f:
            f.write(json.dumps(payload))
        """,
    )
    moved = tmp_path / "sub"
    moved.mkdir()
    outcome = await runner(tmp_path, on("PreToolUse", record)).run(
        "PreToolUse",
        {"tool_input": {"command": "ls"}, "tool_use_id": "toolu_1", "cwd": str(moved)},
        tool_name="Bash",
    )
    assert not outcome.blocked and outcome.runs[0].exit_code == 0
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen == {
        "session_id": "sess-1",
        "transcript_path": str(tmp_path / "t.jsonl"),
        "cwd": str(moved),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": "toolu_1",
        "_env": str(tmp_path),
        "_cwd": str(tmp_path),
    }


async def test_exit_2_blocks_with_stderr_for_the_model(tmp_path: Path) -> None:
    block = hook(
        tmp_path,
        "block",
        """
        if "rm " in payload["tool_input"]["command"]:
            print("rm is not allowed here; use git clean", file=sys.stderr)
            sys.exit(2)
        """,
    )
    hooks = runner(tmp_path, on("PreToolUse", block, matcher="Bash"))
    outcome = await hooks.run("PreToolUse", {"tool_input": {"command": "rm -rf x"}}, "Bash")
    assert outcome.blocked
    assert outcome.reason == "rm is not allowed here; use git clean"
    assert "rm is not allowed here; use git clean" in outcome.for_model()
    fine = await hooks.run("PreToolUse", {"tool_input": {"command": "ls"}}, "Bash")
    assert not fine.blocked and fine.for_model() == ""


async def test_other_exit_codes_are_shown_to_the_user_and_do_not_block(tmp_path: Path) -> None:
    fail = hook(tmp_path, "fail", 'print("formatter crashed", file=sys.stderr); sys.exit(1)')
    outcome = await runner(tmp_path, on("PostToolUse", fail)).run("PostToolUse", {}, "Edit")
    assert not outcome.blocked
    (message,) = outcome.system_messages
    assert "status code 1" in message and "formatter crashed" in message


async def test_permission_decisions_fold_deny_over_ask_over_allow(tmp_path: Path) -> None:
    def decide(name: str, behavior: str) -> str:
        answer = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": behavior,
                "permissionDecisionReason": f"{name} says {behavior}",
            }
        }
        return hook(tmp_path, name, f"print(json.dumps({answer!r}))")

    allow, ask, deny = decide("a", "allow"), decide("b", "ask"), decide("c", "deny")
    both = await runner(tmp_path, on("PreToolUse", allow, ask)).run("PreToolUse", {}, "Bash")
    assert both.permission == "ask" and both.permission_reason == "b says ask"
    assert not both.blocked
    denied = await runner(tmp_path, on("PreToolUse", allow, deny, ask)).run("PreToolUse", {}, "X")
    assert denied.permission == "deny" and denied.blocked
    assert "c says deny" in denied.for_model()
    allowed = await runner(tmp_path, on("PreToolUse", allow)).run("PreToolUse", {}, "Bash")
    assert allowed.permission == "allow" and not allowed.blocked


async def test_legacy_decisions(tmp_path: Path) -> None:
    approve = hook(tmp_path, "approve", 'print(json.dumps({"decision": "approve"}))')
    block = hook(tmp_path, "blk", 'print(json.dumps({"decision": "block", "reason": "no"}))')
    approved = await runner(tmp_path, on("PreToolUse", approve)).run("PreToolUse", {}, "Bash")
    assert approved.permission == "allow"
    blocked = await runner(tmp_path, on("PreToolUse", block)).run("PreToolUse", {}, "Bash")
    assert blocked.permission == "deny" and blocked.blocked and blocked.reason == "no"


async def test_updated_input_context_continue_and_system_message(tmp_path: Path) -> None:
    answer = {
        "continue": False,
        "stopReason": "budget exhausted",
        "systemMessage": "heads up",
        "suppressOutput": True,
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "updatedInput": {"command": "ls -la"},
            "additionalContext": "the repo uses tabs",
        },
    }
    cmd = hook(tmp_path, "all", f"print(json.dumps({answer!r}))")
    outcome = await runner(tmp_path, on("PreToolUse", cmd)).run("PreToolUse", {}, "Bash")
    assert outcome.updated_input == {"command": "ls -la"}
    assert outcome.additional_context == ("the repo uses tabs",)
    assert outcome.stop and outcome.stop_reason == "budget exhausted"
    assert outcome.system_messages == ("heads up",)
    assert outcome.for_model() == "the repo uses tabs"


async def test_stop_hook_block_reason_goes_to_the_model(tmp_path: Path) -> None:
    cmd = hook(
        tmp_path,
        "stop",
        """
        if not payload["stop_hook_active"]:
            print(json.dumps({"decision": "block", "reason": "run the tests first"}))
        """,
    )
    hooks = runner(tmp_path, on("Stop", cmd))
    first = await hooks.run("Stop", {"stop_hook_active": False})
    assert first.blocked and "run the tests first" in first.for_model()
    again = await hooks.run("Stop", {"stop_hook_active": True})
    assert not again.blocked


async def test_plain_stdout_is_context_only_where_claude_code_makes_it_so(tmp_path: Path) -> None:
    say = hook(tmp_path, "say", 'print("today is release day")')
    events: tuple[str, ...] = ("UserPromptSubmit", "SessionStart")
    for event in events:
        outcome = await runner(tmp_path, on(event, say)).run(event, {"source": "startup"})
        assert outcome.additional_context == ("today is release day",)
    tool = await runner(tmp_path, on("PreToolUse", say)).run("PreToolUse", {}, "Bash")
    assert tool.additional_context == ()


async def test_user_prompt_block_reason_is_for_the_user(tmp_path: Path) -> None:
    cmd = hook(tmp_path, "nope", 'print("no secrets in prompts", file=sys.stderr); sys.exit(2)')
    outcome = await runner(tmp_path, on("UserPromptSubmit", cmd)).run(
        "UserPromptSubmit", {"prompt": "my password is hunter2"}
    )
    assert outcome.blocked and outcome.reason == "no secrets in prompts"
    assert outcome.for_model() == ""


async def test_exit_2_where_nothing_can_be_blocked_is_only_shown(tmp_path: Path) -> None:
    cmd = hook(tmp_path, "two", 'print("cannot block a start", file=sys.stderr); sys.exit(2)')
    outcome = await runner(tmp_path, on("SessionStart", cmd)).run(
        "SessionStart", {"source": "startup"}
    )
    assert not outcome.blocked
    assert outcome.system_messages == ("cannot block a start",)


def test_matchers() -> None:
    assert matches("", "Bash") and matches("*", "Bash") and matches("", None)
    assert matches("Bash", "Bash") and not matches("Bash", "BashOutput")
    assert matches("Edit|Write", "Write") and not matches("Edit|Write", "Read")
    assert matches("Notebook.*", "NotebookEdit") and matches("mcp__.*", "mcp__git__log")
    assert not matches("Bash", None)
    assert not matches("(", "Bash")  # an invalid pattern matches nothing


async def test_matcher_selects_commands_and_duplicates_run_once(tmp_path: Path) -> None:
    hooks = runner(
        tmp_path,
        {
            "PreToolUse": (
                HookMatcher("Bash", (HookCommand("a"),)),
                HookMatcher("Edit|Write", (HookCommand("b"),)),
                HookMatcher("*", (HookCommand("a"), HookCommand("c"))),
            ),
            "Stop": (HookMatcher("Bash", (HookCommand("s"),)),),  # Stop ignores matchers
            "SessionStart": (HookMatcher("resume", (HookCommand("r"),)),),
        },
    )
    assert [c.command for c in hooks.commands("PreToolUse", tool_name="Bash")] == ["a", "c"]
    assert [c.command for c in hooks.commands("PreToolUse", tool_name="Edit")] == ["b", "a", "c"]
    assert [c.command for c in hooks.commands("Stop")] == ["s"]
    assert hooks.commands("SessionStart", {"source": "startup"}) == []
    assert [c.command for c in hooks.commands("SessionStart", {"source": "resume"})] == ["r"]
    outcome = await hooks.run("PostToolUse", {}, "Bash")
    assert outcome.runs == () and not outcome.blocked


async def test_matching_hooks_run_in_parallel(tmp_path: Path) -> None:
    """Each hook waits for the other to have started: run one after the other, both time out."""

    def rendezvous(mine: str, theirs: str) -> str:
        return hook(
            tmp_path,
            mine,
            f"""
            open("{mine}.started", "w").close()
            while not os.path.exists("{theirs}.started"):
                time.sleep(0.01)
            """,
        )

    hooks = runner(tmp_path, on("Stop", rendezvous("a", "b"), rendezvous("b", "a"), timeout=20))
    outcome = await hooks.run("Stop", {"stop_hook_active": False})
    assert [r.exit_code for r in outcome.runs] == [0, 0]


async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    cmd = hook(
        tmp_path,
        "hang",
        """
        import subprocess
        child = subprocess.Popen(["sleep", "300"])
        open("child.pid", "w").write(str(child.pid))
        child.wait()
        """,
    )
    outcome = await runner(tmp_path, on("PostToolUse", cmd, timeout=1)).run(
        "PostToolUse", {}, "Bash"
    )
    assert outcome.runs[0].timed_out
    assert "timed out after 1 s" in outcome.system_messages[0]
    child = int((tmp_path / "child.pid").read_text())
    try:
        process = psutil.Process(child)
        process.wait(timeout=10)
    except psutil.NoSuchProcess:
        pass
    except psutil.TimeoutExpired:
        assert process.status() == psutil.STATUS_ZOMBIE


async def test_a_command_that_cannot_start_is_reported(tmp_path: Path) -> None:
    hooks = runner(tmp_path, on("Stop", "true"), project_dir=tmp_path / "missing")
    outcome = await hooks.run("Stop", {})
    assert not outcome.blocked
    assert "could not start" in outcome.system_messages[0]


@pytest.mark.parametrize(
    ("tool", "tool_input", "expected"),
    [
        ("Bash", {"command": "ls"}, {"stdout": "out", "stderr": "", "interrupted": False}),
        ("Write", {"file_path": "/p/a.py"}, {"filePath": "/p/a.py"}),
        ("Grep", {"pattern": "x"}, {}),
    ],
)
def test_tool_response_has_the_fields_hook_scripts_read(
    tool: str, tool_input: dict[str, Any], expected: dict[str, Any]
) -> None:
    response = tool_response(tool, tool_input, "out", False)
    assert response["content"] == "out" and response["success"] is True
    assert expected.items() <= response.items()


async def test_pre_compact_seam_passes_trigger_and_returns_added_instructions(
    tmp_path: Path,
) -> None:
    cmd = hook(
        tmp_path,
        "compact",
        """
        print(json.dumps({"hookSpecificOutput": {
            "hookEventName": "PreCompact",
            "additionalContext": f"keep the API notes ({payload['trigger']}, "
                                 f"{payload['custom_instructions'] or 'none'})",
        }}))
        """,
    )
    hooks = runner(tmp_path, on("PreCompact", cmd, matcher="auto"))
    answer = await hooks.pre_compact("reactive", None)
    assert answer.for_model() == "keep the API notes (auto, none)" and not answer.blocked
    manual = await hooks.pre_compact("manual", "be brief")  # matcher "auto" only
    assert manual.for_model() == "" and not manual.runs


async def test_a_pre_compact_hook_exiting_2_refuses_the_compaction(tmp_path: Path) -> None:
    cmd = hook(tmp_path, "refuse", "sys.stderr.write('not during a release'); sys.exit(2)")
    answer = await runner(tmp_path, on("PreCompact", cmd)).pre_compact("auto", None)
    assert answer.blocked and "not during a release" in answer.reason


async def test_agent_matchers_fire_for_task_and_the_oldest_shape_parses(tmp_path: Path) -> None:
    from codeloop.hooks.hook_config import parse_hooks

    problems: list[str] = []
    hooks = parse_hooks(
        {
            "PreToolUse": {"Bash": "echo old"},
            "PostToolUse": [
                {"matcher": "Agent", "hooks": [{"type": "command", "command": "echo agent"}]}
            ],
        },
        lambda where, problem: problems.append(problem),
    )
    assert problems == []
    assert [c.command for c in runner(tmp_path, hooks).commands("PreToolUse", {}, "Bash")] == [
        "echo old"
    ]
    matched = runner(tmp_path, hooks).commands("PostToolUse", {}, "Task")
    assert [c.command for c in matched] == ["echo agent"]


async def test_codeloops_own_settings_write_fires_config_change_without_a_stale_notice(
    tmp_path: Path,
) -> None:
    from codeloop.system.jsonfile import write_json_atomic

    local = tmp_path / ".claude" / "settings.local.json"
    log = tmp_path / "log.jsonl"
    command = hook(tmp_path, "log", f"open({str(log)!r}, 'a').write(json.dumps(payload) + '\\n')")
    run = runner(
        tmp_path, on("ConfigChange", command), config_files=lambda: {local: "local_settings"}
    )
    # codeloop's own write (an "always allow" rule): the hook hears of it; the rule is in
    # effect already, so nobody is told it waits for the next session.
    write_json_atomic(local, {"permissions": {"allow": ["Bash(ls)"]}})
    assert await run.check_watched() == []
    local.write_text('{"permissions": {"allow": ["Bash(rm *)"]}}\n')  # someone else's
    (message,) = await run.check_watched()
    assert f"{local} changed during the session" in message
    sources = [json.loads(line)["source"] for line in log.read_text().splitlines()]
    assert sources == ["local_settings", "local_settings"]
