"""The official Python SDK's own end-to-end tests (its repository's e2e-tests/: permissions,
hooks, hook events, SDK MCP tools, dynamic control, partial messages, error results,
structured output, agents and settings), run against codeloop.

Those files are not in the SDK's PyPI release and CI reaches no repository, so they are
ported here: the same prompts, options and assertions, with `cli_path` pointing at codeloop
and a scripted model taught their prompts (each prompt keys a conversation of the fake
server, which answers as a capable model would: with the tool call the prompt asks for).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.needs import module

module("claude_agent_sdk", "needs the sdk extra (pip install -e '.[dev,sdk]')")

from claude_agent_sdk import (  # noqa: E402
    AgentDefinition,
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    ResultError,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    create_sdk_mcp_server,
    query,
    tool,
)

from codeloop.testing.fake_server import FakeModelServer  # noqa: E402
from codeloop.testing.scenario import Scenario, Turn, fault, thinking, tool_use, turn  # noqa: E402
from tests.sdk.drive import CODELOOP, sdk_env  # noqa: E402

Taught = Mapping[str, list[Turn]]


class Model:
    """A fake server whose conversations are keyed by the prompts they answer."""

    def __init__(self, taught: Taught) -> None:
        self.server = FakeModelServer({k: Scenario(turns=tuple(t)) for k, t in taught.items()})

    def __enter__(self) -> FakeModelServer:
        return self.server.start()

    def __exit__(self, *exc: object) -> None:
        self.server.close()


def sdk(server: FakeModelServer, home: Path, **fields: Any) -> ClaudeAgentOptions:
    env = {**sdk_env(server, home), **fields.pop("env", {})}
    cwd = fields.pop("cwd", home / "work")
    Path(cwd).mkdir(parents=True, exist_ok=True)
    return ClaudeAgentOptions(cli_path=str(CODELOOP), env=env, cwd=str(cwd), **fields)


async def respond(client: ClaudeSDKClient, prompt: str) -> list[Any]:
    await client.query(prompt)
    return [message async for message in client.receive_response()]


# --- test_tool_permissions.py -------------------------------------------------------------


async def test_permission_callback_gets_called(tmp_path: Path) -> None:
    test_path = tmp_path / f"sdk_permission_test_{uuid.uuid4().hex[:8]}.txt"
    prompt = f"Run the command: touch {test_path}"
    calls: list[str] = []

    async def callback(name: str, data: dict[str, Any], context: Any) -> PermissionResultAllow:
        calls.append(name)
        return PermissionResultAllow()

    taught = {prompt: [turn(tool_use("Bash", {"command": f"touch {test_path}"})), turn("Done.")]}
    with Model(taught) as server:
        async with ClaudeSDKClient(sdk(server, tmp_path, can_use_tool=callback)) as client:
            await respond(client, prompt)
    assert "Bash" in calls
    assert test_path.exists()  # allowed, so it ran


@pytest.mark.parametrize("streamed", [True, False], ids=["async-iterable", "string"])
async def test_query_with_only_can_use_tool(tmp_path: Path, streamed: bool) -> None:
    home = tmp_path / "home"
    home.mkdir()
    test_path = home / f".agent_sdk_permission_e2e_{uuid.uuid4().hex[:8]}.txt"
    prompt_text = (
        f"Use the Write tool to create the file {test_path} containing exactly "
        "the text hello. Do not use any other tool."
    )
    calls: list[str] = []

    async def callback(name: str, data: dict[str, Any], context: Any) -> PermissionResultAllow:
        calls.append(name)
        return PermissionResultAllow()

    async def stream() -> Any:
        yield {"type": "user", "message": {"role": "user", "content": prompt_text}}

    write = tool_use("Write", {"file_path": str(test_path), "content": "hello"})
    with Model({prompt_text: [turn(write), turn("Created.")]}) as server:
        options = sdk(
            server, tmp_path, can_use_tool=callback, disallowed_tools=["Bash"], max_turns=3
        )
        prompt = stream() if streamed else prompt_text
        results = [m async for m in query(prompt=prompt, options=options)]
    result = results[-1]
    assert isinstance(result, ResultMessage) and not result.is_error
    assert "Write" in calls
    assert test_path.read_text() == "hello"  # outside the workspace: only the callback allowed it


# --- test_hooks.py --------------------------------------------------------------------------


async def test_hook_with_permission_decision_and_reason(tmp_path: Path) -> None:
    invocations: list[str] = []

    async def test_hook(data: Any, tool_use_id: str | None, context: Any) -> Any:
        invocations.append(data.get("tool_name", ""))
        if data.get("tool_name") == "Bash":
            return {
                "reason": "Bash commands are blocked in this test for safety",
                "systemMessage": "⚠️ Command blocked by hook",
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "Security policy: Bash blocked",
                },
            }
        return {}

    prompt = "Run this bash command: echo 'hello'"
    taught = {prompt: [turn(tool_use("Bash", {"command": "echo 'hello'"})), turn("Blocked.")]}
    with Model(taught) as server:
        options = sdk(
            server,
            tmp_path,
            allowed_tools=["Bash", "Write"],
            hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[test_hook])]},
        )
        async with ClaudeSDKClient(options) as client:
            await respond(client, prompt)
    assert "Bash" in invocations
    results = server.requests[1].body["messages"][-1]["content"]
    assert "Security policy: Bash blocked" in json.dumps(results)


async def test_hook_with_continue_and_stop_reason(tmp_path: Path) -> None:
    invocations: list[str] = []

    async def post_tool_hook(data: Any, tool_use_id: str | None, context: Any) -> Any:
        invocations.append(data.get("tool_name", ""))
        return {
            "continue_": False,
            "stopReason": "Execution halted by test hook for validation",
            "reason": "Testing continue and stopReason fields",
            "systemMessage": "🛑 Test hook stopped execution",
        }

    prompt = "Run: echo 'test message'"
    taught = {prompt: [turn(tool_use("Bash", {"command": "echo 'test message'"})), turn("x")]}
    with Model(taught) as server:
        options = sdk(
            server,
            tmp_path,
            allowed_tools=["Bash"],
            hooks={"PostToolUse": [HookMatcher(matcher="Bash", hooks=[post_tool_hook])]},
        )
        async with ClaudeSDKClient(options) as client:
            messages = await respond(client, prompt)
    assert "Bash" in invocations
    assert len(server.requests) == 1  # `continue: false` ended the run before the next call
    assert isinstance(messages[-1], ResultMessage)


@pytest.mark.parametrize("event", ["PreToolUse", "PostToolUse"])
async def test_hook_with_additional_context(tmp_path: Path, event: str) -> None:
    seen: list[dict[str, Any]] = []

    async def context_hook(data: Any, tool_use_id: str | None, context: Any) -> Any:
        seen.append({"tool_name": data.get("tool_name"), "tool_use_id": data.get("tool_use_id")})
        specific: dict[str, Any] = {
            "hookEventName": event,
            "additionalContext": "This command is running in a test environment",
        }
        if event == "PreToolUse":
            specific |= {"permissionDecision": "allow", "permissionDecisionReason": "Approved"}
        return {
            "systemMessage": "Additional context provided by hook",
            "hookSpecificOutput": specific,
        }

    prompt = "Run: echo 'test additional context'"
    taught = {prompt: [turn(tool_use("Bash", {"command": "echo hi"})), turn("Done.")]}
    with Model(taught) as server:
        hooks = {event: [HookMatcher(matcher="Bash", hooks=[context_hook])]}
        options = sdk(server, tmp_path, allowed_tools=["Bash"], hooks=hooks)
        async with ClaudeSDKClient(options) as client:
            await respond(client, prompt)
    assert seen and seen[0]["tool_use_id"] is not None
    assert "running in a test environment" in json.dumps(server.requests[1].body["messages"])


# --- test_hook_events.py ------------------------------------------------------------------


async def test_notification_and_multiple_hooks_together(tmp_path: Path) -> None:
    events: list[dict[str, Any]] = []

    async def track(data: Any, tool_use_id: str | None, context: Any) -> Any:
        events.append({"event": data.get("hook_event_name"), "type": data.get("notification_type")})
        return {}

    prompt = "Run: echo 'multi-hook test'"
    taught = {prompt: [turn(tool_use("Bash", {"command": "echo 'multi-hook test'"})), turn("ok")]}
    with Model(taught) as server:
        hooks = {
            "Notification": [HookMatcher(hooks=[track])],
            "PreToolUse": [HookMatcher(matcher="Bash", hooks=[track])],
            "PostToolUse": [HookMatcher(matcher="Bash", hooks=[track])],
        }
        options = sdk(server, tmp_path, allowed_tools=["Bash"], hooks=hooks)
        async with ClaudeSDKClient(options) as client:
            await respond(client, prompt)
    names = [e["event"] for e in events]
    assert "PreToolUse" in names and "PostToolUse" in names
    for notified in (e for e in events if e["event"] == "Notification"):
        assert notified["type"] is not None


# --- test_sdk_mcp_tools.py ----------------------------------------------------------------


def _echo_and_greet(executions: list[str]) -> list[Any]:
    @tool("echo", "Echo back the input text", {"text": str})
    async def echo_tool(args: dict[str, Any]) -> dict[str, Any]:
        executions.append("echo")
        return {"content": [{"type": "text", "text": f"Echo: {args['text']}"}]}

    @tool("greet", "Greet a person by name", {"name": str})
    async def greet_tool(args: dict[str, Any]) -> dict[str, Any]:
        executions.append("greet")
        return {"content": [{"type": "text", "text": f"Hello, {args['name']}!"}]}

    return [echo_tool, greet_tool]


@pytest.mark.parametrize(
    ("server_name", "allowed", "disallowed", "expected"),
    [
        ("test", ["mcp__test__echo"], [], ["echo"]),
        ("test", ["mcp__test__greet"], ["mcp__test__echo"], ["greet"]),
        ("multi", ["mcp__multi__echo", "mcp__multi__greet"], [], ["echo", "greet"]),
        ("noperm", [], [], []),
    ],
    ids=["execution", "permission-enforcement", "multiple-tools", "without-permissions"],
)
async def test_sdk_mcp_tools(
    tmp_path: Path, server_name: str, allowed: list[str], disallowed: list[str], expected: list[str]
) -> None:
    executions: list[str] = []
    calc = create_sdk_mcp_server(
        name=server_name, version="1.0.0", tools=_echo_and_greet(executions)
    )
    prompt = f"Call the mcp__{server_name} tools: greet 'Alice', then echo 'test'"
    calls = [
        turn(tool_use(f"mcp__{server_name}__greet", {"name": "Alice"})),
        turn(tool_use(f"mcp__{server_name}__echo", {"text": "test"})),
        turn("Done."),
    ]
    with Model({prompt: calls}) as server:
        options = sdk(
            server,
            tmp_path,
            mcp_servers={server_name: calc},
            allowed_tools=allowed,
            disallowed_tools=disallowed,
        )
        async with ClaudeSDKClient(options) as client:
            await respond(client, prompt)
    assert sorted(executions) == sorted(expected)


# --- test_dynamic_control.py --------------------------------------------------------------


async def test_set_permission_mode_set_model_and_interrupt(tmp_path: Path) -> None:
    taught = {
        "What is 2+2?": [turn("4")],
        "What is 3+3?": [turn("6")],
        "What is 1+1?": [turn("2")],
        "What is 5+5?": [turn("10")],
        "What is 7+7?": [turn("14")],
        "Count from 1 to 100 slowly.": [
            turn(" ".join(map(str, range(1, 101))), chunk_chars=3).model_copy(
                update={"delay": 0.01}
            )
        ],
        "Still there?": [turn("Yes.")],
    }
    with Model(taught) as server:
        async with ClaudeSDKClient(sdk(server, tmp_path, permission_mode="default")) as client:
            await client.set_permission_mode("acceptEdits")
            assert (await respond(client, "What is 2+2?"))[-1].result == "4"
            await client.set_permission_mode("default")
            assert (await respond(client, "What is 3+3?"))[-1].result == "6"
            await respond(client, "What is 1+1?")
            await client.set_model("claude-haiku-4-5")
            await respond(client, "What is 5+5?")
            await client.set_model(None)
            await respond(client, "What is 7+7?")
            await client.query("Count from 1 to 100 slowly.")
            await client.interrupt()
            [m async for m in client.receive_response()]
            assert (await respond(client, "Still there?"))[-1].result == "Yes."
    models = [r.body["model"] for r in server.requests if r.conversation != "Still there?"]
    assert models[3] == "claude-haiku-4-5" and models[4] == models[2] == "claude-sonnet-5-5"


# --- test_include_partial_messages.py -----------------------------------------------------


async def test_include_partial_messages_stream_events(tmp_path: Path) -> None:
    prompt = "Think of three jokes, then tell one"
    answer = turn(thinking("Three jokes: 1, 2, 3. Tell the second.", "sig"), "Why did 2 win?")
    with Model({prompt: [answer.model_copy(update={"chunk_chars": 5})]}) as server:
        options = sdk(
            server,
            tmp_path,
            include_partial_messages=True,
            max_turns=2,
            env={"MAX_THINKING_TOKENS": "8000"},
        )
        async with ClaudeSDKClient(options) as client:
            collected = await respond(client, prompt)
    assert isinstance(collected[0], SystemMessage) and collected[0].subtype == "init"
    events = [m.event.get("type") for m in collected if isinstance(m, StreamEvent)]
    for kind in ("message_start", "content_block_start", "content_block_delta"):
        assert kind in events
    assert "content_block_stop" in events and "message_stop" in events
    thinking_deltas = [
        m.event["delta"]["thinking"]
        for m in collected
        if isinstance(m, StreamEvent)
        and m.event.get("type") == "content_block_delta"
        and m.event["delta"].get("type") == "thinking_delta"
    ]
    assert len(thinking_deltas) > 1 and "2" in "".join(thinking_deltas)
    assistants = [m for m in collected if isinstance(m, AssistantMessage)]
    assert any(isinstance(b, ThinkingBlock) for m in assistants for b in m.content)
    assert any(isinstance(b, TextBlock) for m in assistants for b in m.content)
    assert isinstance(collected[-1], ResultMessage) and collected[-1].subtype == "success"


async def test_partial_messages_disabled_by_default(tmp_path: Path) -> None:
    with Model({"Say hello": [turn("Hello!")]}) as server:
        async with ClaudeSDKClient(sdk(server, tmp_path, max_turns=2)) as client:
            collected = await respond(client, "Say hello")
    assert not [m for m in collected if isinstance(m, StreamEvent)]
    kinds = {type(m) for m in collected}
    assert {SystemMessage, AssistantMessage, ResultMessage} <= kinds


# --- test_error_results.py ----------------------------------------------------------------


async def test_query_api_error_raises_result_error_with_payload(tmp_path: Path) -> None:
    bad_model = "claude-nonexistent-model-for-sdk-e2e"
    gone = fault("not_found", message=f"model: {bad_model}")
    with Model({"Reply with: pong": [turn("pong", faults=[gone])]}) as server:
        options = sdk(server, tmp_path, model=bad_model, max_turns=1)
        result: ResultMessage | None = None
        with pytest.raises(Exception) as caught:
            async for message in query(prompt="Reply with: pong", options=options):
                if isinstance(message, ResultMessage):
                    result = message
    exc = caught.value
    assert result is not None and result.is_error is True
    assert isinstance(exc, ResultError) and exc.exit_code is not None
    assert "error result: success" not in str(exc)
    assert result.result and result.result.strip() in str(exc)
    assert (exc.subtype, exc.result, exc.session_id) == (
        "success",
        result.result,
        result.session_id,
    )
    assert exc.api_error_status == result.api_error_status == 404


# --- test_structured_output.py ------------------------------------------------------------


async def test_structured_output_with_tools_and_nesting(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    for name in ("a.py", "b.py", "test_a.py"):
        (work / "src" / name).write_text("x = 1\n")
    schema = {
        "type": "object",
        "properties": {
            "file_count": {"type": "number"},
            "has_tests": {"type": "boolean"},
            "test_file_count": {"type": "number"},
        },
        "required": ["file_count", "has_tests"],
    }
    prompt = (
        "Count how many Python files are in src/ and check if there are any test files. "
        "Use tools to explore the filesystem."
    )
    answer = {"file_count": 3, "has_tests": True, "test_file_count": 1}
    taught = {
        prompt: [
            turn(tool_use("Glob", {"pattern": "src/*.py"})),
            turn(tool_use("StructuredOutput", answer)),
            turn("Done."),
        ]
    }
    with Model(taught) as server:
        options = sdk(
            server,
            tmp_path,
            output_format={"type": "json_schema", "schema": schema},
            permission_mode="acceptEdits",
            cwd=work,
        )
        messages = [m async for m in query(prompt=prompt, options=options)]
    result = messages[-1]
    assert isinstance(result, ResultMessage) and not result.is_error
    assert result.subtype == "success" and result.structured_output == answer
    assert "test_a.py" in json.dumps(server.requests[1].body["messages"])  # Glob really ran


# --- test_agents_and_settings.py ----------------------------------------------------------


def _large_agents(count: int = 20, kb: int = 13) -> dict[str, AgentDefinition]:
    return {
        f"large-agent-{i}": AgentDefinition(
            description=f"Large test agent #{i} for stress testing",
            prompt=f"You are test agent #{i}. " + "x" * (kb * 1024),
        )
        for i in range(count)
    }


async def test_agent_definitions_via_initialize(tmp_path: Path) -> None:
    agents = {
        "test-agent": AgentDefinition(
            description="A test agent for verification",
            prompt="You are a test agent. Always respond with 'Test agent activated'",
            tools=["Read"],
            model="sonnet",
        ),
        **_large_agents(),
    }
    assert len(json.dumps({k: v.prompt for k, v in agents.items()})) > 250_000
    with Model({"What is 2 + 2?": [turn("4")]}) as server:
        options = sdk(server, tmp_path, agents=agents, max_turns=1)
        messages = [m async for m in query(prompt="What is 2 + 2?", options=options)]
    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    assert set(agents) <= set(init.data["agents"])


async def test_filesystem_agent_loading(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".claude" / "agents").mkdir(parents=True)
    (project / ".claude" / "agents" / "fs-test-agent.md").write_text(
        "---\nname: fs-test-agent\ndescription: A filesystem test agent for SDK testing\n"
        "tools: Read\n---\n\nYou are a simple test agent.\n"
    )
    with Model({"Say hello in exactly 3 words": [turn("Hello there, friend.")]}) as server:
        options = sdk(server, tmp_path, setting_sources=["project"], cwd=project, max_turns=1)
        async with ClaudeSDKClient(options) as client:
            messages = await respond(client, "Say hello in exactly 3 words")
    kinds = [type(m).__name__ for m in messages]
    assert {"SystemMessage", "AssistantMessage", "ResultMessage"} <= set(kinds)
    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    assert "fs-test-agent" in init.data["agents"]


@pytest.mark.parametrize(
    ("sources", "style_seen", "command_seen"),
    [(None, True, True), (["user"], False, False), (["user", "project", "local"], True, True)],
    ids=["default", "user-only", "project-included"],
)
async def test_setting_sources(
    tmp_path: Path, sources: list[str] | None, style_seen: bool, command_seen: bool
) -> None:
    project = tmp_path / "project"
    claude = project / ".claude"
    (claude / "commands").mkdir(parents=True)
    (claude / "output-styles").mkdir()
    (claude / "settings.local.json").write_text('{"outputStyle": "local-test-style"}')
    (claude / "output-styles" / "local-test-style.md").write_text(
        "---\nname: local-test-style\ndescription: terse\n---\n\nAnswer tersely.\n"
    )
    (claude / "commands" / "testcmd.md").write_text(
        "---\ndescription: Test command\n---\n\nThis is a test command.\n"
    )
    with Model({"What is 2 + 2?": [turn("4")]}) as server:
        fields: dict[str, Any] = {"cwd": project, "max_turns": 1}
        if sources is not None:
            fields["setting_sources"] = sources
        async with ClaudeSDKClient(sdk(server, tmp_path, **fields)) as client:
            messages = await respond(client, "What is 2 + 2?")
    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    assert (init.data["output_style"] == "local-test-style") is style_seen
    assert ("testcmd" in init.data["slash_commands"]) is command_seen
