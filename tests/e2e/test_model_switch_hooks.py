"""PreModelSwitch and PostModelSwitch hooks, with real hook scripts reading stdin JSON: a
switch asked for through the Python API (the SDK protocol's set_model underneath) and an
automatic one, the fallback model's through the real CLI."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from codeloop import Client, Options
from codeloop.errors import UsageError
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, fault, turn
from tests.e2e.cli import provider_env, run_cli
from tests.sdk.drive import sdk_env, sent_text

LOGGER = """import json, os, sys
event = json.load(sys.stdin)
with open(os.environ["HOOK_LOG"], "a") as log:
    log.write(json.dumps(event) + "\\n")
"""
# Refuses a switch to an Opus model: exit 2, the reason on stderr.
REFUSE_OPUS = """#!/bin/bash
input=$(cat)
case "$input" in *'"to_model": "claude-opus'*) echo "Opus is too dear here" >&2; exit 2;; esac
exit 0
"""
# Plain stdout of a PostModelSwitch hook is context for the model.
ANNOUNCE = """#!/bin/bash
to=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["to_model"])')
echo "Model switch noted: now answering as $to."
"""


def _hooks(tmp_path: Path) -> dict[str, Any]:
    logger, refuse, announce = (tmp_path / n for n in ("log.py", "refuse.sh", "announce.sh"))
    logger.write_text(LOGGER)
    refuse.write_text(REFUSE_OPUS)
    announce.write_text(ANNOUNCE)
    for script in (refuse, announce):
        script.chmod(0o755)
    log = {"type": "command", "command": f"python3 {logger}"}
    return {
        "PreModelSwitch": [
            {"hooks": [log]},
            {"matcher": "claude-opus.*", "hooks": [{"type": "command", "command": str(refuse)}]},
        ],
        "PostModelSwitch": [{"hooks": [log, {"type": "command", "command": str(announce)}]}],
    }


def _logged(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "hooks.log"
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line) for line in lines]


async def test_a_requested_switch_passes_the_hooks_and_the_model_is_told(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    scenario = Scenario(turns=(turn("Sonnet here."), turn("Haiku here.")))
    with FakeModelServer(scenario) as server:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOOK_LOG": str(tmp_path / "hooks.log"),
            **sdk_env(server, tmp_path),
        }
        settings = json.dumps({"hooks": _hooks(tmp_path)})
        async with Client(Options(cwd=work, env=env, settings=settings)) as client:
            await client.query("Who are you?")
            [m async for m in client.receive_response()]
            with pytest.raises(UsageError, match="Opus is too dear here"):
                await client.set_model("opus")
            await client.set_model("haiku")
            await client.query("And now?")
            [m async for m in client.receive_response()]
    first, second = server.requests
    assert first.body["model"] == "claude-sonnet-5-5"
    assert second.body["model"].startswith("claude-haiku")
    assert "Model switch noted: now answering as claude-haiku" in sent_text(second)
    assert "Model switch noted" not in sent_text(first)
    logged = _logged(tmp_path)
    events = [(e["hook_event_name"], e["to_model"]) for e in logged]
    assert [name for name, _ in events] == ["PreModelSwitch", "PreModelSwitch", "PostModelSwitch"]
    assert events[0][1].startswith("claude-opus") and events[1][1].startswith("claude-haiku")
    for event in logged:
        assert event["from_model"] == "claude-sonnet-5-5"
        assert event["session_id"] and event["cwd"] == str(work)
        assert event["permission_mode"] == "default" and "transcript_path" in event


def test_a_hook_that_times_out_refuses_the_switch(tmp_path: Path) -> None:
    """Claude Code's rule: a PreModelSwitch hook cancelled at its timeout blocks the switch."""
    work = tmp_path / "work"
    work.mkdir()
    slow = {"type": "command", "command": "sleep 30", "timeout": 1}
    settings = json.dumps({"hooks": {"PreModelSwitch": [{"hooks": [slow]}]}})
    with FakeModelServer([turn("Never asked.")]) as server:
        run = run_cli(
            ["-p", "/model haiku", "--settings", settings, "--model", "claude-sonnet-4-5"],
            cwd=work,
            env=provider_env(server, "anthropic", tmp_path),
        )
        requests = list(server.requests)
    assert run.returncode == 1
    assert "switch to claude-haiku" in run.stderr and "timed out" in run.stderr
    assert requests == []


def test_the_fallback_model_is_told_to_the_post_switch_hooks(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    storm = fault("overloaded", times=50, model="claude-sonnet-4-5")
    settings = json.dumps({"hooks": _hooks(tmp_path)})
    with FakeModelServer(Scenario(turns=(turn("Haiku took over.", faults=[storm]),))) as server:
        run = run_cli(
            [
                *("-p", "go", "--model", "claude-sonnet-4-5"),
                *("--fallback-model", "claude-haiku-4-5", "--settings", settings),
                *("--output-format", "json"),
            ],
            cwd=work,
            env=provider_env(server, "anthropic", tmp_path)
            | {"HOOK_LOG": str(tmp_path / "hooks.log")},
        )
        requests = list(server.requests)
    assert run.returncode == 0, run.stderr
    assert run.json()["result"] == "Haiku took over."
    assert requests[-1].body["model"] == "claude-haiku-4-5"
    assert "Model switch noted: now answering as claude-haiku-4-5" in json.dumps(
        requests[-1].body["messages"]
    )
    # Automatic: the PreModelSwitch hooks are not asked, the PostModelSwitch ones are told.
    logged = _logged(tmp_path)
    assert [e["hook_event_name"] for e in logged] == ["PostModelSwitch"]
    assert logged[0]["from_model"] == "claude-sonnet-4-5"
    assert logged[0]["to_model"] == "claude-haiku-4-5"
