"""``harness report --format csv``: goagentbench's report CSV, column for column.

goagentbench's ``report`` writes one row per agent and model over its verify results:
``agent, model, agent_version, unique_scenarios, count, success,
partial_success_score, success_rate, partial_success_rate, avg_cost, avg_time`` (and,
with ``--include-tokens``, ``avg_tok_input, avg_tok_cached_input,
avg_tok_write_cached_input, avg_tok_output, avg_tok_total``). Numbers are rounded to two
places with trailing zeros dropped (``0.5``, ``1``, ``0``); averages of cost, time and
tokens skip runs where the value is 0; a run's partial score is its own, else 1 for a
success and 0 otherwise; rows are ordered by success rate, then partial rate (both
descending), then agent and model. Cells are quoted as Go's ``encoding/csv`` quotes
them. harness's differences: runs that ended in ``error`` (the harness's fault) are not
counted, and the selection (``--limit``, versions) is harness's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from harness.report.collect import RunResult
from harness.results.gab import token_usage

HEADER = [
    "agent",
    "model",
    "agent_version",
    "unique_scenarios",
    "count",
    "success",
    "partial_success_score",
    "success_rate",
    "partial_success_rate",
    "avg_cost",
    "avg_time",
]
TOKEN_HEADER = [
    "avg_tok_input",
    "avg_tok_cached_input",
    "avg_tok_write_cached_input",
    "avg_tok_output",
    "avg_tok_total",
]
TOKEN_KEYS = ("input", "cached_input", "write_cached_input", "output", "total")


def number(v: float) -> str:
    """goagentbench's number: two places (half away from zero, a hair of 1e-9 towards
    it so 1.005 is 1.01), trailing zeros and point dropped, never "-0"."""
    x = (v + math.copysign(1e-9, v)) * 100
    rounded = (math.floor(x + 0.5) if x >= 0 else math.ceil(x - 0.5)) / 100
    if rounded == 0:
        return "0"
    text = f"{rounded:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def cell(text: str) -> str:
    """A cell as Go's ``encoding/csv`` writes it (quoted when it holds a comma, a quote
    or a line break, starts with white space, or is ``\\.``)."""
    if text == "":
        return text
    if text == "\\." or any(c in text for c in ',"\r\n') or text[0].isspace():
        return '"' + text.replace('"', '""') + '"'
    return text


_SEMVER = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)(?:-([^+]*))?(?:\+.*)?$")


def _version_key(v: str) -> tuple[int, int, int, int, str]:
    m = _SEMVER.match(v.strip())
    assert m is not None
    pre = m.group(4) or ""
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)), 0 if pre.strip() else 1, pre)


def versions_text(versions: Iterable[str]) -> str:
    """The versions of a row: semver-like in version order, then the rest by name."""
    seen = sorted({v for v in versions if v.strip()})
    semver = sorted((v for v in seen if _SEMVER.match(v.strip())), key=_version_key)
    return ",".join([*semver, *(v for v in seen if not _SEMVER.match(v.strip()))])


def _avg(values: Iterable[float]) -> float:
    kept = [v for v in values if v != 0]
    return sum(kept) / len(kept) if kept else 0.0


@dataclass
class GabRow:
    agent: str
    model: str
    runs: list[RunResult] = field(default_factory=list)

    @property
    def success(self) -> int:
        return sum(r.outcome == "success" for r in self.runs)

    @property
    def partial_sum(self) -> float:
        return sum(
            r.partial_score if r.partial_score is not None else float(r.outcome == "success")
            for r in self.runs
        )

    @property
    def success_rate(self) -> float:
        return self.success / len(self.runs)

    @property
    def partial_rate(self) -> float:
        return self.partial_sum / len(self.runs)

    def cells(self, include_tokens: bool) -> list[str]:
        usage = [token_usage(r.usage) for r in self.runs]
        out = [
            self.agent,
            self.model,
            versions_text(r.agent_version for r in self.runs),
            str(len({r.scenario for r in self.runs})),
            str(len(self.runs)),
            str(self.success),
            number(self.partial_sum),
            number(self.success_rate),
            number(self.partial_rate),
            number(_avg(float(u["cost"]) for u in usage)),
            number(_avg(r.wall_s or 0.0 for r in self.runs)),
        ]
        if include_tokens:
            out += [number(_avg(float(u[k]) for u in usage)) for k in TOKEN_KEYS]
        return out


def gab_rows(runs: Iterable[RunResult]) -> list[GabRow]:
    """One row per agent and model over the graded runs, in goagentbench's order."""
    rows: dict[tuple[str, str], GabRow] = {}
    for run in runs:
        if run.infra_error:
            continue
        key = (run.agent.strip(), run.model.strip())
        rows.setdefault(key, GabRow(*key)).runs.append(run)
    return sorted(rows.values(), key=lambda r: (-r.success_rate, -r.partial_rate, r.agent, r.model))


def gab_csv(runs: Iterable[RunResult], include_tokens: bool = False) -> str:
    header = HEADER + (TOKEN_HEADER if include_tokens else [])
    lines = [header, *(row.cells(include_tokens) for row in gab_rows(runs))]
    return "".join(",".join(cell(c) for c in line) + "\n" for line in lines)
