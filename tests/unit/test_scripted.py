"""ScriptedModel and the scenario format: what loop tests will stand on."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import ValidationError

from codeloop.models.assembler import MessageAssembler, collect
from codeloop.models.base import (
    BlockDelta,
    BlockStop,
    Fatal,
    MediaError,
    ModelError,
    ModelRequest,
    Overloaded,
    PromptTooLong,
    RateLimited,
    StreamErrorEvent,
    StreamEvent,
    Transient,
)
from codeloop.testing.scenario import (
    Scenario,
    UsageSpec,
    fault,
    render_turn,
    text,
    thinking,
    tool_use,
    turn,
)
from codeloop.testing.scripted import ScriptedModel
from codeloop.types import Message, TextBlock, ThinkingBlock, ToolUseBlock, Usage


def request(prompt: str = "hi") -> ModelRequest:
    return ModelRequest(model="test-model", messages=(Message.user(prompt),))


async def test_events_assemble_to_the_scripted_blocks() -> None:
    sent = request()
    model = ScriptedModel(
        [
            turn(
                thinking("Let me think.", "sig-abc"),
                "I will list the files.",
                tool_use("Bash", {"command": "ls -la"}),
                tool_use("Read", {"file_path": "/tmp/x"}, id="toolu_custom"),
                chunk_chars=3,
                usage=UsageSpec(input_tokens=1200, output_tokens=55, cache_read_input_tokens=900),
            )
        ]
    )
    assembled = await collect(model.stream(sent))
    assert assembled.blocks == (
        ThinkingBlock("Let me think.", "sig-abc"),
        TextBlock("I will list the files."),
        ToolUseBlock("toolu_01scripted00000002", "Bash", {"command": "ls -la"}),
        ToolUseBlock("toolu_custom", "Read", {"file_path": "/tmp/x"}),
    )
    assert assembled.stop_reason == "tool_use"
    assert assembled.usage == Usage(1200, 55, 0, 900)
    assert assembled.model == "test-model"
    assert model.requests == [sent]
    assert model.remaining == 0


async def test_plain_text_turn_ends_the_turn_and_text_is_chunked() -> None:
    model = ScriptedModel([turn(text="hello world", chunk_chars=4)])
    events = [e async for e in model.stream(request())]
    deltas = [e.value for e in events if isinstance(e, BlockDelta)]
    assert deltas == ["hell", "o wo", "rld"]
    assembler = MessageAssembler()
    for event in events:
        assembler.feed(event)
    assert assembler.message().text == "hello world"
    assert assembler.stop_reason == "end_turn"
    assert assembler.usage.output_tokens == 2  # estimated: 11 characters / 4


async def test_turns_are_served_in_order_and_requests_recorded() -> None:
    model = ScriptedModel([turn("one"), turn("two")])
    first = await collect(model.stream(request("a")))
    second = await collect(model.stream(request("b")))
    assert (first.message().text, second.message().text) == ("one", "two")
    assert [r.messages[0].text for r in model.requests] == ["a", "b"]
    assert first.id != second.id


async def test_running_out_raises_fatal() -> None:
    model = ScriptedModel([turn("only")])
    await collect(model.stream(request()))
    with pytest.raises(Fatal, match="scripted model: no turn left"):
        await collect(model.stream(request()))
    assert len(model.requests) == 2


async def test_malformed_and_truncated_tool_input() -> None:
    model = ScriptedModel(
        [
            turn(tool_use("Bash", raw_input='{"command": ls}')),
            turn(
                "Writing it now.",
                tool_use("Write", raw_input='{"file_path": "a.py", "content": "def'),
                stop_reason="max_tokens",
            ),
        ]
    )
    malformed = await collect(model.stream(request()))
    (block,) = malformed.blocks
    assert isinstance(block, ToolUseBlock) and block.input_error is not None
    truncated = await collect(model.stream(request()))
    assert truncated.stop_reason == "max_tokens"
    assert truncated.blocks[0] == TextBlock("Writing it now.")
    cut = truncated.blocks[1]
    assert isinstance(cut, ToolUseBlock) and cut.input_error is not None


@pytest.mark.parametrize(
    ("spec", "error_type", "check"),
    [
        (fault("overloaded", retry_after=3), Overloaded, lambda e: e.retry_after == 3),
        (
            fault("rate_limited", retry_after=2, retry_after_ms=1500),
            RateLimited,
            lambda e: e.retry_after == 1.5 and e.status == 429,
        ),
        (fault("server_error"), Transient, lambda e: e.status == 500),
        (
            fault("prompt_too_long", actual=210_000, limit=200_000),
            PromptTooLong,
            lambda e: (e.actual, e.limit) == (210_000, 200_000) and "210000 tokens" in e.message,
        ),
        (fault("media"), MediaError, lambda e: e.status == 400),
        (fault("auth"), Fatal, lambda e: e.status == 401),
    ],
)
async def test_request_faults_raise_the_taxonomy_and_keep_the_turn(
    spec: object, error_type: type[ModelError], check: object
) -> None:
    model = ScriptedModel([turn("after the fault", faults=[spec])])  # type: ignore[list-item]
    with pytest.raises(error_type) as raised:
        await collect(model.stream(request()))
    assert type(raised.value) is error_type
    assert check(raised.value)  # type: ignore[operator]
    retried = await collect(model.stream(request()))
    assert retried.message().text == "after the fault"


async def test_times_repeats_a_fault_on_consecutive_requests() -> None:
    model = ScriptedModel(
        [turn("finally", faults=[fault("overloaded", times=3), fault("server_error")])]
    )
    raised: list[type[ModelError]] = []
    while True:
        try:
            assembled = await collect(model.stream(request()))
            break
        except ModelError as exc:
            raised.append(type(exc))
    assert raised == [Overloaded, Overloaded, Overloaded, Transient]
    assert assembled.message().text == "finally"
    assert len(model.requests) == 5


@pytest.mark.parametrize(
    ("kind", "error_type"), [("cut", Transient), ("sse_error", StreamErrorEvent)]
)
async def test_mid_stream_faults_strike_after_n_events(
    kind: str, error_type: type[ModelError]
) -> None:
    model = ScriptedModel([turn("some text", faults=[fault(kind, after=3)])])  # type: ignore[arg-type]
    seen: list[StreamEvent] = []
    with pytest.raises(error_type):
        async for event in model.stream(request()):
            seen.append(event)
    assert [e.type for e in seen] == ["message_start", "block_start", "block_delta"]
    assert (await collect(model.stream(request()))).message().text == "some text"


async def test_a_stall_given_up_on_leaves_the_turn_for_the_retry() -> None:
    model = ScriptedModel([turn("late", faults=[fault("stall", after=2, seconds=3600)])])
    stream = model.stream(request())
    assert (await anext(stream)).type == "message_start"
    assert (await anext(stream)).type == "block_start"
    # A watchdog: the next event never comes, so give up on this stream.
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(anext(stream), timeout=0.05)
    retried = await collect(model.stream(request()))
    assert retried.message().text == "late"
    assert model.remaining == 0


async def test_a_stall_waited_out_serves_the_turn() -> None:
    model = ScriptedModel(
        [turn("slow", faults=[fault("stall", after=1, seconds=0.01)]), turn("next")]
    )
    assert (await collect(model.stream(request()))).message().text == "slow"
    assert (await collect(model.stream(request()))).message().text == "next"


def test_pacing_tool_use_first_then_paced_text() -> None:
    # The benchmark shape: a tool_use ends early, then 5 s of text keep the stream open.
    paced_turn = turn(
        tool_use("Bash", {"command": "echo hi"}),  # 22 characters of JSON: 3 deltas
        "x" * 500,  # 50 deltas
        chunk_chars=10,
        delay=0.1,
    )
    events = render_turn(paced_turn, 0, model="m")
    tool_stop = next(i for i, p in enumerate(events) if p.event == BlockStop(0))
    # message_start, block_start, 3 deltas, block_stop; then the text block and message_delta.
    assert sum(p.pause for p in events[: tool_stop + 1]) == pytest.approx(0.6)
    assert sum(p.pause for p in events[tool_stop + 1 :]) == pytest.approx(5.3)
    with_gap = render_turn(turn(tool_use("Bash", delay_after=5), "done"), 0, model="m")
    assert [p.pause for p in with_gap if p.event == BlockStop(0)] == [5]


def test_ids_follow_each_provider_and_are_deterministic() -> None:
    scripted = turn(tool_use("Bash"))
    for provider, prefix in (("anthropic", "toolu_01"), ("openai", "call_")):
        first = render_turn(scripted, 7, model="m", provider=provider)  # type: ignore[arg-type]
        again = render_turn(scripted, 7, model="m", provider=provider)  # type: ignore[arg-type]
        assert first == again
        start = first[1].event
        assert isinstance(start.block, ToolUseBlock)  # type: ignore[union-attr]
        assert start.block.id.startswith(prefix)  # type: ignore[union-attr]


def test_scenario_json_round_trip_and_validation() -> None:
    data = [
        {
            "blocks": [
                {"text": "Let me look."},
                {"tool_use": {"name": "Bash", "input": {"command": "ls"}}},
            ],
            "faults": [{"kind": "rate_limited", "retry_after": 2}],
        },
        {"blocks": [{"thinking": "ok", "signature": "s"}, {"text": "Done."}], "chunk_chars": 2},
    ]
    scenario = Scenario.from_json(json.dumps(data))
    assert scenario == Scenario.from_json(json.dumps({"turns": data}))
    assert scenario.turns[0] == turn(
        text("Let me look."),
        tool_use("Bash", {"command": "ls"}),
        faults=[fault("rate_limited", retry_after=2)],
    )
    assert scenario.turns[0].effective_stop_reason == "tool_use"
    assert scenario.turns[1].effective_stop_reason == "end_turn"
    with pytest.raises(ValidationError):
        Scenario.from_json('[{"blocks": [{"txt": "typo"}]}]')
    with pytest.raises(ValidationError):
        Scenario.from_json('[{"faults": [{"kind": "meteor"}]}]')
    with pytest.raises(ValidationError, match="either blocks or raw"):
        Scenario.from_json('[{"blocks": [{"text": "a"}], "raw": {"body": "x"}}]')


def test_raw_turns_are_for_the_server_only() -> None:
    with pytest.raises(ValueError, match="FakeModelServer"):
        ScriptedModel(Scenario.from_json('[{"raw": {"body": "event: ping\\n\\n"}}]'))
