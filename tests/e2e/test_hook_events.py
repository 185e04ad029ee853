"""Every hook event codeloop fires, with Claude Code's input fields and output contract, through
the real CLI: hook scripts in bash and Python read the JSON on stdin, as real projects' do."""

from __future__ import annotations

import json
import shlex
import stat
import sys
from pathlib import Path
from typing import Any

from codeloop.testing.scenario import Fault, Scenario, tool_use, turn
from tests.e2e.cli import PROVIDER_MODELS
from tests.e2e.test_claude_compat import (
    last_tool_result,
    make_project,
    run,
    run_all,
    script,
    settings,
    text_of,
)

COMMON = {"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name"}
FIELDS: dict[str, set[str]] = {
    "Setup": {"trigger"},
    "SessionStart": {"source", "model"},
    "UserPromptSubmit": {"prompt"},
    "PreToolUse": {"tool_name", "tool_input", "tool_use_id"},
    "PermissionRequest": {"tool_name", "tool_input", "permission_suggestions"},
    "PostToolUse": {"tool_name", "tool_input", "tool_response", "tool_use_id", "duration_ms"},
    "PostToolUseFailure": {"tool_name", "tool_input", "tool_use_id", "error", "is_interrupt"},
    "PostToolBatch": {"tool_calls"},
    "CwdChanged": {"old_cwd", "new_cwd"},
    "Notification": {"message", "notification_type"},
    "SubagentStart": {"agent_id", "agent_type"},
    "SubagentStop": {"stop_hook_active", "agent_id", "agent_type", "last_assistant_message"},
    "Stop": {"stop_hook_active", "last_assistant_message"},
    "StopFailure": {"error", "error_details", "last_assistant_message"},
    "SessionEnd": {"reason"},
}


def bash_script(project: Path, name: str, body: str) -> str:
    path = project / ".claude" / "hooks" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return f'"$CLAUDE_PROJECT_DIR"/.claude/hooks/{name}'


def log_everything(project: Path, extra: dict[str, Any] | None = None) -> Path:
    """A Python hook on every event appending its input to hook-log.jsonl, plus `extra`."""
    logger = script(
        project,
        "log.py",
        'with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "hook-log.jsonl"), "a") as f:\n'
        "    f.write(json.dumps(payload) + '\\n')\n",
    )
    hooks: dict[str, Any] = {
        event: [{"hooks": [{"type": "command", "command": logger}]}] for event in FIELDS
    }
    for event, groups in (extra or {}).items():
        hooks[event] = [*hooks.get(event, []), *groups]
    settings(project, {"hooks": hooks})
    return project / "hook-log.jsonl"


def payloads(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_every_event_fires_with_its_fields_and_env_file_exports_reach_bash(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    (project / "sub").mkdir()
    exporter = bash_script(
        project,
        "env.sh",
        'cat > /dev/null\necho "export GREETING=hello-from-hook" >> "$CLAUDE_ENV_FILE"\n',
    )
    allow_write = script(
        project,
        "allow_write.py",
        "if payload['tool_name'] == 'Write':\n"
        "    print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PermissionRequest',"
        " 'decision': {'behavior': 'allow'}}}))\n",
    )
    log = log_everything(
        project,
        {
            "SessionStart": [{"hooks": [{"type": "command", "command": exporter}]}],
            "PermissionRequest": [{"hooks": [{"type": "command", "command": allow_write}]}],
        },
    )
    scenario = Scenario(
        turns=(
            turn("Greeting.", tool_use("Bash", {"command": "echo $GREETING; cd sub"})),
            turn("Failing.", tool_use("Bash", {"command": "ls no-such-file"})),
            # Not allowed, and nobody to ask: a PermissionRequest hook allows Write...
            turn("Writing.", tool_use("Write", {"file_path": "x.txt", "content": "x"})),
            # ...but not Edit, so the user is notified of the denial.
            turn(
                "Editing.",
                tool_use("Edit", {"file_path": "x.txt", "old_string": "x", "new_string": "y"}),
            ),
            turn(tool_use("Task", {"description": "look around", "prompt": "List the files."})),
            turn("The sub-agent's report."),
            turn("Done."),
        )
    )
    result, bodies = run(project, tmp_path, scenario, "--output-format", "json", "--init")
    assert result.returncode == 0, result.stderr
    session_id = result.json()["session_id"]

    # The variable the SessionStart hook exported reached the Bash command.
    assert "hello-from-hook" in text_of(last_tool_result(bodies[1])["content"])
    # The PermissionRequest hook answered for the user: the file was written, not edited.
    assert (project / "sub" / "x.txt").read_text() == "x"  # after the `cd sub`

    seen = payloads(log)
    events = [p["hook_event_name"] for p in seen]
    for event in FIELDS:
        if event != "StopFailure":
            assert event in events, event
    for payload in seen:
        event = payload["hook_event_name"]
        assert COMMON | FIELDS[event] <= set(payload), (event, set(payload))
        assert payload["session_id"] == session_id
        assert payload["permission_mode"] == "default"
    first = {p["hook_event_name"]: p for p in reversed(seen)}
    assert events[:3] == ["Setup", "SessionStart", "UserPromptSubmit"]
    assert first["Setup"]["trigger"] == "init"
    assert first["SessionStart"]["source"] == "startup"
    assert first["SessionStart"]["model"] == PROVIDER_MODELS["anthropic"].split(":", 1)[1]
    assert first["CwdChanged"] == {
        **first["CwdChanged"],
        "old_cwd": str(project),
        "new_cwd": str(project / "sub"),
    }
    assert first["PostToolUseFailure"]["tool_input"] == {"command": "ls no-such-file"}
    assert "Exit code" in first["PostToolUseFailure"]["error"]
    assert [c["tool_name"] for c in first["PostToolBatch"]["tool_calls"]] == ["Bash"]
    assert first["PermissionRequest"]["tool_name"] == "Write"
    assert first["Notification"]["notification_type"] == "permission_prompt"
    assert "Edit" in first["Notification"]["message"]
    assert first["SubagentStart"]["agent_type"] == "general-purpose"
    stop = first["SubagentStop"]
    assert stop["agent_id"] == first["SubagentStart"]["agent_id"]
    assert stop["last_assistant_message"] == "The sub-agent's report."
    # Tool events inside the sub-agent carry its identity; the main thread's do not.
    assert first["Stop"]["last_assistant_message"] == "Done."
    assert "agent_id" not in first["Stop"]
    assert events[-1] == "SessionEnd"


def test_stop_failure_fires_when_the_turn_ends_on_an_api_error(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    log = log_everything(project)
    scenario = Scenario(turns=(turn("never", faults=(Fault(kind="auth"),)),))
    result, _ = run(project, tmp_path, scenario)
    assert result.returncode == 1
    events = [p["hook_event_name"] for p in payloads(log)]
    assert "Stop" not in events and "StopFailure" in events
    (failure,) = [p for p in payloads(log) if p["hook_event_name"] == "StopFailure"]
    assert failure["error"] == "authentication_failed"


def test_json_output_contract_block_context_and_stop(tmp_path: Path) -> None:
    """A PreToolUse deny in JSON, UserPromptSubmit context, a PostToolUse block with context,
    and `continue: false` from PostToolBatch ending the run."""
    project = make_project(tmp_path)
    deny = script(
        project,
        "deny.py",
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse',"
        " 'permissionDecision': 'deny', 'permissionDecisionReason': 'no ls today'}}))\n",
    )
    context = script(project, "ctx.py", "print('CTX-5d1: the deploy target is staging')\n")
    stop = script(
        project, "stop.py", "print(json.dumps({'continue': False, 'stopReason': 'enough'}))\n"
    )
    settings(
        project,
        {
            "hooks": {
                "UserPromptSubmit": [{"hooks": [{"type": "command", "command": context}]}],
                "PreToolUse": [
                    {
                        "matcher": "Bash",
                        "hooks": [{"type": "command", "command": deny, "if": "Bash(ls *)"}],
                    }
                ],
                "PostToolBatch": [{"hooks": [{"type": "command", "command": stop}]}],
            }
        },
    )
    scenario = Scenario(
        turns=(
            turn("Listing.", tool_use("Bash", {"command": "ls -la"})),
            turn("never reached"),
        )
    )
    result, bodies = run(project, tmp_path, scenario, "--output-format", "json")
    assert result.returncode == 1
    assert len(bodies) == 1  # PostToolBatch stopped the loop before the next model call
    assert "CTX-5d1" in json.dumps(bodies[0]["messages"])
    assert "enough" in result.stderr


def test_if_rule_runs_a_hook_only_for_matching_subcommands(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    block = script(project, "block.py", "print('no git here', file=sys.stderr); sys.exit(2)\n")
    settings(
        project,
        {
            "permissions": {"allow": ["Bash"]},
            "hooks": {
                "PreToolUse": [
                    {
                        "matcher": "Bash",
                        "hooks": [{"type": "command", "command": block, "if": "Bash(git *)"}],
                    }
                ]
            },
        },
    )
    scenario = Scenario(
        turns=(
            turn(tool_use("Bash", {"command": "echo one && git status"})),
            turn(tool_use("Bash", {"command": "echo two"})),
            turn("Done."),
        )
    )
    result, bodies = run(project, tmp_path, scenario)
    assert result.returncode == 0, result.stderr
    assert "no git here" in text_of(last_tool_result(bodies[1])["content"])
    assert "two" in text_of(last_tool_result(bodies[2])["content"])


def test_exec_form_async_and_timeout(tmp_path: Path) -> None:
    """`args` runs the script without a shell; an async hook does not hold up the tool call
    and its context reaches the model on a later turn; a hung hook is cut at its timeout."""
    project = make_project(tmp_path)
    marker = project / "exec-ran"
    exec_hook = {
        "type": "command",
        "command": sys.executable,
        "args": ["-c", f"open({str(marker)!r}, 'w').write('ok')"],
    }
    slow = script(
        project,
        "slow.py",
        "time_ = __import__('time'); time_.sleep(0.5)\n"
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PostToolUse',"
        " 'additionalContext': 'ASYNC-93c: tests passed'}}))\n",
    )
    hang = script(project, "hang.py", "__import__('time').sleep(60)\n")
    settings(
        project,
        {
            "permissions": {"allow": ["Bash"]},
            "hooks": {
                "PreToolUse": [
                    {"hooks": [exec_hook, {"type": "command", "command": hang, "timeout": 1}]}
                ],
                "PostToolUse": [{"hooks": [{"type": "command", "command": slow, "async": True}]}],
            },
        },
    )
    scenario = Scenario(
        turns=(
            turn(tool_use("Bash", {"command": "echo first"})),
            turn(tool_use("Bash", {"command": "sleep 1; echo second"})),
            turn("Done."),
        )
    )
    result, bodies = run(project, tmp_path, scenario)
    assert result.returncode == 0, result.stderr
    assert marker.read_text() == "ok"
    assert "timed out after 1 s" in result.stderr
    assert "ASYNC-93c" not in json.dumps(bodies[1])
    assert "ASYNC-93c" in json.dumps(bodies[2])


def test_prompt_hook_asks_the_model_and_blocks_the_stop(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    settings(
        project,
        {
            "hooks": {
                "Stop": [
                    {
                        "hooks": [
                            {
                                "type": "prompt",
                                "prompt": "Did the assistant run the tests? $ARGUMENTS",
                            }
                        ]
                    }
                ]
            }
        },
    )
    scenario = Scenario(
        turns=(
            turn("All done."),
            turn('{"ok": false, "reason": "run the tests before stopping"}'),
            turn("Ran them; done now."),
            turn('{"ok": true}'),
        )
    )
    result, bodies = run(project, tmp_path, scenario, "--output-format", "json")
    assert result.returncode == 0, result.stderr
    assert result.json()["result"] == "Ran them; done now."
    judge = bodies[1]
    assert "Did the assistant run the tests?" in json.dumps(judge["messages"])
    assert '"last_assistant_message": "All done."' in judge["messages"][0]["content"][0]["text"]
    assert "run the tests before stopping" in json.dumps(bodies[2]["messages"][-1])


def test_http_hook_posts_the_input_and_its_answer_counts(tmp_path: Path) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["Content-Length"])
            received.append(
                {
                    "body": json.loads(self.rfile.read(length)),
                    "auth": self.headers.get("Authorization"),
                }
            )
            answer = json.dumps(
                {
                    "hookSpecificOutput": {
                        "hookEventName": "PreToolUse",
                        "permissionDecision": "deny",
                        "permissionDecisionReason": "http says no",
                    }
                }
            )
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(answer.encode())

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        project = make_project(tmp_path)
        url = f"http://127.0.0.1:{server.server_port}/hook"
        settings(
            project,
            {
                "allowedHttpHookUrls": ["http://127.0.0.1:*"],
                "hooks": {
                    "PreToolUse": [
                        {
                            "matcher": "Bash",
                            "hooks": [
                                {
                                    "type": "http",
                                    "url": url,
                                    "headers": {"Authorization": "Bearer $HOOK_TOKEN $SECRET"},
                                    "allowedEnvVars": ["HOOK_TOKEN"],
                                }
                            ],
                        }
                    ]
                },
            },
        )
        scenario = Scenario(turns=(turn(tool_use("Bash", {"command": "echo hi"})), turn("ok")))
        (result,), bodies = run_all(
            project,
            tmp_path,
            scenario,
            [["-p", "go"]],
            extra_env={"HOOK_TOKEN": "t0k", "SECRET": "s3cret"},
        )
    finally:
        server.shutdown()
    assert result.returncode == 0, result.stderr
    assert received, result.stderr
    (call,) = received
    assert call["body"]["tool_input"] == {"command": "echo hi"}
    assert call["auth"] == "Bearer t0k"  # only the allowed variable is interpolated
    assert "http says no" in text_of(last_tool_result(bodies[1])["content"])


def test_disable_bypass_permissions_mode_refuses_bypass(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    settings(project, {"permissions": {"disableBypassPermissionsMode": "disable"}})
    scenario = Scenario(
        turns=(turn(tool_use("Write", {"file_path": "owned.txt", "content": "x"})), turn("ok"))
    )
    for flags in (["--permission-mode", "bypassPermissions"], ["--dangerously-skip-permissions"]):
        result, bodies = run(project, tmp_path, scenario, *flags)
        assert result.returncode == 1
        assert "bypassPermissions mode is disabled" in result.stderr
        assert "Traceback" not in result.stderr
        assert bodies == []
    assert not (project / "owned.txt").exists()


def test_managed_settings_take_precedence(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    managed = tmp_path / "managed"
    managed.mkdir()
    (managed / "managed-settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Bash(echo:*)"]}, "allowManagedHooksOnly": True})
    )
    marker = project / "hook-ran"
    settings(
        project,
        {
            "permissions": {"allow": ["Bash"]},
            "hooks": {
                "PreToolUse": [
                    {"hooks": [{"type": "command", "command": f"touch {shlex.quote(str(marker))}"}]}
                ]
            },
        },
    )
    scenario = Scenario(turns=(turn(tool_use("Bash", {"command": "echo hi"})), turn("ok")))
    (result,), bodies = run_all(
        project,
        tmp_path,
        scenario,
        [["-p", "go"]],
        extra_env={"CODELOOP_MANAGED_DIR": str(managed)},
    )
    assert result.returncode == 0, result.stderr
    denied = last_tool_result(bodies[1])
    assert denied["is_error"] and "managed-settings.json" in text_of(denied["content"])
    assert not marker.exists()  # only managed hooks run


def test_unsupported_settings_keys_are_named(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    settings(
        project,
        {"theme": "dark", "availableModels": ["sonnet"], "permissions": {"allow": ["Read"]}},
    )
    scenario = Scenario(turns=(turn("ok"),))
    quiet, _ = run(project, tmp_path, scenario)
    assert "availableModels" in quiet.stderr  # ignoring it weakens an organization's policy
    assert "theme" not in quiet.stderr
    verbose, _ = run(project, tmp_path, scenario, "--verbose")
    assert "theme" in verbose.stderr and verbose.stderr.count("availableModels") == 1


def test_agent_hook_investigates_with_read_only_tools_and_judge_calls_are_paid_for(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    settings(
        project,
        {
            "hooks": {
                "Stop": [
                    {
                        "hooks": [
                            {
                                "type": "agent",
                                "prompt": "Verify docs/rules.md is followed. $ARGUMENTS",
                            }
                        ]
                    }
                ]
            }
        },
    )
    scenario = Scenario(
        turns=(
            turn("Done."),
            turn(tool_use("Read", {"file_path": "docs/rules.md"})),  # the verifier looks
            turn('{"ok": false, "reason": "run make check first"}'),
            turn("Ran make check; done."),
            turn('{"ok": true}'),
        )
    )
    result, bodies = run(project, tmp_path, scenario, "--output-format", "json")
    assert result.returncode == 0, result.stderr
    assert result.json()["result"] == "Ran make check; done."
    verifier = bodies[1]
    assert "You verify a condition for a hook" in json.dumps(verifier["system"])
    assert sorted(t["name"] for t in verifier["tools"]) == ["Glob", "Grep", "Read"]
    assert "Verify docs/rules.md is followed." in json.dumps(verifier["messages"])
    assert "run make check first" in json.dumps(bodies[3]["messages"][-1])
    # Every request of the run, the verifier's included, is in the run's usage.
    assert result.json()["usage"]["input_tokens"] == 100 * len(bodies)
