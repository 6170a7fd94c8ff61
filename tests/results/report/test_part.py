"""What every part of report.json shares: extra keys travel along after the declared ones,
and numbers are written as they were given."""

from __future__ import annotations

import json

import pytest

from harness.results.report.part import Number, Part

pytestmark = pytest.mark.unit


class _Score(Part):
    final: Number
    label: str = ""


def test_extra_keys_travel_after_the_declared_ones() -> None:
    part = _Score.model_validate({"added_by_a_suite": [1, 2], "final": 1, "label": "x"})
    assert list(part.model_dump()) == ["final", "label", "added_by_a_suite"]
    assert part.model_dump()["added_by_a_suite"] == [1, 2]


def test_numbers_are_written_as_given() -> None:
    assert json.loads(_Score(final=1).model_dump_json())["final"] == 1
    assert _Score(final=1).model_dump_json().startswith('{"final":1,')
    assert _Score(final=1.0).model_dump_json().startswith('{"final":1.0,')
