"""SPEC coverage: each MUST id with the checks that verify it and the defects that violate
it exactly (proven failing, when controls ran); the verdict a score or ledger line gives."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from harness.scoring.coverage import static_coverage, succeeds, unknown_ids

pytestmark = pytest.mark.unit

IDS = {"M-1": "totals are exact", "M-2": "rows are listed", "M-3": "exports are CSV"}
DECLARED = {"total": ("M-1",), "list": ("M-2",)}
VIOLATIONS = {"float-money": ["M-1"], "both": ["M-1", "M-2"], "ghost": ["M-9"]}


def test_each_id_is_covered_or_says_what_it_lacks() -> None:
    rows = {r.id: r for r in static_coverage(IDS, DECLARED, VIOLATIONS)}
    assert list(rows) == ["M-1", "M-2", "M-3"]  # SPEC order
    assert rows["M-1"].problem is None and rows["M-1"].exact == ["float-money"]
    assert rows["M-1"].defects == ["float-money", "both"]
    assert rows["M-2"].problem == "NO DEFECT"  # only violated together with another id
    assert rows["M-3"].problem == "NO CHECK"
    proven = {r.id: r for r in static_coverage(IDS, DECLARED, VIOLATIONS, {"float-money": False})}
    assert proven["M-1"].problem == "NO FAILING DEFECT" and proven["M-1"].failing_exact == []
    assert proven["M-1"].line().endswith("NO FAILING DEFECT  failing: []")
    assert unknown_ids(IDS, VIOLATIONS) == ["ghost: M-9"]


def test_the_verdict_follows_the_musts_when_the_spec_has_ids() -> None:
    def verdict(final: float, spec_met: bool | None, measurable: bool = True) -> SimpleNamespace:
        return SimpleNamespace(final=final, spec_met=spec_met, measurable=measurable)

    assert succeeds(verdict(0.2, True), 0.9)  # the MUSTs decide, not the bar
    assert not succeeds(verdict(0.99, False), 0.9)
    assert succeeds(verdict(0.9, None), 0.9) and not succeeds(verdict(0.89, None), 0.9)
    assert not succeeds(verdict(1.0, True, measurable=False), 0.9)
