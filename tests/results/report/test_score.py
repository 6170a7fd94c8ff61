"""The score's record declares what ``scoring.Score`` writes, field for field, in order."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from harness.results.report.score import (
    BlockRecord,
    FactorRecord,
    GateRecord,
    MustRecord,
    RowRecord,
    ScoreRecord,
)
from harness.scoring import Score
from harness.scoring.compose import Factor, GateResult, RootBlock
from harness.scoring.must import MustResult
from harness.scoring.rows import Row, Status

pytestmark = pytest.mark.unit


def _written(model: type[BaseModel]) -> list[str]:
    """The keys ``model.model_dump()`` writes, in order (computed fields last)."""
    return [*model.model_fields, *model.model_computed_fields]


@pytest.mark.parametrize(
    ("record", "source"),
    [
        (ScoreRecord, Score),
        (GateRecord, GateResult),
        (FactorRecord, Factor),
        (BlockRecord, RootBlock),
        (RowRecord, Row),
        (MustRecord, MustResult),
    ],
)
def test_record_has_the_source_fields_in_order(
    record: type[BaseModel], source: type[BaseModel]
) -> None:
    assert list(record.model_fields) == _written(source)


def test_row_status_words_are_the_scorers() -> None:
    assert "ok, unavailable, absent or vacuous" in str(RowRecord.model_fields["status"].description)
    assert {s.value for s in Status} == {"ok", "unavailable", "absent", "vacuous"}


def test_a_row_dump_reads_back_unchanged() -> None:
    row = Row(check="app.health", tier="critical", harm="dead", score=0.5, critical=True)
    dumped = row.model_dump(mode="json")
    assert RowRecord.model_validate(dumped).model_dump(mode="json", exclude_unset=True) == dumped
