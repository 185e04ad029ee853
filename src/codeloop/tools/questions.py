"""The seam through which the model's multiple-choice questions reach a person.

A frontend that can ask (the terminal UI) sets `QuestionChannel.ask`, as it sets the policy's
`ask_user` for permissions: it gets the questions and returns the answers, question text →
the label chosen (several labels joined by ", " for a multi-select, or the person's own
words), or None when the person declined. An embedder answers through its permission callback
instead (`updated_input` with `answers`, as the Agent SDK's canUseTool does). Plain data, no
pydantic: a UI imports it at no cost.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import field

from codeloop.system.valueclass import valueclass


@valueclass(slots=True)
class Option:
    label: str
    description: str = ""


@valueclass(slots=True)
class Question:
    question: str
    header: str
    options: tuple[Option, ...]
    multi_select: bool = False


AskQuestions = Callable[[tuple[Question, ...]], Awaitable[dict[str, str] | None]]


@valueclass(frozen=False)
class QuestionChannel:
    ask: AskQuestions | None = field(default=None)
