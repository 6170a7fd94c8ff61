"""Write the board: ``index.html``, ``entrants/<slug>.html``, ``runs/<run_id>.html``,
screenshots copied under ``runs/<run_id>/``, plus ``style.css`` and ``board.js``."""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path

from harness.report.board.assets import CSS, JS
from harness.report.board.pages import entrant_page, entrant_slug, overview, run_page
from harness.report.board.trialpage import trial_html
from harness.report.collect import RunResult
from harness.report.summary import EntrantSummary, EraTable, summarise
from harness.report.trialview import load_view
from harness.util.fs import write_atomic as _write_atomic

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg"}
MAX_DIFF = 400_000  # characters shown on a run card; the full diff stays in results/


def copy_screenshots(run: RunResult, site: Path) -> dict[str, str]:
    """Copy the scorer's saved images into the site; name -> path relative to runs/."""
    evidence = run.run_dir / "verify" / "evidence"
    shots: dict[str, str] = {}
    if not evidence.is_dir():
        return shots
    for src in sorted(evidence.rglob("*")):
        if src.is_file() and src.suffix.lower() in IMAGE_SUFFIXES:
            rel = src.relative_to(evidence)
            dest = site / "runs" / run.run_id / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
            shots[src.name] = f"{run.run_id}/{rel.as_posix()}"
    return shots


def _diff(run: RunResult) -> tuple[str | None, str]:
    path = run.run_dir / "workspace.diff"
    if not path.is_file():
        return None, ""
    text = path.read_text(encoding="utf-8", errors="replace")
    if len(text) > MAX_DIFF:
        return text[:MAX_DIFF], f"(first {MAX_DIFF:,} of {len(text):,} characters)"
    return text, ""


def write_atomic(path: Path, data: str) -> None:
    """A page written atomically without an fsync: the board is a derived artefact,
    rebuilt from the results, so a page lost to a power cut costs nothing to redo
    (an fsync per page was 30 s of a 67 s build at 5,000 runs)."""
    _write_atomic(path, data, durable=False)


def build_board(runs: list[RunResult], out: Path) -> Path:
    """Write the whole site for ``runs`` into ``out`` (replacing old pages); returns
    the overview's path."""
    tables: list[EraTable] = summarise(runs)
    for sub in ("entrants", "runs"):
        shutil.rmtree(out / sub, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "style.css", CSS)
    write_atomic(out / "board.js", JS)
    write_atomic(out / "index.html", overview(tables))

    runs_by_id = {r.run_id: r for r in runs}
    per_entrant: dict[str, list[tuple[EraTable, EntrantSummary, list[RunResult]]]] = defaultdict(
        list
    )
    labels: dict[str, str] = {}
    for t in tables:
        for e in t.entrants:
            slug = entrant_slug(e.agent, e.agent_version, e.model)
            labels[slug] = e.label
            per_entrant[slug].append((t, e, [runs_by_id[i] for i in e.run_ids]))
    for slug, items in per_entrant.items():
        write_atomic(out / "entrants" / f"{slug}.html", entrant_page(labels[slug], items))
    for run in (r.full() for r in runs):  # a run page shows the whole report
        shots = copy_screenshots(run, out)
        diff, note = _diff(run)
        # the page shows the diff itself (cut at MAX_DIFF): the view need not read it
        trial = trial_html(load_view(run.run_dir, run.report, diff=""), shots)
        page = run_page(run, shots, diff, note, trial)
        write_atomic(out / "runs" / f"{run.run_id}.html", page)
    return out / "index.html"
