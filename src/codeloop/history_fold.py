"""Values derived from a whole history, kept up to date by the messages that changed.

A session's history grows by appending, and the next request's history shares every message
but the new ones with the previous request's, as the same objects: what is derived from each
message alone is cached on it (`Message.cached`), and what is folded over all of them (a token
total, the latest prompt) is kept per message by a `HistoryFold`, so the next history costs
the messages after the prefix it shares with the last one. Shared means equal: what is derived
from a message depends on its value alone, so a resumed history (each message read back from
the transcript, equal to the one written) is not folded again. A rewind (a shorter history), a
fold of an old result (a new message in the middle) or a compaction (new messages throughout)
shortens the shared prefix, and the fold redoes what follows it: the result is always the fold
from scratch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from codeloop.types import Message

S = TypeVar("S")


def shared_prefix(a: Sequence[object], b: Sequence[object]) -> int:
    """How many leading items `a` and `b` have in common: the same objects, or equal ones (a
    message read back from its transcript equals the one written, and what is derived from a
    message depends on its value alone). Compared in C, where the same object costs no call to
    `__eq__`: the usual history, the last one and more, costs microseconds however long; one
    with an item replaced, a bisection of slices as cheap."""
    n = min(len(a), len(b))
    a, b = tuple(a[:n]), tuple(b[:n])
    if a == b:
        return n
    low, high = 0, n  # a[:low] == b[:low], and a[:high] != b[:high]
    while high - low > 1:
        middle = (low + high) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle
    return low


class HistoryFold(Generic[S]):
    """`step` folded over a history from `initial`, with the state after each message kept for
    the next call."""

    def __init__(self, initial: S, step: Callable[[S, Message], S]) -> None:
        self._initial = initial
        self._step = step
        self._messages: tuple[Message, ...] = ()
        self._states: list[S] = []

    def __call__(self, messages: Sequence[Message]) -> S:
        """The state after the last message."""
        self._update(messages)
        return self._states[-1] if self._states else self._initial

    def each(self, messages: Sequence[Message]) -> tuple[S, ...]:
        """The state after each message: a `step` that ignores the state maps the history."""
        self._update(messages)
        return tuple(self._states)

    def _update(self, messages: Sequence[Message]) -> None:
        kept = shared_prefix(messages, self._messages)
        states = self._states
        del states[kept:]
        state = states[-1] if states else self._initial
        step = self._step
        for message in messages[kept:]:
            state = step(state, message)
            states.append(state)
        self._messages = tuple(messages)


__all__ = ["HistoryFold", "shared_prefix"]
