"""Session totals are priced response by response: long-context rates follow each prompt."""

from __future__ import annotations

import pytest

from codeloop.models.catalog import cost_usd
from codeloop.types import Usage
from codeloop.usage.costs import Ledger, model_usage

HAIKU = "claude-haiku-5-5"  # $0.10 / $0.50 per MTok up to 100K prompt tokens, 5x above


def test_a_long_prompt_is_charged_its_tier_even_among_short_ones() -> None:
    short, long = Usage(50_000, 1_000), Usage(150_000, 1_000)
    ledger = Ledger()
    ledger.add(HAIKU, short)
    ledger.add(HAIKU, long)
    expected = cost_usd(HAIKU, short) + cost_usd(HAIKU, long)
    assert ledger.cost_usd() == pytest.approx(expected)
    # The sum of the two usages (200K tokens) is over the tier too, but was not one prompt:
    # pricing the total would charge the short request at long-context rates.
    assert ledger.cost_usd() < cost_usd(HAIKU, short + long)
    assert model_usage(ledger.by_model, ledger.cost_by_model)[HAIKU]["costUSD"] == (
        pytest.approx(expected)
    )


def test_a_child_ledgers_costs_reach_its_parent_as_they_happen() -> None:
    parent = Ledger()
    child = parent.child()
    child.add(HAIKU, Usage(150_000, 1_000))
    parent.add("claude-sonnet-5-5", Usage(1_000, 100))
    assert set(parent.cost_by_model) == {HAIKU, "claude-sonnet-5-5"}
    assert parent.cost_usd() == pytest.approx(
        cost_usd(HAIKU, Usage(150_000, 1_000)) + cost_usd("claude-sonnet-5-5", Usage(1_000, 100))
    )
    assert child.cost_usd() == pytest.approx(cost_usd(HAIKU, Usage(150_000, 1_000)))
