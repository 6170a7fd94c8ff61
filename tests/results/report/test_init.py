"""report.json from typed parts: byte for byte what the dict-built report wrote, and its
JSON Schema.

``data/reports/<case>/input.json`` holds what ``build_report`` was given (run.json, the
verify outcome, the verdict word, progress, the grader's verdict, the trial's extra
fields, the verification time); ``report.json`` what the code before the typed parts
(main at db30472) wrote for it. The pytest, go, app-suite and error cases were captured
from real trials (``harness exec --sandbox local``: oracle and nop on py/ledger-rounding,
oracle on go/wordfreq and apps/invoice-sync, a verifier that raised); ``stopped`` (a
trial its budget stopped before grading: nothing graded, the app-scoring slot never
asked for), ``agent-error`` (the harness's error in the agent phase, every budget limit,
a truncated diff) and ``bare`` (a manual verify of an empty run.json) are derived from
them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

import harness.verify.report as verify_report
from harness.cli import app
from harness.results.report import Report
from harness.util.fs import write_json
from harness.verify.outcome import VerifyOutcome

pytestmark = pytest.mark.unit

DATA = Path(__file__).parent / "data" / "reports"
CASES = sorted(p.name for p in DATA.iterdir() if p.is_dir())


def _build(case: str, monkeypatch: pytest.MonkeyPatch) -> Report:
    given = json.loads((DATA / case / "input.json").read_text(encoding="utf-8"))
    monkeypatch.setattr(verify_report, "now_iso", lambda: given["verified_at"])
    return verify_report.build_report(
        given["run"],
        VerifyOutcome.model_validate(given["outcome"]),
        given["result"],
        given["progress"],
        grader=given["grader"],
        extra=given["extra"],
    )


def test_the_cases_cover_each_kind_of_run() -> None:
    assert {
        "pytest",
        "pytest-failed",
        "go",
        "app",
        "error",
        "stopped",
        "agent-error",
        "bare",
    } <= set(CASES)


@pytest.mark.parametrize("case", CASES)
def test_report_json_is_byte_for_byte_as_before(
    case: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    report = _build(case, monkeypatch)
    assert isinstance(report, Report)
    write_json(tmp_path / "report.json", report.as_json())
    assert (tmp_path / "report.json").read_bytes() == (DATA / case / "report.json").read_bytes()


@pytest.mark.parametrize("case", CASES)
def test_every_key_written_is_declared(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing a run writes travels as an undeclared extra, at any depth."""
    report = _build(case, monkeypatch)

    def extras(model: Any, where: str) -> list[str]:
        found = [f"{where}.{k}" for k in (model.model_extra or {})]
        for name in type(model).model_fields:
            value = getattr(model, name)
            for i, item in enumerate(value if isinstance(value, list) else [value]):
                if isinstance(item, BaseModel):
                    found += extras(item, f"{where}.{name}[{i}]")
        return found

    assert extras(report, "report") == []


def test_the_parts_are_typed_not_dicts() -> None:
    loose = [name for name, field in Report.model_fields.items() if "Any" in str(field.annotation)]
    assert loose == []


def test_every_field_is_described() -> None:
    undescribed: list[str] = []

    def walk(schema: dict[str, Any], where: str) -> None:
        for name, prop in schema.get("properties", {}).items():
            if not prop.get("description"):
                undescribed.append(f"{where}.{name}")

    schema = Report.model_json_schema()
    walk(schema, "Report")
    for name, part in schema.get("$defs", {}).items():
        walk(part, name)
        if not part.get("description"):
            undescribed.append(name)
    assert undescribed == []


def test_harness_schema_report_prints_the_nested_schema() -> None:
    done = CliRunner().invoke(app, ["schema", "report"])
    assert done.exit_code == 0, done.output
    schema = json.loads(done.output)
    assert schema == Report.model_json_schema()
    parts = schema["$defs"]
    assert {"ScoreRecord", "RowRecord", "TestRow", "RulesRow", "TargetRow", "Progress"} <= set(
        parts
    )
    assert parts["SandboxPolicy"]["properties"]["read-only-root"]["type"] == "boolean"
    tests_items = schema["properties"]["tests"]["items"]
    assert tests_items["discriminator"]["propertyName"] == "kind"
