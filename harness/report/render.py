"""Render era tables as a terminal table, CSV, JSON or Markdown.

Every format keeps eras apart: the terminal and Markdown forms print one table per era,
CSV and JSON carry the era on every row.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table

from harness.report.stats import NOT_MEASURABLE
from harness.report.summary import EntrantSummary, EraTable

FORMATS = ("table", "csv", "json", "md")
CSV_FIELDS = (
    "era",
    "rank",
    "agent",
    "agent_version",
    "model",
    "scenarios",
    "runs",
    "infra_errors",
    "success_rate",
    "score_mean",
    "score_se",
    "partial_score",
    "cost_usd",
    "energy_kwh",
    "wall_s",
    "prompt_tokens",
    "cached_tokens",
    "completion_tokens",
    "budget_hits",
    "limit_hits",
    "vs_above",
)


def _f(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _int(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def score_text(e: EntrantSummary) -> str:
    if e.score.mean is None:
        return "-"
    se = "?" if e.score.se is None else f"{e.score.se:.3f}"
    return f"{e.score.mean:.3f} ± {se}"


def rank_text(e: EntrantSummary) -> str:
    return f"={e.rank}" if e.vs_above == NOT_MEASURABLE else str(e.rank)


COLUMNS: list[tuple[str, Callable[[EntrantSummary], str]]] = [
    ("#", rank_text),
    ("agent", lambda e: e.agent),
    ("version", lambda e: e.agent_version),
    ("model", lambda e: e.model),
    ("scenarios", lambda e: str(e.scenarios)),
    ("runs", lambda e: str(e.runs)),
    ("infra errors", lambda e: str(e.infra_errors)),
    ("success", lambda e: _pct(e.success_rate)),
    ("score ± se", score_text),
    ("partial", lambda e: _f(e.partial)),
    ("cost $", lambda e: _f(e.cost_usd, 4)),
    ("kWh", lambda e: _f(e.energy_kwh, 4)),
    ("wall s", lambda e: _f(e.wall_s, 1)),
    ("tok in", lambda e: _int(e.prompt_tokens)),
    ("tok cached", lambda e: _int(e.cached_tokens)),
    ("tok out", lambda e: _int(e.completion_tokens)),
    ("budget hits", lambda e: str(e.budget_hits)),
    ("limit hits", lambda e: str(e.limit_hits)),
    ("vs above", lambda e: e.vs_above if e.vs_above == NOT_MEASURABLE else ""),
]


def print_tables(tables: list[EraTable], console: Console) -> None:
    if not tables:
        console.print("no results (smoke scenarios are never reported)")
        return
    for t in tables:
        table = Table(title=f"era {t.era}", title_justify="left")
        for name, _ in COLUMNS:
            table.add_column(name, no_wrap=True, justify="left" if name.isalpha() else "right")
        for e in t.entrants:
            table.add_row(*(fn(e) for _, fn in COLUMNS))
        console.print(table)
        console.print()


def to_markdown(tables: list[EraTable]) -> str:
    out: list[str] = []
    for t in tables:
        out += [f"**era `{t.era}`**", ""]
        out.append("| " + " | ".join(name for name, _ in COLUMNS) + " |")
        out.append("|" + "|".join("---" for _ in COLUMNS) + "|")
        for e in t.entrants:
            cells = [fn(e).replace("|", "\\|") for _, fn in COLUMNS]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    if not tables:
        out.append("_no results_")
    return "\n".join(out).rstrip() + "\n"


def to_records(tables: list[EraTable]) -> list[dict[str, Any]]:
    return [{"era": t.era, **e.as_dict()} for t in tables for e in t.entrants]


def to_csv(tables: list[EraTable]) -> str:
    records = to_records(tables)
    buf = io.StringIO()
    fields = list(records[0]) if records else list(CSV_FIELDS)
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for rec in records:
        writer.writerow({k: "" if v is None else v for k, v in rec.items()})
    return buf.getvalue()


def to_json(tables: list[EraTable], generated_at: str) -> str:
    doc = {
        "generated_at": generated_at,
        "eras": [{"era": t.era, "entrants": [e.as_dict() for e in t.entrants]} for t in tables],
    }
    return json.dumps(doc, indent=2) + "\n"
