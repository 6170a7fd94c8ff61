"""Write the board: ``index.html``, ``entrants/<slug>.html``, ``runs/<run_id>.html``,
screenshots copied under ``runs/<run_id>/``, plus ``style.css`` and ``board.js``; a
second build over unchanged results rewrites no run page (``incremental``)."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import sys
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from contextlib import suppress
from pathlib import Path
from typing import Any

from harness.report import collect, trialview
from harness.report.board import pages, trialpage
from harness.report.board.assets import CSS, JS
from harness.report.board.enginepage import engine_html
from harness.report.board.graders import grader_lines
from harness.report.board.incremental import (
    Manifest,
    code_signature,
    page_entry,
    run_signature,
    write_if_changed,
)
from harness.report.board.pages import entrant_page, entrant_slug, overview, run_page
from harness.report.board.trialpage import failing_html, trial_html, why_html
from harness.report.collect import RunResult
from harness.report.summary import EntrantSummary, EraTable, summarise
from harness.report.trialview import load_view
from harness.util.fs import read_text_file
from harness.util.fs import write_atomic as _write_atomic

#: Run pages rendered in worker processes once this many are due (forked: the workers
#: inherit the runs, nothing is pickled but a range). Below it, starting them costs more.
PARALLEL_FROM = 2_000
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg"}
MAX_DIFF = 400_000  # characters shown on a run card; the full diff stays in results/


def copy_screenshots(run: RunResult, site: Path) -> dict[str, str]:
    """Copy the scorer's saved images into the site; name -> path relative to runs/."""
    shots: dict[str, str] = {}
    if not os.path.isdir(f"{run.run_dir}/verify/evidence"):  # most runs: one stat, no Path
        return shots
    evidence = run.run_dir / "verify" / "evidence"
    for src in sorted(evidence.rglob("*")):
        if src.is_file() and src.suffix.lower() in IMAGE_SUFFIXES:
            rel = src.relative_to(evidence)
            dest = site / "runs" / run.run_id / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
            shots[src.name] = f"{run.run_id}/{rel.as_posix()}"
    return shots


def _diff(run: RunResult) -> tuple[str | None, str]:
    text = read_text_file(f"{run.run_dir}/workspace.diff")
    if text is None:
        return None, ""
    if len(text) > MAX_DIFF:
        return text[:MAX_DIFF], f"(first {MAX_DIFF:,} of {len(text):,} characters)"
    return text, ""


def write_atomic(path: Path, data: str) -> None:
    """A page written atomically without an fsync: the board is a derived artefact,
    rebuilt from the results, so a page lost to a power cut costs nothing to redo
    (an fsync per page was 30 s of a 67 s build at 5,000 runs)."""
    _write_atomic(path, data, durable=False)


def _write_page(folder: str, name: str, data: str) -> None:
    """``write_atomic`` for a run page in a folder known to exist: a temporary name of
    this process's own (a stray one is pruned by the next build), then a rename; plain
    ``os`` calls, no file object (a third of the write's cost)."""
    tmp = f"{folder}/.{name}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        try:
            view = memoryview(data.encode())
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(tmp, f"{folder}/{name}")
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise


def _render_run(run: RunResult, out: Path) -> str:
    """A run's page, its screenshots copied beside it (the old copies removed first)."""
    shots_dir = f"{out}/runs/{run.run_id}"
    if os.path.lexists(shots_dir):
        shutil.rmtree(shots_dir, ignore_errors=True)
    shots = copy_screenshots(run, out)
    diff, note = _diff(run)
    # the page shows the diff itself (cut at MAX_DIFF): the view need not read it
    view = load_view(run.run_dir, run.report, diff="")
    top = why_html(view) + failing_html(view, shots)
    trial = trial_html(view) + engine_html(view)  # the engine's timings: a section of its own
    return run_page(run, shots, diff, note, trial, top)


# what forked workers render: set by ``_render_all`` just before the fork
_DUE: list[RunResult] = []
_OUT: Path = Path()
_CODE = ""

#: (run id, the page record: its signature and stat) of each page a range wrote
Written = list[tuple[str, list[Any] | None]]


def _signature(run: RunResult, code: str) -> str:
    return run_signature(str(run.run_dir), run.signature, run.era, run.agent_version, code)


def _render_range(bounds: tuple[int, int]) -> Written:
    """Render and write the due pages ``bounds[0] .. bounds[1] - 1`` (in a worker), each
    signed before its inputs are read (a cold board's signatures are taken here, in
    the workers, not one by one before them)."""
    folder = str(_OUT / "runs")
    written: Written = []
    for run in _DUE[bounds[0] : bounds[1]]:
        signature = _signature(run, _CODE)
        page = f"{run.run_id}.html"
        _write_page(folder, page, _render_run(run.full(), _OUT))
        written.append((run.run_id, page_entry(f"{folder}/{page}", signature)))
    return written


def _workers() -> int:
    if sys.platform != "linux":  # fork is the only start method that shares the runs
        return 1
    return min(len(os.sched_getaffinity(0)), 8)


def _render_all(due: list[RunResult], out: Path, code: str) -> Written:
    """Write the pages of ``due``: in forked workers, one per core, when there are many."""
    global _DUE, _OUT, _CODE
    _DUE, _OUT, _CODE = due, out, code
    try:
        workers = _workers()
        if workers < 2 or len(due) < PARALLEL_FROM:
            return _render_range((0, len(due)))
        step = max(200, len(due) // (workers * 8))  # small chunks: a slow worker holds none up
        chunks = [(i, min(i + step, len(due))) for i in range(0, len(due), step)]
        # a worker that dies breaks the pool (an error here), it does not hang it
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            return [page for written in pool.map(_render_range, chunks) for page in written]
    finally:
        _DUE = []


def _prune(folder: Path, keep: set[str]) -> None:
    """Remove what ``folder`` holds beyond ``keep`` (pages of runs no longer shown)."""
    with suppress(OSError):
        for entry in os.scandir(folder):
            if entry.name in keep:
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                Path(entry.path).unlink(missing_ok=True)


def build_board(runs: list[RunResult], out: Path, selection: str = "") -> Path:
    """Write the whole site for ``runs`` into ``out`` (pages of runs no longer shown
    removed); returns the overview's path. A run page whose inputs are unchanged since
    the last build (``incremental``) is kept as it is; the other pages are written only
    when their text changed. ``selection`` says which runs were chosen (shown on the
    overview, as ``harness report`` prints it)."""
    tables: list[EraTable] = summarise(runs)
    out.mkdir(parents=True, exist_ok=True)
    manifest = Manifest(out)
    if not manifest.valid:  # no record of what is there: start from empty folders
        for sub in ("entrants", "runs"):
            shutil.rmtree(out / sub, ignore_errors=True)
    write_if_changed(out / "style.css", CSS)
    write_if_changed(out / "board.js", JS)
    write_if_changed(out / "index.html", overview(tables, grader_lines(runs), selection))

    runs_by_id = {r.run_id: r for r in runs}  # one page per run id: the last one wins
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
        write_if_changed(out / "entrants" / f"{slug}.html", entrant_page(labels[slug], items))
    _prune(out / "entrants", {f"{slug}.html" for slug in per_entrant})

    code = code_signature(pages, trialpage, trialview, collect, sys.modules[__name__])
    folder = str(out / "runs")
    os.makedirs(folder, exist_ok=True)
    due: list[RunResult] = []
    for run in runs_by_id.values():  # a run with no page on record is due unsigned
        page = f"{folder}/{run.run_id}.html"
        if not (
            manifest.has(run.run_id) and manifest.current(page, run.run_id, _signature(run, code))
        ):
            due.append(run)
    for run_id, entry in _render_all(due, out, code):  # the whole report shown on each
        manifest.keep(run_id, entry)
    _prune(out / "runs", {n for i in runs_by_id for n in (i, f"{i}.html")})
    manifest.save()
    return out / "index.html"
