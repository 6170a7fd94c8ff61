"""The rows about the tests: the same fields as the verifier's results, the rules row
told apart by its ``kind``."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter

from harness.results.report.targets import CaseRow, Row, RuleRow, RulesRow, TestRow
from harness.verify import outcome
from harness.verify.rules import RuleResult

pytestmark = pytest.mark.unit


def test_case_and_rule_rows_have_the_verifier_fields_in_order() -> None:
    assert list(CaseRow.model_fields) == list(outcome.TestCase.model_fields)
    assert list(RuleRow.model_fields) == list(RuleResult.model_fields)


def test_the_rules_row_is_told_apart_by_its_kind() -> None:
    rows = TypeAdapter(list[Row]).validate_python(
        [
            {"name": "verify.modification-rules", "passed": False, "output": "", "kind": "rules"}
            | {"error": "must-modify x: nothing modified there", "cases": []},
            {"name": "t.py", "passed": True, "output": "", "error": None, "kind": "required"}
            | {"passed_tests": 1, "total_tests": 1, "cases": []},
        ]
    )
    assert [type(r) for r in rows] == [RulesRow, TestRow]
    # each is written in goagentbench's order: the rules row has its kind before its error
    assert list(rows[0].model_dump()) == ["name", "passed", "output", "kind", "error", "cases"]
    assert list(rows[1].model_dump())[3:5] == ["error", "kind"]


def test_an_unknown_row_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="kind"):
        TypeAdapter(Row).validate_python({"name": "x", "passed": True, "kind": "other"})
