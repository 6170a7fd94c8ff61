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
from rich.measure import Measurement
from rich.table import Table

from harness.report.stats import NOT_MEASURABLE, TOO_FEW
from harness.report.summary import EntrantSummary, EraTable

FORMATS = ("table", "csv", "json", "md")
TOKEN_FIELDS = ("prompt_tokens", "cached_tokens", "completion_tokens")
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
    "success_low",
    "success_high",
    "success_rate_errors_as_zero",
    "score_mean",
    "score_se",
    "score_low",
    "score_high",
    "score_interval",
    "score_errors_as_zero",
    "trials",
    "pass_at_k",
    "pass_hat_k",
    "flip_rate",
    "partial_score",
    "cost_usd",
    "energy_kwh",
    "wall_s",
    "ttft_s",
    "decode_tps",
    "engine",
    *TOKEN_FIELDS,
    "budget_hits",
    "limit_hits",
    "failovers",
    "vs_above",
    "vs_above_detail",
    "separably_better",
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


def interval_text(e: EntrantSummary) -> str:
    s = e.score
    if s.low is None or s.high is None:
        return "-"
    return f"[{s.low:.2f}, {s.high:.2f}]" + (" W" if s.method == "wilson" else "")


def pass_text(e: EntrantSummary) -> str:
    if e.pass_at_k is None or e.pass_hat_k is None:
        return "-"
    return f"k={e.trials}: {e.pass_at_k:.2f} / {e.pass_hat_k:.2f}"


def rank_text(e: EntrantSummary) -> str:
    if e.vs_above == TOO_FEW:
        return "-"
    return f"={e.rank}" if e.vs_above == NOT_MEASURABLE else str(e.rank)


def vs_above_text(e: EntrantSummary) -> str:
    """Short: the word and the pair's p (the full test is in ``vs_above_detail``)."""
    if not e.vs_above or e.vs_above == TOO_FEW:
        return e.vs_above
    word = NOT_MEASURABLE if e.vs_above == NOT_MEASURABLE else "below"
    return f"{word} (p={e.vs_above_p:.2g})" if e.vs_above_p is not None else word


Column = tuple[str, Callable[[EntrantSummary], str]]
TOKEN_COLUMNS: list[Column] = [
    ("tok in", lambda e: _int(e.prompt_tokens)),
    ("tok cached", lambda e: _int(e.cached_tokens)),
    ("tok out", lambda e: _int(e.completion_tokens)),
]


def columns(include_tokens: bool = True) -> list[Column]:
    """The table's columns; token columns only when asked for (goagentbench's
    ``--include-tokens``)."""
    return [
        ("#", rank_text),
        ("agent", lambda e: e.agent),
        ("version", lambda e: e.agent_version),
        ("model", lambda e: e.model),
        ("engine", lambda e: e.engine),
        ("scenarios", lambda e: str(e.scenarios)),
        ("runs", lambda e: str(e.runs)),
        ("infra err", lambda e: str(e.infra_errors)),
        ("success", lambda e: _pct(e.success_rate)),
        ("err as 0", lambda e: _pct(e.success_as_zero.mean)),
        ("score ± se", score_text),
        ("95% CI", interval_text),
        ("pass@k/^k", pass_text),
        ("partial", lambda e: _f(e.partial)),
        ("cost $", lambda e: _f(e.cost_usd, 4)),
        ("kWh", lambda e: _f(e.energy_kwh, 4)),
        ("wall s", lambda e: _f(e.wall_s, 1)),
        ("ttft s", lambda e: _f(e.ttft_s, 3)),
        ("decode tok/s", lambda e: _f(e.decode_tps, 1)),
        *(TOKEN_COLUMNS if include_tokens else []),
        ("budget hits", lambda e: str(e.budget_hits)),
        ("limit hits", lambda e: str(e.limit_hits)),
        ("vs above", vs_above_text),
    ]


COLUMNS = columns(include_tokens=True)
LEGEND = (
    "success and score leave infra errors out (err as 0: counted as failures); "
    "means are over scenarios of each scenario's mean; 95% CI is t, or Wilson (W) near 0 or 1"
)


def print_table(console: Console, table: Table) -> None:
    """``table`` on ``console``; when not on a terminal (piped, redirected) at its natural
    width, so no cell is cut with "…" to fit a width nobody is looking at."""
    if console.is_terminal:
        console.print(table)
        return
    wide = Console(file=console.file, width=100_000, color_system=None)
    width = Measurement.get(wide, wide.options, table).maximum
    Console(file=console.file, width=max(width, 20), color_system=None).print(table)


def print_tables(tables: list[EraTable], console: Console, include_tokens: bool = True) -> None:
    if not tables:
        console.print("no results (smoke scenarios are never reported)")
        return
    cols = columns(include_tokens)
    for t in tables:
        table = Table(title=f"era {t.era}", title_justify="left")
        for name, _ in cols:
            table.add_column(name, no_wrap=True, justify="left" if name.isalpha() else "right")
        for e in t.entrants:
            table.add_row(*(fn(e) for _, fn in cols))
        print_table(console, table)
        for line in t.notes(detail=True):
            console.print(f"  {line}", highlight=False, soft_wrap=True)
        console.print()
    console.print(LEGEND, highlight=False, soft_wrap=True)


def to_markdown(tables: list[EraTable], include_tokens: bool = True) -> str:
    out: list[str] = []
    cols = columns(include_tokens)
    for t in tables:
        out += [f"**era `{t.era}`**", ""]
        out.append("| " + " | ".join(name for name, _ in cols) + " |")
        out.append("|" + "|".join("---" for _ in cols) + "|")
        for e in t.entrants:
            cells = [fn(e).replace("|", "\\|") for _, fn in cols]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
        out += [f"_{line}_" for line in t.notes(detail=True)]
        if t.notes():
            out.append("")
    if not tables:
        out.append("_no results_")
    else:
        out += [f"_{LEGEND}_", ""]
    return "\n".join(out).rstrip() + "\n"


def to_records(tables: list[EraTable], include_tokens: bool = True) -> list[dict[str, Any]]:
    skip = () if include_tokens else TOKEN_FIELDS
    return [
        {k: v for k, v in {"era": t.era, **e.as_dict()}.items() if k not in skip}
        for t in tables
        for e in t.entrants
    ]


def to_csv(tables: list[EraTable], include_tokens: bool = True) -> str:
    records = to_records(tables, include_tokens)
    buf = io.StringIO()
    skip = () if include_tokens else TOKEN_FIELDS
    fields = [f for f in CSV_FIELDS if f not in skip]
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for rec in records:
        writer.writerow({k: _cell(v) for k, v in rec.items()})
    return buf.getvalue()


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, list):
        return "; ".join(str(v) for v in value)
    return value


def table_json(t: EraTable) -> dict[str, Any]:
    return {
        "era": t.era,
        "entrants": [e.as_dict() for e in t.entrants],
        "shared_scenarios": t.shared,
        "scenarios": t.union,
        "mde": t.mde,
        "mde_scenarios": t.mde_t,
        "notes": t.notes(),
    }


def to_json(tables: list[EraTable], generated_at: str) -> str:
    doc = {"generated_at": generated_at, "eras": [table_json(t) for t in tables]}
    return json.dumps(doc, indent=2) + "\n"
