"""codeloop's own Python API, in-process, through the same scenarios the official SDKs run
against the CLI (tests/sdk/): the fake model server behind it, no subprocess."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import codeloop
from codeloop import (
    AssistantMessage,
    Client,
    HookMatcher,
    Options,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolPermissionContext,
    query,
    tool,
)
from codeloop.testing.fake_server import FakeModelServer
from codeloop.testing.scenario import Scenario, tool_use, turn
from tests.sdk.drive import result_text, sdk_env, sent_text, tool_results


def options(server: FakeModelServer, tmp_path: Path, **fields: Any) -> Options:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **sdk_env(server, tmp_path)}
    return Options(cwd=work, env=env, **fields)


async def test_query_end_to_end(tmp_path: Path) -> None:
    with FakeModelServer([turn("Paris.")]) as server:
        messages = [m async for m in query("Capital of France?", options(server, tmp_path))]
    init, answer, result = messages
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert isinstance(answer, AssistantMessage)
    assert [b.text for b in answer.content if isinstance(b, TextBlock)] == ["Paris."]
    assert isinstance(result, ResultMessage) and result.result == "Paris."
    assert result.session_id == init.data["session_id"] and not result.is_error
    assert "Capital of France?" in sent_text(server.requests[0])


async def test_a_client_keeps_its_history(tmp_path: Path) -> None:
    with FakeModelServer([turn("Noted: 7."), turn("It was 7.")]) as server:
        async with Client(options(server, tmp_path)) as client:
            await client.query("Remember 7.")
            first = [m async for m in client.receive_response()]
            await client.query("Which number?")
            second = [m async for m in client.receive_response()]
    assert first[-1].session_id == second[-1].session_id  # type: ignore[union-attr]
    assert "Noted: 7." in sent_text(server.requests[1])


async def test_can_use_tool_denies(tmp_path: Path) -> None:
    async def decide(
        name: str, tool_input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultDeny:
        assert context.tool_use_id
        return PermissionResultDeny("No writing today.")

    target = tmp_path / "work" / "notes.txt"
    write = tool_use("Write", {"file_path": str(target), "content": "hello"})
    with FakeModelServer([turn(write), turn("Understood.")]) as server:
        opts = options(server, tmp_path)
        messages = [m async for m in query("Write a note.", opts, can_use_tool=decide)]
    assert not target.exists()
    (denied,) = tool_results(server.requests[1])
    assert denied.get("is_error") and "No writing today." in result_text(denied)
    assert isinstance(messages[-1], ResultMessage)
    assert [d["tool_name"] for d in messages[-1].permission_denials or []] == ["Write"]


async def test_can_use_tool_allows_with_changed_input(tmp_path: Path) -> None:
    def decide(name: str, tool_input: dict[str, Any], context: Any) -> PermissionResultAllow:
        return PermissionResultAllow(updated_input={**tool_input, "content": "changed"})

    target = tmp_path / "work" / "notes.txt"
    write = tool_use("Write", {"file_path": str(target), "content": "original"})
    with FakeModelServer([turn(write), turn("Done.")]) as server:
        [m async for m in query("Write.", options(server, tmp_path), can_use_tool=decide)]
    assert target.read_text() == "changed"


async def test_an_allow_that_sets_the_mode_holds_for_the_calls_after_it(tmp_path: Path) -> None:
    asked: list[str] = []

    def decide(name: str, tool_input: dict[str, Any], context: Any) -> PermissionResultAllow:
        asked.append(tool_input["file_path"])
        update = {"type": "setMode", "mode": "acceptEdits", "destination": "session"}
        return PermissionResultAllow(updated_permissions=[update])

    first, second = tmp_path / "work" / "a.txt", tmp_path / "work" / "b.txt"
    writes = [tool_use("Write", {"file_path": str(p), "content": p.name}) for p in (first, second)]
    with FakeModelServer([turn(writes[0]), turn(writes[1]), turn("Both.")]) as server:
        opts = options(server, tmp_path)
        messages = [m async for m in query("Write two.", opts, can_use_tool=decide)]
    assert asked == [str(first)]  # the second write came under acceptEdits
    assert first.read_text() == "a.txt" and second.read_text() == "b.txt"
    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error


@pytest.mark.parametrize(
    ("mode", "settings"),
    [
        ("bogus", None),
        ("manual", None),  # an alias set_permission_mode takes, not one of the SDK's modes
        ("auto", json.dumps({"disableAutoMode": "disable"})),
    ],
)
async def test_an_allow_that_sets_a_mode_the_session_cannot_take_is_a_denial(
    tmp_path: Path, mode: str, settings: str | None
) -> None:
    def decide(name: str, tool_input: dict[str, Any], context: Any) -> PermissionResultAllow:
        return PermissionResultAllow(updated_permissions=[{"type": "setMode", "mode": mode}])

    target = tmp_path / "work" / "notes.txt"
    write = tool_use("Write", {"file_path": str(target), "content": "x"})
    with FakeModelServer([turn(write), turn("Okay."), turn(write), turn("Still no.")]) as server:
        async with Client(options(server, tmp_path, settings=settings), can_use_tool=decide) as c:
            for prompt in ("Write.", "Again."):
                await c.query(prompt)
                [m async for m in c.receive_response()]
    assert not target.exists()
    for request in (server.requests[1], server.requests[3]):  # the mode stayed "default"
        (denied,) = tool_results(request)
        why = f"the permission callback's updatedPermissions: mode {mode!r}"
        assert denied.get("is_error") and why in result_text(denied)


@pytest.mark.parametrize("failure", ["raises", "answers nonsense"])
async def test_a_failing_permission_callback_is_a_denial(tmp_path: Path, failure: str) -> None:
    def decide(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        if failure == "raises":
            raise RuntimeError("database down")
        return 42

    target = tmp_path / "work" / "notes.txt"
    write = tool_use("Write", {"file_path": str(target), "content": "x"})
    with FakeModelServer([turn(write), turn("Okay.")]) as server:
        [m async for m in query("Write.", options(server, tmp_path), can_use_tool=decide)]
    assert not target.exists()
    (denied,) = tool_results(server.requests[1])
    why = "database down" if failure == "raises" else "int"
    assert denied.get("is_error") and why in result_text(denied)


async def test_a_pre_tool_use_hook_blocks(tmp_path: Path) -> None:
    seen: list[str | None] = []

    async def guard(data: dict[str, Any], tool_use_id: str | None, context: Any) -> Any:
        seen.append(tool_use_id)
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
    with FakeModelServer([turn(bash), turn("Fine.")]) as server:
        opts = options(server, tmp_path, allowed_tools=["Bash"])
        [m async for m in query("Touch it.", opts, hooks=hooks)]
    assert not marker.exists() and seen and seen[0]
    (blocked,) = tool_results(server.requests[1])
    assert "touching files is blocked" in result_text(blocked)


async def test_the_model_calls_a_function_tool(tmp_path: Path) -> None:
    calls: list[tuple[int, int]] = []

    @tool
    async def add(a: int, b: int) -> str:
        """Add two numbers."""
        calls.append((a, b))
        return f"SUM={a + b}"

    call = tool_use("add", {"a": 40, "b": 2})
    bad = tool_use("add", {"a": "forty"})
    with FakeModelServer([turn(call), turn(bad), turn("42.")]) as server:
        [m async for m in query("40 + 2?", options(server, tmp_path), tools=[add])]
    assert calls == [(40, 2)]
    (answered,) = tool_results(server.requests[1])
    assert result_text(answered) == "SUM=42" and not answered.get("is_error")
    (refused,) = tool_results(server.requests[2])
    assert refused.get("is_error") and "add" in result_text(refused)
    offered = {t["name"]: t for t in server.requests[0].body["tools"]}
    assert offered["add"]["description"] == "Add two numbers."
    assert offered["add"]["input_schema"]["required"] == ["a", "b"]


async def test_interrupt_in_the_middle_of_a_slow_stream(tmp_path: Path) -> None:
    slow = turn("one two three four five " * 40, chunk_chars=4)
    slow = slow.model_copy(update={"delay": 0.02})
    with FakeModelServer([slow, turn("Back again.")]) as server:
        async with Client(options(server, tmp_path), include_partial_messages=True) as client:
            await client.query("Count slowly.")
            first = []
            interrupted = False
            async for message in client.receive_response():
                first.append(message)
                delta = isinstance(message, StreamEvent) and (
                    message.event["type"] == "content_block_delta"
                )
                if delta and not interrupted:
                    interrupted = True
                    await client.interrupt()
            await client.query("Still there?")
            second = [m async for m in client.receive_response()]
    stopped, again = first[-1], second[-1]
    assert isinstance(stopped, ResultMessage) and stopped.is_error
    assert stopped.terminal_reason == "aborted_streaming"
    assert isinstance(again, ResultMessage) and again.result == "Back again."


async def test_permission_mode_and_model_change_mid_session(tmp_path: Path) -> None:
    target = tmp_path / "work" / "a.txt"
    write = tool_use("Write", {"file_path": str(target), "content": "x"})
    scenario = Scenario(
        turns=(turn(write), turn("Denied."), turn(write), turn("Written."), turn("Haiku."))
    )
    with FakeModelServer(scenario) as server:
        async with Client(options(server, tmp_path)) as client:
            await client.query("Write a.txt")
            [m async for m in client.receive_response()]
            assert not target.exists()
            await client.set_permission_mode("acceptEdits")
            await client.query("Again")
            [m async for m in client.receive_response()]
            assert target.read_text() == "x"
            await client.set_model("haiku")
            await client.query("Who are you?")
            [m async for m in client.receive_response()]
    models = [r.body["model"] for r in server.requests]
    assert models[:4] == ["claude-sonnet-5-5"] * 4 and models[4].startswith("claude-haiku")


async def test_structured_output(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"words": {"type": "array", "items": {"type": "string"}}},
        "required": ["words"],
    }
    answer = {"words": ["Hello", "world"]}
    scenario = Scenario(turns=(turn(tool_use("StructuredOutput", answer)), turn("Done.")))
    with FakeModelServer(scenario) as server:
        opts = options(server, tmp_path)
        messages = [m async for m in query("Split 'Hello world'.", opts, output_schema=schema)]
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.structured_output == answer


async def test_structured_output_that_never_comes_is_an_error(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    scenario = Scenario(turns=tuple(turn(f"No JSON, attempt {i}.") for i in range(4)))
    with FakeModelServer(scenario) as server:
        opts = options(server, tmp_path)
        messages = [m async for m in query("Count.", opts, output_schema=schema)]
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.is_error
    assert result.subtype == "error_max_structured_output_retries"
    assert len(server.requests) == 4  # the answer, then three reminders


def test_the_public_names_are_exported() -> None:
    for name in codeloop.__all__:
        assert getattr(codeloop, name) is not None
    with pytest.raises(AttributeError):
        codeloop.not_a_name  # noqa: B018


async def test_rewind_files_to_a_prompt(tmp_path: Path) -> None:
    one = tmp_path / "work" / "one.txt"
    scenario = Scenario(
        turns=(
            turn(tool_use("Write", {"file_path": str(one), "content": "1\n"})),
            turn("Wrote one."),
        )
    )
    with FakeModelServer(scenario) as server:
        async with Client(options(server, tmp_path, permission_mode="acceptEdits")) as client:
            prompt = await client.query("Write one.")
            [m async for m in client.receive_response()]
            assert one.read_text() == "1\n"
            preview = await client.rewind_files(prompt, dry_run=True)
            assert preview == {"canRewind": True, "filesChanged": [str(one)]}
            assert one.exists()  # a dry run changes nothing
            done = await client.rewind_files(prompt)
            assert done["filesChanged"] == [str(one)] and not one.exists()
            with pytest.raises(codeloop.CodeloopError, match="No file checkpoint"):
                await client.rewind_files("not-a-prompt")


async def test_tool_use_summaries_and_the_prompt_suggestion(tmp_path: Path) -> None:
    """CLAUDE_CODE_EMIT_TOOL_USE_SUMMARIES and Options.prompt_suggestions: each comes as its
    own message type, the suggestion after the ResultMessage; both on the small fast model."""
    from codeloop import PromptSuggestionMessage, ToolUseSummaryMessage
    from codeloop.side_requests import SUGGESTION_PROMPT, TOOL_SUMMARY_PROMPT

    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("alpha\n")
    read = tool_use("Read", {"file_path": str(work / "a.txt")})
    conversations = {
        "peek-at-a": Scenario(turns=(turn(read), turn("It says alpha."))),
        TOOL_SUMMARY_PROMPT.split(".")[0]: Scenario(turns=(turn("Read a.txt"),)),
        SUGGESTION_PROMPT.splitlines()[0]: Scenario(turns=(turn("now read b.txt"),)),
    }
    with FakeModelServer(conversations) as server:
        opts = options(server, tmp_path, prompt_suggestions=True)
        assert opts.env is not None
        opts.env = {**opts.env, "CLAUDE_CODE_EMIT_TOOL_USE_SUMMARIES": "1"}
        messages = [m async for m in query("peek-at-a please", opts)]
    (label,) = [m for m in messages if isinstance(m, ToolUseSummaryMessage)]
    calls = [
        b.id
        for m in messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, codeloop.ToolUseBlock)
    ]
    assert label.summary == "Read a.txt" and label.preceding_tool_use_ids == calls[:1]
    assert isinstance(messages[-2], ResultMessage)
    last = messages[-1]
    assert isinstance(last, PromptSuggestionMessage) and last.suggestion == "now read b.txt"
    assert last.session_id == messages[-2].session_id
