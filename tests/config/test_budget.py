"""A trial's spending limits: written with dashes, merged limit by limit, the first limit
reached named, zero or unknown limits refused."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from harness.config.budget import Budget

pytestmark = pytest.mark.unit


def test_limits_read_with_dashes_and_merge_one_by_one() -> None:
    scenario = Budget.model_validate({"tokens": 1000, "cost-usd": 0.5})
    assert scenario.cost_usd == 0.5 and not scenario.unlimited and Budget().unlimited
    merged = scenario.merged(Budget(cost_usd=0.2, calls=3))
    assert (merged.tokens, merged.cost_usd, merged.calls) == (1000, 0.2, 3)
    assert scenario.merged(None) is scenario and scenario.merged(Budget()) == scenario


def test_the_first_limit_reached_is_named() -> None:
    budget = Budget(tokens=1000, cost_usd=0.5, calls=3)
    assert budget.exceeded(999, 0.49, 2) is None
    assert budget.exceeded(1000, 0.0, 0) == "tokens"  # reached counts, not only passed
    assert budget.exceeded(0, 0.5, 0) == "cost-usd"
    assert budget.exceeded(0, 0.0, 3) == "calls"
    assert budget.exceeded(5000, 9.0, 9) == "tokens"
    assert Budget().exceeded(10**9, 1e6, 10**6) is None


def test_a_zero_or_unknown_limit_is_refused() -> None:
    for bad in ({"tokens": 0}, {"cost-usd": -1}, {"minutes": 5}):
        with pytest.raises(ValidationError):
            Budget.model_validate(bad)
    with pytest.raises(ValidationError):
        Budget(calls=1).calls = 2  # type: ignore[misc]  # frozen: a trial's limits never move
