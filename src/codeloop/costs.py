"""Usage and cost totals per model, for the json result, the session listing and budgets."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from codeloop.models.catalog import cost_usd
from codeloop.types import Usage


def usage_by_model(responses: Iterable[tuple[str, Usage]]) -> dict[str, Usage]:
    totals: dict[str, Usage] = {}
    for model, usage in responses:
        totals[model] = totals.get(model, Usage()) + usage
    return totals


def total_cost_usd(by_model: Mapping[str, Usage]) -> float:
    """Rounded to 1e-10 USD, so float noise never shows: $0.021 + $0.005 is $0.026."""
    return round(sum(cost_usd(model, usage) for model, usage in by_model.items()), 10)
