"""How much a model thinks: `--effort` / `effortLevel`, MAX_THINKING_TOKENS,
`alwaysThinkingEnabled`, and `think hard` / `ultrathink` in a prompt, mapped onto each model's
own controls as Claude Code maps them.

Extended-thinking models get a token budget (and the interleaved-thinking beta when tools are
offered, so they think between tool calls); adaptive models get adaptive thinking and
`output_config.effort`; always-thinking models only the effort; OpenAI reasoning models
`reasoning_effort` / `reasoning.effort`. A level a model lacks becomes its nearest one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from codeloop.models.base import ModelRequest
from codeloop.models.catalog import DEFAULT_OUTPUT_TOKENS, ModelInfo
from codeloop.system.valueclass import valueclass
from codeloop.types import Message, TextBlock

EFFORT_CHOICES = ("low", "medium", "high", "xhigh", "max")
_ORDER = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
# Claude Code's budgets: `think hard` 10 000 tokens, `ultrathink` 31 999; max the API's 63 999.
EFFORT_BUDGETS = {"low": 4_000, "medium": 10_000, "high": 31_999, "xhigh": 47_999, "max": 63_999}
MIN_BUDGET = 1_024
INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"
_HIGH = r"\b(ultrathink|think (harder|intensely|longer|(really|super|very) hard))\b"
_MEDIUM = r"\b(megathink|think (hard|deeply|a lot|more))\b"
_KEYWORDS = (("high", re.compile(_HIGH, re.I)), ("medium", re.compile(_MEDIUM, re.I)))


@valueclass
class ThinkingConfig:
    """What the user asked for; None everywhere leaves each model at its API default."""

    effort: str | None = None  # --effort, or the effortLevel setting
    budget: int | None = None  # MAX_THINKING_TOKENS
    always: bool = False  # alwaysThinkingEnabled, or --thinking adaptive
    disabled: bool = False  # --thinking disabled: no thinking, whatever else asks for it

    @property
    def asked(self) -> bool:
        return self.effort is not None or self.budget is not None or self.always


def apply_thinking(
    request: ModelRequest,
    info: ModelInfo,
    config: ThinkingConfig,
    read_effort: Callable[[Sequence[Message]], str | None] | None = None,
) -> ModelRequest:
    """`request` with the thinking fields its model takes for `config` and the prompt (whose
    level `read_effort` reads: `prompt_effort`, or a fold of it kept as the history grows)."""
    if config.disabled:
        return request
    level = _stronger(config.effort, (read_effort or prompt_effort)(request.messages))
    budget = config.budget
    match info.thinking:
        case "extended":
            if budget is None and level is not None:
                budget = EFFORT_BUDGETS.get(level, EFFORT_BUDGETS["max"])
            if budget is None and config.always:
                budget = EFFORT_BUDGETS["high"]
            if not budget:
                return request
            budget = max(MIN_BUDGET, min(budget, info.max_output_tokens - 1))
            # The budget counts against max_tokens: leave room for the answer itself.
            wanted = min(info.max_output_tokens, budget + DEFAULT_OUTPUT_TOKENS)
            betas = (*request.betas, INTERLEAVED_BETA) if request.tools else request.betas
            return replace(
                request,
                thinking_budget=budget,
                max_tokens=max(request.max_tokens, wanted),
                betas=betas,
            )
        case "adaptive" | "always":
            if level is None and budget is not None:
                level = effort_for_budget(budget)
            if level is None and not config.always:
                return request  # the model's own default (always-thinking ones think anyway)
            effort = nearest_effort(level, info.efforts) if level else None
            return replace(request, adaptive_thinking=True, effort=effort)
        case "reasoning":
            if level is None and budget is not None:
                level = effort_for_budget(budget)
            if level is None:
                return request
            return replace(request, effort=nearest_effort(level, info.efforts))
    return request


def prompt_effort(messages: Sequence[Message]) -> str | None:
    """`think hard` → medium, `ultrathink` → high, read from the user's latest prompt."""
    return functools.reduce(effort_after, messages, None)


def effort_after(level: str | None, message: Message) -> str | None:
    """The prompt's level once `message` is in the history: a prompt of the user's sets it
    (tool results and the loop's own messages leave it), so a history folds to its latest
    prompt's (a `HistoryFold` step)."""
    if message.role != "user" or message.is_meta:
        return level
    texts = [b.text for b in message.content if isinstance(b, TextBlock)]
    if not texts:
        return level  # tool results: the prompt is further back
    text = "\n".join(texts)
    return next((found for found, pattern in _KEYWORDS if pattern.search(text)), None)


def effort_for_budget(budget: int) -> str:
    """A thinking budget in tokens as the effort level that spends about as much."""
    for level, tokens in EFFORT_BUDGETS.items():
        if budget <= tokens:
            return level
    return "max"


def nearest_effort(level: str, supported: tuple[str, ...]) -> str:
    """`level` if the model has it, else the highest level below it, else its lowest."""
    if level in supported or not supported:
        return level
    rank = _ORDER.index(level) if level in _ORDER else len(_ORDER)
    below = [s for s in supported if s in _ORDER and _ORDER.index(s) <= rank]
    return max(below, key=_ORDER.index) if below else min(supported, key=_rank)


def _rank(level: str) -> int:
    return _ORDER.index(level) if level in _ORDER else len(_ORDER)


def _stronger(a: str | None, b: str | None) -> str | None:
    if a is None or b is None:
        return a or b
    return a if _rank(a) >= _rank(b) else b
