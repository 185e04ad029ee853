"""The official Claude Agent SDK for Python drives codeloop as its CLI (`cli_path`), with the
fake model server behind it: every scenario goes through the SDK's own transport, message
parser and control protocol, and is checked from both ends (what the SDK's caller sees, what
the model was sent)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.needs import module

module("claude_agent_sdk", "needs the sdk extra (pip install -e '.[dev,sdk]')")

from claude_agent_sdk import (  # noqa: E402
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolPermissionContext,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)

from codeloop.testing.fake_server import FakeModelServer  # noqa: E402
from codeloop.testing.scenario import Scenario, tool_use, turn  # noqa: E402
from tests.sdk.drive import CODELOOP, result_text, sdk_env, sent_text, tool_results  # noqa: E402


def options(server: FakeModelServer, tmp_path: Path, **fields: Any) -> ClaudeAgentOptions:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return ClaudeAgentOptions(
        cli_path=str(CODELOOP), env=sdk_env(server, tmp_path), cwd=str(work), **fields
    )


async def collect(prompt: str, opts: ClaudeAgentOptions) -> list[Any]:
    return [message async for message in query(prompt=prompt, options=opts)]


async def test_query_end_to_end(tmp_path: Path) -> None:
    with FakeModelServer([turn("Paris.")]) as server:
        messages = await collect("What is the capital of France?", options(server, tmp_path))
    init, answer, result = messages
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert init.data["session_id"] == result.session_id
    assert "Bash" in init.data["tools"]
    assert isinstance(answer, AssistantMessage)
    assert [b.text for b in answer.content if isinstance(b, TextBlock)] == ["Paris."]
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.is_error, result.result) == ("success", False, "Paris.")
    assert result.total_cost_usd is not None and result.total_cost_usd > 0
    assert result.num_turns == 1
    assert "What is the capital of France?" in sent_text(server.requests[0])


async def test_a_client_session_keeps_its_history(tmp_path: Path) -> None:
    with FakeModelServer([turn("Noted: 7."), turn("It was 7.")]) as server:
        async with ClaudeSDKClient(options(server, tmp_path)) as client:
            await client.query("Remember the number 7.")
            first = [m async for m in client.receive_response()]
            await client.query("Which number did I give you?")
            second = [m async for m in client.receive_response()]
    results = [m for m in (*first, *second) if isinstance(m, ResultMessage)]
    assert [r.result for r in results] == ["Noted: 7.", "It was 7."]
    assert results[0].session_id == results[1].session_id
    later = sent_text(server.requests[1])
    assert "Remember the number 7." in later and "Noted: 7." in later


async def test_can_use_tool_denies_and_the_model_hears_why(tmp_path: Path) -> None:
    asked: list[tuple[str, dict[str, Any]]] = []

    async def decide(
        name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        asked.append((name, tool_input))
        return PermissionResultDeny(message="No writing today.")

    target = tmp_path / "work" / "notes.txt"
    write = tool_use("Write", {"file_path": str(target), "content": "hello"})
    with FakeModelServer([turn(write), turn("Understood.")]) as server:
        async with ClaudeSDKClient(options(server, tmp_path, can_use_tool=decide)) as client:
            await client.query("Write a note.")
            messages = [m async for m in client.receive_response()]
    assert asked == [("Write", {"file_path": str(target), "content": "hello"})]
    assert not target.exists()
    (denied,) = tool_results(server.requests[1])
    assert denied.get("is_error") is True and "No writing today." in result_text(denied)
    result = messages[-1]
    assert isinstance(result, ResultMessage) and not result.is_error
    assert [d["tool_name"] for d in result.permission_denials or []] == ["Write"]


async def test_can_use_tool_allows_with_changed_input(tmp_path: Path) -> None:
    async def decide(
        name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow:
        assert context.tool_use_id
        return PermissionResultAllow(updated_input={**tool_input, "content": "changed"})

    target = tmp_path / "work" / "notes.txt"
    write = tool_use("Write", {"file_path": str(target), "content": "original"})
    with FakeModelServer([turn(write), turn("Done.")]) as server:
        messages = await collect_with_stream_open(
            "Write a note.", options(server, tmp_path, can_use_tool=decide)
        )
    assert target.read_text() == "changed"
    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error


async def collect_with_stream_open(prompt: str, opts: ClaudeAgentOptions) -> list[Any]:
    """query() with can_use_tool needs its prompt as a stream (the SDK's rule)."""

    async def prompts() -> Any:
        yield {"type": "user", "message": {"role": "user", "content": prompt}}

    return [message async for message in query(prompt=prompts(), options=opts)]


async def test_a_pre_tool_use_hook_blocks_the_call(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    async def guard(data: Any, tool_use_id: str | None, context: Any) -> Any:
        seen.append({"tool": data["tool_name"], "id": tool_use_id, "input": data["tool_input"]})
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "touching files is blocked",
            }
        }

    marker = tmp_path / "work" / "touched"
    bash = tool_use("Bash", {"command": f"touch {marker}"})
    hooks = {"PreToolUse": [HookMatcher(matcher="Bash", hooks=[guard])]}
    with FakeModelServer([turn(bash), turn("Blocked, fine.")]) as server:
        opts = options(server, tmp_path, allowed_tools=["Bash"], hooks=hooks)
        async with ClaudeSDKClient(opts) as client:
            await client.query("Touch the marker.")
            messages = [m async for m in client.receive_response()]
    assert not marker.exists()
    assert seen and seen[0]["tool"] == "Bash" and seen[0]["id"]
    (blocked,) = tool_results(server.requests[1])
    assert blocked.get("is_error") is True
    assert "touching files is blocked" in result_text(blocked)
    assert isinstance(messages[-1], ResultMessage)


async def test_the_model_calls_a_tool_of_an_sdk_mcp_server(tmp_path: Path) -> None:
    calls: list[dict[str, Any]] = []

    @tool("add", "Add two numbers", {"a": float, "b": float})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        calls.append(args)
        return {"content": [{"type": "text", "text": f"SUM={args['a'] + args['b']:g}"}]}

    calc = create_sdk_mcp_server(name="calc", version="1.0.0", tools=[add])
    call = tool_use("mcp__calc__add", {"a": 40, "b": 2})
    with FakeModelServer([turn(call), turn("It is 42.")]) as server:
        opts = options(
            server, tmp_path, mcp_servers={"calc": calc}, allowed_tools=["mcp__calc__add"]
        )
        async with ClaudeSDKClient(opts) as client:
            await client.query("What is 40 + 2?")
            messages = [m async for m in client.receive_response()]
    assert calls == [{"a": 40, "b": 2}]
    (answered,) = tool_results(server.requests[1])
    assert "SUM=42" in result_text(answered) and not answered.get("is_error")
    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    assert {"name": "calc", "status": "connected", "source": "sdk"} in init.data["mcp_servers"]
    assert "mcp__calc__add" in init.data["tools"]


async def test_interrupt_in_the_middle_of_a_slow_stream(tmp_path: Path) -> None:
    slow = turn("one two three four five six seven eight nine ten " * 20, chunk_chars=4)
    slow = slow.model_copy(update={"delay": 0.02})
    with FakeModelServer([slow, turn("Back again.")]) as server:
        opts = options(server, tmp_path, include_partial_messages=True)
        async with ClaudeSDKClient(opts) as client:
            await client.query("Count slowly.")
            interrupted = False
            first: list[Any] = []
            async for message in client.receive_response():
                first.append(message)
                delta = isinstance(message, StreamEvent) and (
                    message.event.get("type") == "content_block_delta"
                )
                if delta and not interrupted:
                    interrupted = True
                    await client.interrupt()
            await client.query("Are you there?")
            second = [m async for m in client.receive_response()]
    stopped = first[-1]
    assert isinstance(stopped, ResultMessage) and stopped.is_error
    assert stopped.subtype == "error_during_execution"
    deltas = [m for m in first if isinstance(m, StreamEvent)]
    assert deltas, "the stream had begun"
    assert isinstance(second[-1], ResultMessage) and second[-1].result == "Back again."
    assert not second[-1].is_error and second[-1].session_id == stopped.session_id


async def test_permission_mode_and_model_change_mid_session(tmp_path: Path) -> None:
    target = tmp_path / "work" / "a.txt"
    write = tool_use("Write", {"file_path": str(target), "content": "x"})
    scenario = Scenario(
        turns=(turn(write), turn("Denied."), turn(write), turn("Written."), turn("Haiku here."))
    )
    with FakeModelServer(scenario) as server:
        async with ClaudeSDKClient(options(server, tmp_path)) as client:
            await client.query("Write a.txt")
            [m async for m in client.receive_response()]
            assert not target.exists()  # the default mode, and nobody to ask
            await client.set_permission_mode("acceptEdits")
            await client.query("Write a.txt again")
            [m async for m in client.receive_response()]
            assert target.read_text() == "x"
            await client.set_model("haiku")
            await client.query("Who are you?")
            [m async for m in client.receive_response()]
    models = [r.body["model"] for r in server.requests]
    assert models[:4] == ["claude-sonnet-5-5"] * 4
    assert models[4].startswith("claude-haiku")


async def test_structured_output(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
        "required": ["city", "population"],
    }
    scenario = Scenario(
        turns=(
            turn("The answer is Paris."),  # no structured output: sent back once
            turn(tool_use("StructuredOutput", {"city": "Paris", "population": "many"})),
            turn(tool_use("StructuredOutput", {"city": "Paris", "population": 2102650})),
            turn("Done."),
        )
    )
    with FakeModelServer(scenario) as server:
        opts = options(server, tmp_path, output_format={"type": "json_schema", "schema": schema})
        messages = await collect("Biggest city of France?", opts)
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success"
    assert result.structured_output == {"city": "Paris", "population": 2102650}
    (invalid,) = tool_results(server.requests[2])
    assert invalid.get("is_error") is True and "population" in result_text(invalid)
    assert "StructuredOutput" in sent_text(server.requests[1])  # the reminder


@pytest.mark.parametrize("line", ["{not json", "[1, 2]", '{"type": "mystery"}'])
async def test_a_bad_stdin_line_is_named_and_the_session_goes_on(tmp_path: Path, line: str) -> None:
    async def prompts() -> Any:
        yield {"type": "user", "message": {"role": "user", "content": "hi"}}

    with FakeModelServer([turn("Still here.")]) as server:
        opts = options(server, tmp_path)
        async with ClaudeSDKClient(opts) as client:
            transport = client._transport
            assert transport is not None
            await transport.write(line + "\n")
            await client.query("hi")
            messages = [m async for m in client.receive_response()]
    notices = [m for m in messages if isinstance(m, SystemMessage) and m.subtype == "notice"]
    assert notices and "stdin line" in notices[0].data["text"]
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "Still here."


async def test_rewind_files_sets_the_files_back_to_a_prompt(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    mine = work / "mine.txt"
    mine.write_text("the user's\n")
    one, two = work / "one.txt", work / "two.txt"
    scenario = Scenario(
        turns=(
            turn(tool_use("Write", {"file_path": str(one), "content": "1\n"})),
            turn("Wrote one."),
            turn(tool_use("Write", {"file_path": str(two), "content": "2\n"})),
            turn("Wrote two."),
            turn("Still here."),
        )
    )
    with FakeModelServer(scenario) as server:
        opts = options(
            server,
            tmp_path,
            enable_file_checkpointing=True,
            permission_mode="acceptEdits",
            extra_args={"replay-user-messages": None},
        )
        prompts: list[str] = []
        async with ClaudeSDKClient(opts) as client:
            for text in ("Write one.", "Write two."):
                await client.query(text)
                async for message in client.receive_response():
                    if isinstance(message, UserMessage) and message.content == text:
                        assert message.uuid
                        prompts.append(message.uuid)
            mine.write_text("the user's, edited\n")  # not the agent's: a rewind keeps it
            with pytest.raises(Exception, match="No file checkpoint found"):
                await client.rewind_files("not-a-message")
            await client.rewind_files(prompts[1])
            assert one.read_text() == "1\n" and not two.exists()
            await client.rewind_files(prompts[0])
            assert not one.exists() and not two.exists()
            assert mine.read_text() == "the user's, edited\n"
            await client.query("Are you there?")  # the conversation goes on as it was
            last = [m async for m in client.receive_response()][-1]
    assert isinstance(last, ResultMessage) and last.result == "Still here."
    assert "Wrote two." in sent_text(server.requests[-1])


async def test_task_budget_betas_and_thinking_reach_the_model(tmp_path: Path) -> None:
    """The SDK's task_budget, betas and thinking options (its --task-budget, --betas and
    --thinking flags) each change what the model is sent."""
    with FakeModelServer([turn("Fine.")]) as server:
        opts = options(
            server,
            tmp_path,
            task_budget={"total": 20_000},
            betas=["context-1m-2025-08-07"],
            thinking={"type": "disabled"},
            effort="high",
        )
        messages = await collect("Go.", opts)
        (request,) = server.requests
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "Fine."
    assert request.body["output_config"]["task_budget"] == {"type": "tokens", "total": 20_000}
    betas = request.headers["anthropic-beta"].split(",")
    assert "context-1m-2025-08-07" in betas and "task-budgets-2026-03-13" in betas
    assert "thinking" not in request.body  # --effort high would think; --thinking disabled wins
