"""A scenario name that names nothing: the fix offers the closest names."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.scenario.hints import scenario_hint

pytestmark = pytest.mark.unit

KNOWN = ["go/wordfreq", "py/ledger-rounding", "smoke/go-fast", "smoke/py-fast"]


def test_a_typo_or_a_missing_family_finds_the_scenario() -> None:
    root = Path("/p/scenarios")
    assert scenario_hint("py/ledger-roundin", KNOWN, root).startswith(
        "did you mean py/ledger-rounding?"
    )
    assert scenario_hint("wordfreq", KNOWN, root).startswith("did you mean go/wordfreq?")
    both = scenario_hint("smoke/fast", KNOWN, root)
    assert "smoke/go-fast" in both and "smoke/py-fast" in both
    assert scenario_hint("zzz", KNOWN, root) == (
        "`harness scenarios` lists the 4 scenarios under /p/scenarios"
    )
    assert "HARNESS_HOME" in scenario_hint("x", [], root)
