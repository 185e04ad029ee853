"""A token budget for one task: keep the model working until it has spent most of it.

The user sets it with --token-budget N or a marker such as `+500k` in the prompt. A model that
stops before 90% of the budget is asked to go on, until three continuations in a row each add
fewer than 500 output tokens (it has nothing more to give).
"""

from __future__ import annotations

import re

from codeloop.system.valueclass import valueclass

COMPLETION_THRESHOLD = 0.9
LOW_YIELD_TOKENS = 500
LOW_YIELD_STREAK_LIMIT = 3

_MARKER = re.compile(r"(?<![\w+])\+(\d+(?:\.\d+)?)\s*([kKmM])\b")
_SCALE = {"k": 1_000, "m": 1_000_000}


def parse_budget_marker(prompt: str) -> int | None:
    """`+500k` → 500000, `+1.5M` → 1500000; None when the prompt carries no marker."""
    match = _MARKER.search(prompt)
    if match is None:
        return None
    return int(float(match.group(1)) * _SCALE[match.group(2).lower()])


@valueclass
class BudgetTracker:
    """Immutable, so it can live in the loop's State."""

    budget: int
    continuations: int = 0
    low_yield_streak: int = 0
    tokens_at_last_check: int = 0

    def next(self, tokens_used: int) -> BudgetTracker | None:
        """The tracker for one more continuation, or None when the run should stop."""
        if tokens_used >= self.budget * COMPLETION_THRESHOLD:
            return None
        delta = tokens_used - self.tokens_at_last_check
        streak = self.low_yield_streak + 1 if self.continuations and delta < LOW_YIELD_TOKENS else 0
        if streak >= LOW_YIELD_STREAK_LIMIT:
            return None
        return BudgetTracker(self.budget, self.continuations + 1, streak, tokens_used)

    def prompt(self, tokens_used: int) -> str:
        percent = round(100 * tokens_used / self.budget)
        return (
            f"You have used {tokens_used:,} of the {self.budget:,}-token budget for this task "
            f"({percent}%). Keep working on the task: do not summarise or stop early."
        )
