"""Loop detection: a model making the same call again and again, getting the same result.

Weak models fall into it (a failing command retried word for word), and no turn limit should
be the only way out. The calls of a run are counted in order, across turns: each one that
repeats the previous call (same tool, same input) with the same result adds to the streak,
anything else starts it afresh. From the third identical call the results carry a reminder
that it repeats itself, so the model reads one before it makes the fourth; the sixth ends the
run, saying which call it repeated. Parallel identical calls in one answer count one by one,
and the run ends at the end of that turn. A call whose result changes (polling a job that
progresses) is no repetition.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from codeloop.system.valueclass import valueclass
from codeloop.types import ToolResultBlock, ToolUseBlock

REMIND_AFTER = 3
STOP_AFTER = 6


@valueclass
class Repeats:
    """The latest call of the run with its result, and how many times in a row it came the
    same. Immutable, so it can live in the loop's State."""

    last: tuple[str, str, bool, str] | None = None  # (tool, input, is_error, result text)
    count: int = 0

    def after(self, calls: Sequence[ToolUseBlock], results: Sequence[ToolResultBlock]) -> Repeats:
        """The streak once a turn's calls have their results."""
        by_id = {result.tool_use_id: result for result in results}
        repeats = self
        for call in calls:
            result = by_id.get(call.id)
            if result is None:
                continue
            arguments = json.dumps(call.input, sort_keys=True, ensure_ascii=False)
            key = (call.name, arguments, result.is_error, result.text)
            repeats = Repeats(key, repeats.count + 1 if key == repeats.last else 1)
        return repeats

    @property
    def call(self) -> str:
        """The repeated call, as the messages name it."""
        if self.last is None:
            return ""
        name, arguments, _, _ = self.last
        shown = arguments if len(arguments) <= 200 else f"{arguments[:200]}…"
        return f"{name} {shown}"

    @property
    def reminder(self) -> str | None:
        """What the model is told with the results, or None while it does not repeat itself
        (nor once the run stops)."""
        if not REMIND_AFTER <= self.count < STOP_AFTER:
            return None
        last_chance = (
            " If you make it once more, the run ends." if self.count == STOP_AFTER - 1 else ""
        )
        return (
            f"You have made the same call {self.count} times in a row ({self.call}) and got "
            "the same result each time: repeating it will not change the outcome. Do something "
            "different: change the arguments, use another tool or approach, or answer with "
            f"what you know.{last_chance}"
        )

    @property
    def stop(self) -> str | None:
        """Why the run ends, or None while it may go on."""
        if self.count < STOP_AFTER:
            return None
        return (
            f"The model repeated the same tool call {self.count} times in a row with the same "
            f"result ({self.call})"
        )
