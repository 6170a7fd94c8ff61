"""``harness schema``: each document's JSON Schema on stdout, valid JSON, describing the
fields of what harness reads or writes."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from harness.cli.schema import schema_app

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("kind", "title", "field"),
    [
        ("scenario", None, "verify"),
        ("report", "Report", "outcome"),
        ("run", "RunMeta", "run_id"),
        ("controls", "ControlsRecord", None),
        ("ledger", "TrialEntry", "status"),
    ],
)
def test_each_schema_is_json_describing_its_document(
    kind: str, title: str | None, field: str | None
) -> None:
    out = CliRunner().invoke(schema_app, [kind])
    assert out.exit_code == 0, out.output
    schema = json.loads(out.stdout)
    assert schema["type"] == "object" and schema["properties"]
    if title is not None:
        assert schema["title"] == title
    if field is not None:
        assert field in schema["properties"]


def test_the_ledger_schema_carries_its_field_descriptions() -> None:
    schema = json.loads(CliRunner().invoke(schema_app, ["ledger"]).stdout)
    assert schema["properties"]["infra_errors"]["description"] == "attempts that ended in `error`"


def test_an_unknown_document_is_refused() -> None:
    out = CliRunner().invoke(schema_app, ["nonsense"])
    assert out.exit_code == 2
