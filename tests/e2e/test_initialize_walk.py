"""Every part of the Agent SDK's `initialize` request (the TypeScript SDK sends much of a
session's configuration there) is taken, and shows, or is named on stderr as not supported:
none is silently ignored. A table, one row per part, through the real CLI speaking the
protocol against the fake server; a part the SDK sends without a row fails the first test.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from codeloop.testing.fake_server import FakeModelServer, RecordedRequest
from codeloop.testing.scenario import Turn, tool_use, turn
from tests.e2e.test_mid_turn_messages import Lines
from tests.e2e.test_sdk_protocol import FLAGS, send, start

# The parts the TypeScript Agent SDK (0.3) may put in initialize, each when its user sets it.
SDK_PARTS = (
    "hooks", "sdkMcpServers", "sdkMcpServerConfigs", "sdkMcpServerManifests", "jsonSchema",
    "systemPrompt", "appendSystemPrompt", "planModeInstructions", "systemPromptSnapshot",
    "appendSubagentSystemPrompt", "toolAliases", "codeRunningMcpTools", "excludeDynamicSections",
    "agents", "title", "skills", "webSearchIsolationExemptMcpServers", "promptSuggestions",
    "agentProgressSummaries", "forwardSubagentText", "supportedDialogKinds",
    "perTaskStopAffordance", "rapidFollowupPreempt", "forwardNestedSubagentToolCalls",
    "offersBypassSwitchBack", "keepsBypassHeld", "workspaceTrust", "plugins", "managedSettings",
    "settings", "disallowedTools", "mcpServers",
)  # fmt: skip
MCP_SERVER = {"command": sys.executable, "args": ["-m", "codeloop.testing.mcp_server"]}
PLUGIN_FILES = {
    "kit/.claude-plugin/plugin.json": json.dumps({"name": "kit", "version": "1.0.0"}),
    "kit/skills/check/SKILL.md": "---\nname: check\ndescription: Checks\n---\nCHECK\n",
}


@dataclass(frozen=True)
class Part:
    value: Any
    applied: str | None = None  # the answer confirms it under this key
    sent: str | None = None  # the first request to the model carries this text
    warned: bool = False  # stderr names it: not supported
    elsewhere: str | None = None  # taken by another way, shown by the test named here
    withheld: str | None = None  # the first request to the model offers no tool of this name
    answer: tuple[Turn, ...] = (turn("Fine."),)  # what the model answers the prompt with


PARTS: dict[str, Part] = {
    "systemPrompt": Part(["WALK-SYSTEM"], sent="WALK-SYSTEM"),
    "appendSystemPrompt": Part("WALK-APPEND", sent="WALK-APPEND"),
    "settings": Part({"effortLevel": "high"}, applied="settings_applied", sent='"thinking"'),
    "disallowedTools": Part(["Bash"], applied="disallowed_tools_applied", withheld="Bash"),
    "plugins": Part([{"type": "local", "path": "kit"}], applied="plugins_applied", sent="check"),
    "mcpServers": Part({"py": MCP_SERVER}, applied="mcp_servers_applied", sent="mcp__py__echo"),
    "jsonSchema": Part(
        {"type": "object", "properties": {}},
        sent="StructuredOutput",
        answer=(turn(tool_use("StructuredOutput", {})), turn("Fine.")),
    ),
    "agents": Part({"tidier": {"description": "Tidies code", "prompt": "T"}}, sent="tidier"),
    "hooks": Part(None, elsewhere="test_sdk_protocol: the hook_callback requests"),
    "sdkMcpServers": Part(None, elsewhere="tests/sdk: an SDK MCP server's tool is called"),
    "sdkMcpServerConfigs": Part(None, elsewhere="sent with sdkMcpServers, read with them"),
    "sdkMcpServerManifests": Part(None, elsewhere="sent with sdkMcpServers, read with them"),
    "skills": Part(None, elsewhere="the SDK passes --allowedTools Skill(name) with it"),
    # issue 38 part 1 (another branch) acts on these two
    "promptSuggestions": Part(
        None, elsewhere="test_side_requests: test_sdk_initialize_asks_for_progress_and_suggestions"
    ),
    "agentProgressSummaries": Part(
        None, elsewhere="test_side_requests: test_sdk_initialize_asks_for_progress_and_suggestions"
    ),
    **{
        name: Part(True, warned=True)
        for name in (
            "planModeInstructions",
            "systemPromptSnapshot",
            "appendSubagentSystemPrompt",
            "toolAliases",
            "codeRunningMcpTools",
            "excludeDynamicSections",
            "title",
            "webSearchIsolationExemptMcpServers",
            "forwardSubagentText",
            "supportedDialogKinds",
            "perTaskStopAffordance",
            "rapidFollowupPreempt",
            "forwardNestedSubagentToolCalls",
            "offersBypassSwitchBack",
            "keepsBypassHeld",
            "workspaceTrust",
            "managedSettings",
        )
    },
}


def test_every_part_has_a_row() -> None:
    assert set(SDK_PARTS) == set(PARTS)


def initialize(
    tmp_path: Path, name: str, part: Part
) -> tuple[dict[str, Any], str, RecordedRequest]:
    """A session initialized with the part, and one prompt: the answer, stderr, the request."""
    for path, text in PLUGIN_FILES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    with FakeModelServer(list(part.answer)) as server:
        proc = start(server, tmp_path, tmp_path, *FLAGS)
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        lines = Lines(proc.stdout)
        request = {"subtype": "initialize", name: part.value}
        send(proc.stdin, {"type": "control_request", "request_id": "init", "request": request})
        answer = lines.until(lambda f: f["type"] == "control_response")["response"]
        send(proc.stdin, {"type": "user", "message": {"role": "user", "content": "Go."}})
        lines.until(lambda f: f["type"] == "result")
        proc.stdin.close()
        lines.rest()
        stderr = proc.stderr.read()
        assert proc.wait(timeout=60) == 0, stderr
        first = server.requests[0]
    return answer, stderr, first


@pytest.mark.parametrize("name", sorted(n for n, part in PARTS.items() if part.elsewhere is None))
def test_the_part_is_taken_and_shows_or_is_named_as_not_supported(
    tmp_path: Path, name: str
) -> None:
    part = PARTS[name]
    answer, stderr, request = initialize(tmp_path, name, part)
    assert answer["subtype"] == "success", answer
    named = f"initialize: {name} is not supported" in stderr
    assert named == part.warned, stderr
    if part.applied is not None:
        assert answer["response"].get(part.applied) is True, answer
    if part.sent is not None:
        assert part.sent in json.dumps(request.body), f"{name} did not reach the model"
    if part.withheld is not None:
        offered = [tool["name"] for tool in request.body["tools"]]
        assert part.withheld not in offered and "Read" in offered, offered
    assert part.warned or part.applied or part.sent, "a row must say what shows"
