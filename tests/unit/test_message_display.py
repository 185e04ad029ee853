"""MessageDisplay's batches, as the TUI streams them: whole lines while the message streams, the
rest (maybe nothing) in the final call; a real command hook rewrites each."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

from codeloop.events import AssistantTurn, Event, LoopEnd, ResponseDiscarded, TextDelta
from codeloop.message_display import MessageDisplay
from codeloop.types import Message, TextBlock, ToolUseBlock, Usage
from tests.unit.test_hooks import hook, on, runner


def upper_hook(tmp_path: Path) -> MessageDisplay:
    command = hook(
        tmp_path,
        "upper",
        """
        with open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "calls.jsonl"), "a") as f:
            f.write(json.dumps(payload) + "\\n")
        shown = payload["delta"].upper()
        print(json.dumps({"hookSpecificOutput": {"displayContent": shown}}))
        """,
    )
    return MessageDisplay(runner(tmp_path, on("MessageDisplay", command)), batches=True)


async def stream(*events: Event) -> AsyncIterator[Event]:
    for event in events:
        yield event


def turn_of(*blocks: TextBlock | ToolUseBlock) -> AssistantTurn:
    return AssistantTurn(Message("assistant", blocks), "m", Usage(), "end_turn")


async def test_batches_of_whole_lines_then_the_rest(tmp_path: Path) -> None:
    display = upper_hook(tmp_path)
    original = turn_of(TextBlock("one\ntwo\nthree"), ToolUseBlock("t1", "Bash", {}))
    end = LoopEnd("completed", 1, Usage(), (Message.user("hi"), original.message))
    events = [
        e
        async for e in display.shown(
            stream(
                TextDelta("discarded\n"),
                ResponseDiscarded("retry"),
                TextDelta("one\ntw"),
                TextDelta("o\nthree"),
                original,
                turn_of(ToolUseBlock("t2", "Bash", {})),  # no text: no call
                end,
            )
        )
    ]
    shown = [e.text for e in events if isinstance(e, TextDelta)]
    assert shown == ["DISCARDED\n", "ONE\n", "TWO\n", "THREE"]
    calls = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    kept = calls[1:]  # the first message was discarded; the retry is a new message
    assert [(c["index"], c["final"], c["delta"]) for c in kept] == [
        (0, False, "one\n"),
        (1, False, "two\n"),
        (2, True, "three"),
    ]
    assert len({c["message_id"] for c in kept}) == 1 and calls[0]["message_id"] not in {
        c["message_id"] for c in kept
    }
    turn = next(e for e in events if isinstance(e, AssistantTurn))
    assert turn.message.text == "ONE\nTWO\nTHREE"
    assert [b.type for b in turn.message.content] == ["text", "tool_use"]
    # The displayed end holds the displayed message; the original events are untouched.
    assert events[-1].messages[-1].text == "ONE\nTWO\nTHREE"  # type: ignore[union-attr]
    assert original.message.text == "one\ntwo\nthree" and end.final_text == "one\ntwo\nthree"


async def test_without_hooks_events_pass_unchanged(tmp_path: Path) -> None:
    display = MessageDisplay(runner(tmp_path, {}), batches=True)
    events = (TextDelta("a\n"), turn_of(TextBlock("a\n")))
    assert [e async for e in display.shown(stream(*events))] == list(events)
