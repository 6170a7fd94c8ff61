"""HTML for the board's three page types: the overview, an entrant, and a run card.

Every piece of text from results goes through ``esc`` (``html.escape``); pages link one
stylesheet and one script by relative path, so the folder works from ``file://``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from html import escape
from typing import Any

from harness.report.board.svg import PlotPoint, scatter
from harness.report.collect import RunResult
from harness.report.render import COLUMNS
from harness.report.stats import NOT_MEASURABLE
from harness.report.summary import EntrantSummary, EraTable
from harness.report.trialview import check_state

_SPECIAL = re.compile("[&<>\"']")


def esc(value: Any) -> str:
    """``html.escape`` of the value's text (most values need none: one search, then)."""
    text = "" if value is None else str(value)
    return escape(text) if _SPECIAL.search(text) else text


def layout(title: str, body: str, depth: int) -> str:
    up = "../" * depth
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title)}</title>"
        f'<link rel="stylesheet" href="{up}style.css"></head><body>'
        f'<header><a href="{up}index.html">harness results</a> &middot; {esc(title)}</header>'
        f'<main>{body}</main><script src="{up}board.js"></script></body></html>\n'
    )


def table(headers: Iterable[str], rows: Iterable[Sequence[str]], cls: str = "sortable") -> str:
    """``rows`` cells are already-escaped HTML."""
    head = "".join([f"<th>{esc(h)}</th>" for h in headers])
    body = "".join(
        ["<tr><td>" + "</td><td>".join(r) + "</td></tr>" if r else "<tr></tr>" for r in rows]
    )
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


@lru_cache(maxsize=4096)  # a few entrants, asked once per run page and entrant row
def entrant_slug(agent: str, version: str, model: str) -> str:
    raw = f"{agent}-{version}-{model}"
    return "".join(c if c.isalnum() or c in "-._" else "-" for c in raw)


def _entrant_rows(t: EraTable, depth: int) -> list[list[str]]:
    rows = []
    for e in t.entrants:
        href = f"{'../' * depth}entrants/{entrant_slug(e.agent, e.agent_version, e.model)}.html"
        cells = []
        for name, fn in COLUMNS:
            text = esc(fn(e))
            if name == "agent":
                text = f'<a class="entrant" href="{esc(href)}">{text}</a>'
            if name == "vs above" and e.vs_above == NOT_MEASURABLE:
                text = f'<span class="nm">{text}</span>'
            cells.append(text)
        rows.append(cells)
    return rows


def _plots(t: EraTable, era_id: str) -> str:
    def points(attr: str) -> tuple[list[PlotPoint], list[str]]:
        pts, missing = [], []
        for e in t.entrants:
            x = getattr(e, attr)
            href = f"entrants/{entrant_slug(e.agent, e.agent_version, e.model)}.html"
            if x is None or e.score.mean is None:
                missing.append(e.label)
            else:
                pts.append(PlotPoint(e.label, x, e.score.mean, href))
        return pts, missing

    out = ['<div class="plots">']
    for attr, label, suffix in (
        ("cost_usd", "cost $ per run", "cost"),
        ("wall_s", "wall time s per run", "wall"),
    ):
        pts, missing = points(attr)
        out.append("<figure>")
        if pts:
            out.append(scatter(pts, label, f"plot-{era_id}-{suffix}"))
        else:
            out.append(f'<p class="note">score against {esc(label)}: nothing recorded</p>')
        if missing and pts:
            out.append(
                f'<figcaption class="note">not plotted (unknown): '
                f"{esc(', '.join(missing))}</figcaption>"
            )
        out.append("</figure>")
    out.append("</div>")
    return "".join(out)


def overview(
    tables: list[EraTable], graders: dict[str, str] | None = None, selection: str = ""
) -> str:
    runs = sum(len(e.run_ids) for t in tables for e in t.entrants)
    parts = [
        "<h1>Results by scorer era</h1>",
        f'<p class="selection">{runs} run(s); {esc(selection or "selection: as given")}</p>',
        '<p class="note">Eras are never mixed. Infra errors are not counted against '
        'the agent. Ranks shared with "=" are differences inside the combined '
        "standard error (not measurable).</p>",
    ]
    if not tables:
        parts.append("<p>No results yet (smoke scenarios are never shown).</p>")
    for i, t in enumerate(tables):
        era_id = f"era-{i}"
        parts.append(
            f'<section class="era" id="{era_id}" data-era="{esc(t.era)}">'
            f"<h2>era <code>{esc(t.era)}</code></h2>"
        )
        if graders and t.era in graders:
            parts.append(f'<p class="grader">grader: {esc(graders[t.era])}</p>')
        parts.append(table([n for n, _ in COLUMNS], _entrant_rows(t, 0)))
        parts.append(_plots(t, era_id))
        parts.append("</section>")
    return layout("overview", "".join(parts), 0)


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def entrant_page(
    label: str, per_era: list[tuple[EraTable, EntrantSummary, list[RunResult]]]
) -> str:
    parts = [f"<h1>{esc(label)}</h1>"]
    for t, e, runs in per_era:
        parts.append(f'<section class="era"><h2>era <code>{esc(t.era)}</code></h2>')
        parts.append(
            table(
                [n for n, _ in COLUMNS],
                [r for r, s in zip(_entrant_rows(t, 1), t.entrants, strict=True) if s is e],
            )
        )
        parts.append('<div class="cards">')
        for r in runs:
            parts.append(
                f'<div class="card run"><a href="../runs/{esc(r.run_id)}.html">'
                f'{esc(r.scenario)}</a><br><span class="{esc(r.outcome)}">{esc(r.outcome)}'
                f"</span> &middot; score {esc(_fmt(r.score))} &middot; seed "
                f"{esc(r.meta.get('seed'))} &middot; {esc(r.started_at)}</div>"
            )
        parts.append("</div></section>")
    return layout(label, "".join(parts), 1)


def _checks(scoring: dict[str, Any], shots: dict[str, str]) -> str:
    """The scoring rows; each status agrees with its score (``trialview.check_state``),
    and a passing row's consequence reads as what a failure would have meant."""
    rows = []
    for row in scoring.get("rows") or []:
        evidence = []
        for item in row.get("evidence") or []:
            name = str(item).replace("\\", "/").rsplit("/", 1)[-1]
            if name in shots:
                evidence.append(f'<a href="{esc(shots[name])}">{esc(name)}</a>')
            else:
                evidence.append(esc(item))
        crit = f"critical ({row.get('severity')})" if row.get("critical") else row.get("tier")
        state = check_state(row)
        harm = esc(row.get("harm"))
        if state in ("pass", "unavailable"):  # no harm done: the harm only on hover
            harm = f'<span class="note" title="{harm}">-</span>'

        rows.append(
            [
                f"<code>{esc(row.get('check'))}</code>",
                esc(_fmt(row.get("score"))),
                f'<span class="status-{esc(state)}">{esc(state)}</span>',
                esc(crit),
                harm,
                esc(row.get("detail")),
                "<br>".join(evidence),
            ]
        )
    head = ["check", "score", "status", "kind", "consequence (harm)", "detail", "evidence"]
    return table(head, rows, "sortable checks")


def _arithmetic(s: dict[str, Any]) -> str:
    lines = [
        f"inner       {_fmt(s.get('inner'), 4)}   tier means "
        + ", ".join(
            f"{k}={_fmt(v, 3)} (w {s.get('tier_weights', {}).get(k)})"
            for k, v in (s.get("tier_means") or {}).items()
        ),
        f"gate        {_fmt(s.get('gate'), 4)}",
        f"excellence  {_fmt(s.get('excellence'), 4)}   weight {s.get('excellence_weight')}",
        f"base        {_fmt(s.get('base'), 4)}",
    ]
    product = 1.0
    for f in s.get("factors") or []:
        product *= float(f.get("factor") or 0)
        covers = f" covers {', '.join(f['covers'])}" if f.get("covers") else ""
        lines.append(
            f"critical    {_fmt(f.get('factor'), 4)}   {f.get('check')} [{f.get('severity')}]: "
            f"{_fmt(f.get('floor'), 2)} + (1 - {_fmt(f.get('floor'), 2)}) x "
            f"{_fmt(f.get('score'), 4)}{covers}"
        )
    lines.append(
        f"final       {_fmt(s.get('final'), 4)}   = {_fmt(s.get('base'), 4)} x {product:.4f}"
    )
    for b in s.get("blocks") or []:
        lines.append(f"note        {b.get('note', '')}")
    if s.get("unavailable"):
        lines.append(f"unavailable {', '.join(s['unavailable'])}")
    return f'<pre class="arithmetic">{esc(chr(10).join(lines))}</pre>'


def _diff(text: str | None) -> str:
    if not text:
        return '<p class="note">no changes recorded</p>'
    out = []
    for line in text.splitlines():
        cls = (
            "hunk"
            if line.startswith("@@")
            else "add"
            if line.startswith("+") and not line.startswith("+++")
            else "del"
            if line.startswith("-") and not line.startswith("---")
            else ""
        )
        out.append(f'<span class="{cls}">{esc(line)}</span>' if cls else esc(line))
    files = sum(1 for line in text.splitlines() if line.startswith("diff --git"))
    return (
        f'<details class="diff"><summary>{files} file(s) changed, {len(out):,} line(s)</summary>'
        f'<pre class="diff" id="diff">{chr(10).join(out)}</pre></details>'
    )


def _telemetry(run: RunResult) -> str:
    parts = []
    scalars = [(k, v) for k, v in run.usage.items() if not isinstance(v, dict | list)]
    if scalars:
        parts.append(table(["metric", "value"], [[esc(k), esc(v)] for k, v in scalars], "usage"))
    for key, value in run.usage.items():
        if isinstance(value, dict) and all(isinstance(v, dict) for v in value.values()):
            cols = sorted({c for v in value.values() for c in v})
            rows = [[esc(host), *(esc(v.get(c)) for c in cols)] for host, v in value.items()]
            parts.append(f"<h3>{esc(key)}</h3>" + table([key, *cols], rows, "hosts"))
    if not parts:
        parts.append('<p class="note">no model telemetry recorded</p>')
    phases = [
        [esc(p.get("name")), esc(p.get("outcome")), esc(p.get("duration_s")), esc(p.get("detail"))]
        for p in run.phases
    ]
    parts.append(table(["phase", "outcome", "seconds", "detail"], phases, "phases"))
    return "".join(parts)


def run_page(
    run: RunResult,
    shots: dict[str, str],
    diff: str | None,
    diff_note: str,
    trial: str = "",
    top: str = "",
) -> str:
    """A run's card. ``top`` is its first screen, the outcome and why and the failing
    checks (``board/trialpage.py``: why_html, failing_html); ``trial`` the conversation
    and commands (trial_html). Then the checks, the run's fields, the score arithmetic,
    screenshots, the diff and the telemetry, long parts folded."""
    rep, meta = run.report, run.meta
    slug = entrant_slug(run.agent, run.agent_version, run.model)
    head = table(
        ["field", "value"],
        [
            ["scenario", esc(f"{run.scenario} v{meta.get('scenario_version', '?')}")],
            [
                "entrant",
                f'<a href="../entrants/{esc(slug)}.html">'
                f"{esc(f'{run.agent} {run.agent_version} + {run.model}')}</a>",
            ],
            ["outcome", f'<span class="{esc(run.outcome)}">{esc(run.outcome)}</span>'],
            ["score", esc(_fmt(run.score))],
            ["partial score", esc(_fmt(run.partial_score))],
            ["era", esc(run.era)],
            ["seed", esc(meta.get("seed"))],
            ["started", esc(run.started_at)],
            ["wall s", esc(_fmt(run.wall_s, 1))],
            ["run id", esc(run.run_id)],
        ],
        "meta",
    )
    scoring = rep.get("scoring") or {}
    parts = [
        f'<article class="run-card" data-run="{esc(run.run_id)}">',
        f"<h1>{esc(run.scenario)} &middot; {esc(run.agent)} + {esc(run.model)}</h1>",
        top,
        "<h2>checks</h2>",
        _checks(scoring, shots) if scoring else '<p class="note">no scoring</p>',
        "<h2>run</h2>",
        head,
    ]
    if scoring:
        parts.append(
            '<details class="arithmetic"><summary>score arithmetic</summary>'
            + _arithmetic(scoring)
            + "</details>"
        )
    parts.append(trial)
    parts.append("<h2>screenshots</h2>")
    if shots:
        parts += [
            f'<figure><img class="shot" src="{esc(src)}" alt="{esc(name)}">'
            f"<figcaption>{esc(name)}</figcaption></figure>"
            for name, src in sorted(shots.items())
        ]
    else:
        parts.append('<p class="note">none saved by the scorer</p>')
    parts.append(f"<h2>agent's diff</h2>{esc(diff_note)}{_diff(diff)}")
    parts.append("<h2>telemetry</h2>" + _telemetry(run))
    parts.append("</article>")
    return layout(f"{run.scenario} / {run.run_id}", "".join(parts), 1)
