"""A check's measurement and its row: scores clamped, a fraction of nothing unavailable
(not a zero), absent a real zero, evidence as strings, and which rows count and fail."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from harness.scoring.rows import Row, Status, absent, fraction, graded, unavailable

pytestmark = pytest.mark.unit


def test_measurements() -> None:
    assert graded(1.0000001).score == 1.0 and graded(-1e-12).score == 0.0
    half = fraction(1, 2, "rows shown", evidence=Path("/e/page.png"))
    assert (half.score, half.detail, half.evidence) == (0.5, "1/2: rows shown", ["/e/page.png"])
    none = fraction(0, 0)
    assert none.status is Status.UNAVAILABLE and none.detail == "nothing to measure (0 items)"
    assert absent("no page").status is Status.ABSENT and absent("no page").score == 0.0
    assert unavailable("browser down", ["a", Path("b")]).evidence == ["a", "b"]
    with pytest.raises(TypeError, match="evidence must be"):
        graded(1.0, evidence=3)


def test_which_rows_count_and_which_failed() -> None:
    def row(score: float, status: Status = Status.OK) -> Row:
        return Row(check="c", tier="core", harm="h", score=score, status=status)

    assert row(0.0).failed and not row(0.1).failed
    assert row(0.0, Status.ABSENT).failed and row(0.0, Status.VACUOUS).failed
    assert not row(0.0, Status.UNAVAILABLE).failed and not row(0.0, Status.UNAVAILABLE).counts
    assert row(0.0, Status.ABSENT).counts
    with pytest.raises(ValidationError):
        row(1.5)
