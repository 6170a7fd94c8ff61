"""``harness schema``: the JSON Schemas of what harness reads and writes.

``scenario`` (scenario.yml), ``report`` (verify/report.json), ``run`` (run.json),
``controls`` (controls.json) and ``ledger`` (a job's per-trial ledger entry).
"""

from __future__ import annotations

import json
from typing import Any

import typer
from pydantic import BaseModel

from harness.grader.record import ControlsRecord
from harness.job.ledger import TrialEntry
from harness.results import RunMeta
from harness.results.report import Report
from harness.scenario.model import json_schema

schema_app = typer.Typer(no_args_is_help=True, help="Print JSON Schemas for editors.")


def _print(schema: dict[str, Any]) -> None:
    typer.echo(json.dumps(schema, indent=2))


def _model(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema()


@schema_app.command("scenario")
def schema_scenario() -> None:
    """The JSON Schema of scenario.yml."""
    _print(json_schema())


@schema_app.command("report")
def schema_report() -> None:
    """The JSON Schema of verify/report.json."""
    _print(_model(Report))


@schema_app.command("run")
def schema_run() -> None:
    """The JSON Schema of run.json."""
    _print(_model(RunMeta))


@schema_app.command("controls")
def schema_controls() -> None:
    """The JSON Schema of controls.json."""
    _print(_model(ControlsRecord))


@schema_app.command("ledger")
def schema_ledger() -> None:
    """The JSON Schema of a job ledger entry (jobs/<job>/trials/<trial>.json)."""
    _print(_model(TrialEntry))


__all__ = ["schema_app"]
