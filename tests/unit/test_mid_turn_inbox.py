"""What the user sends while the loop works (LoopParams.inbox), on the scripted model: taken
once, with the next tool results and only when the model will read them, never by an answer
that ends the run."""

from __future__ import annotations

import asyncio
from pathlib import Path

from codeloop.events import Event, LoopEnd, MessagesDelivered
from codeloop.testing.scenario import tool_use, turn
from codeloop.types import Message, TextBlock
from tests.unit.test_loop_guards import Run

SENT = Message("user", (TextBlock("also check the docs"),), uuid="sent-1")
REMINDER = "The user sent a new message while you were working:\nalso check the docs"


class Inbox:
    """Holds the sent message until the loop takes it; counts the takes."""

    def __init__(self) -> None:
        self.waiting: list[Message] = [SENT]
        self.takes = 0

    def __call__(self) -> tuple[Message, ...]:
        self.takes += 1
        taken, self.waiting = tuple(self.waiting), []
        return taken


def delivered(events: list[Event]) -> list[str]:
    return [u for e in events if isinstance(e, MessagesDelivered) for u in e.uuids]


def test_it_rides_with_the_next_tool_results_once(tmp_path: Path) -> None:
    run = Run([turn(tool_use("Bash", {"command": "true"})), turn("Both.")], tmp_path)
    inbox = Inbox()
    events, end = asyncio.run(run(inbox=inbox))
    assert end.reason == "completed" and delivered(events) == ["sent-1"]
    tool_message = end.messages[-2]
    texts = [b.text for b in tool_message.content if isinstance(b, TextBlock)]
    assert len(texts) == 1 and REMINDER in texts[0] and texts[0].startswith("<system-reminder>")
    assert inbox.takes == 1


def test_a_run_that_ends_on_its_turn_limit_leaves_it_for_the_next_prompt(tmp_path: Path) -> None:
    run = Run([turn(tool_use("Bash", {"command": "true"})), turn("Never.")], tmp_path)
    inbox = Inbox()
    events, end = asyncio.run(run(inbox=inbox, max_turns=1))
    assert end.reason == "max_turns" and delivered(events) == []
    assert inbox.waiting == [SENT] and REMINDER not in repr(end.messages)


def test_an_answer_without_tool_calls_leaves_it(tmp_path: Path) -> None:
    inbox = Inbox()
    _, end = asyncio.run(Run([turn("Done.")], tmp_path)(inbox=inbox))
    assert isinstance(end, LoopEnd) and end.reason == "completed"
    assert inbox.takes == 0 and inbox.waiting == [SENT]
