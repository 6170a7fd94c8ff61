"""``controls.json`` as a typed record: the header written first, then the report, then
keys other modules added; read back to the same record."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from harness.grader.record import HEADER, ControlsRecord

pytestmark = pytest.mark.unit

DOC = {
    "era": "tests@1.0.0",
    "controls": [],
    "defects": [],
    "verdict": "trusted",
    "scenario": "go/x",
    "scenario_version": "1.0.0",
    "scenario_sha": "ab" * 32,
    "at": "2030-01-01T00:00:00Z",
    "sandbox": "docker",
    "environment": {"image": "scorer:1"},
    "seed": "00c0ffee00c0ffee",
    "scoring": "one at a time",
    "high": 1,
    "low": 0.0,
    "low_tree": "do-nothing",
    "nop": 0.0,
    "defect_scores": {"off-by-one": 0.25},
    "added_later": {"by": "another module"},
}


def test_the_header_comes_first_and_extra_keys_last() -> None:
    written = ControlsRecord.model_validate(DOC).as_json()
    keys = list(written)
    assert keys[: len(HEADER)] == list(HEADER)
    assert keys[len(HEADER) : len(HEADER) + 4] == ["era", "controls", "defects", "verdict"]
    assert keys[-1] == "added_later" and written["added_later"] == {"by": "another module"}
    assert written["high"] == 1 and isinstance(written["high"], int)  # as given
    assert ControlsRecord.model_validate(written).as_json() == written
    assert written["reused"] == [] and written["mutation"] is None


def test_a_record_without_its_header_is_refused() -> None:
    for key in ("scenario", "seed", "verdict"):
        with pytest.raises(ValidationError):
            ControlsRecord.model_validate({k: v for k, v in DOC.items() if k != key})
