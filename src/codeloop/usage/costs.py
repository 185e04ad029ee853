"""Usage and cost totals per model, for the json result, the session listing and budgets."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from codeloop.models.catalog import cost_usd, model_info
from codeloop.types import Usage


def usage_by_model(responses: Iterable[tuple[str, Usage]]) -> dict[str, Usage]:
    totals: dict[str, Usage] = {}
    for model, usage in responses:
        totals[model] = totals.get(model, Usage()) + usage
    return totals


def costs_by_model(responses: Iterable[tuple[str, Usage]]) -> dict[str, float]:
    """Each model's cost, priced response by response (long-context rates depend on each
    request's prompt, which a total has lost)."""
    costs: dict[str, float] = {}
    for model, usage in responses:
        costs[model] = costs.get(model, 0.0) + cost_usd(model, usage)
    return costs


def total_cost_usd(costs: Mapping[str, float]) -> float:
    """Rounded to 1e-10 USD, so float noise never shows: $0.021 + $0.005 is $0.026."""
    return round(sum(costs.values()), 10)


class Ledger:
    """Usage and API time by model, added as each request finishes.

    A ledger opened with `child()` adds to its parent too, the moment it is told: a run's
    ledger feeds its session's, so one budget holds across the main loop and every sub-agent,
    checked at any turn boundary of any of them."""

    def __init__(self, parent: Ledger | None = None) -> None:
        self.by_model: dict[str, Usage] = {}
        self.cost_by_model: dict[str, float] = {}
        self.api_ms = 0.0
        self._parent = parent

    def child(self) -> Ledger:
        return Ledger(self)

    def add(self, model: str, usage: Usage, api_ms: float = 0.0) -> None:
        self.by_model = usage_by_model((*self.by_model.items(), (model, usage)))
        self.cost_by_model[model] = self.cost_by_model.get(model, 0.0) + cost_usd(model, usage)
        self.api_ms += api_ms
        if self._parent is not None:
            self._parent.add(model, usage, api_ms)

    @property
    def usage(self) -> Usage:
        return sum(self.by_model.values(), Usage())

    def cost_usd(self) -> float:
        return total_cost_usd(self.cost_by_model)


def model_usage(
    by_model: Mapping[str, Usage], costs: Mapping[str, float]
) -> dict[str, dict[str, Any]]:
    """Each model's totals, cost and limits, in the shape of Claude Code's result (modelUsage)."""
    shown: dict[str, dict[str, Any]] = {}
    for model, usage in by_model.items():
        info = model_info(model)
        shown[model] = {
            "inputTokens": usage.input_tokens,
            "outputTokens": usage.output_tokens,
            "cacheReadInputTokens": usage.cache_read_input_tokens,
            "cacheCreationInputTokens": usage.cache_creation_input_tokens,
            "webSearchRequests": 0,
            "costUSD": costs.get(model, 0.0),
            "contextWindow": info.context_window,
            "maxOutputTokens": info.max_output_tokens,
        }
    return shown
