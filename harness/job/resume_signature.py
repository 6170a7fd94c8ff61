"""A complete job's signature, so resuming it again costs a few folder ``stat`` calls,
not one per trial.

When ``prepare()`` finds every trial of a job done, it records in ``<job>/.complete.json``:

- the plan's hash (every trial key, in order: ``--reps``, new agents or scenarios change it);
- the results root it read, and the mtime of every folder the job's runs live in and of
  every plan scenario's folder (``<results>/<scenario>``, missing ones as missing): a run
  folder added, removed or renamed there moves that mtime;
- the names in every folder above those (the results root, ``<results>/<family>``): a new
  or removed scenario folder shows there. Names, not mtimes: the run index's SQLite file
  beside the results comes and goes with its ``-wal``/``-shm`` files on every read;
- the mtime of the ledger folder (``<job>/trials``, which also holds the trial locks and
  the workers' spec and out files): every ledger write is a temp file renamed into it,
  and every trial started writes its spec there, so any trial run or entry rewritten by
  the harness (or deleted by hand) moves it;
- the counts the CLI prints (trials failed).

The next ``prepare()`` takes the classification from the record while all of it still
holds. An mtime younger than ``RACY_NS`` is not recorded (a change in the same clock tick
would not move it): that resume does the full scan, and the next one records.

Not seen (folder mtimes cannot show them): a file inside a run folder rewritten or
removed by hand (``verify/report.json`` edited in place), or a copy of a run of this job
into a folder outside its scenarios. The harness itself never rewrites a finished run's
files; to redo a trial, remove its run folder (seen). Removing ``.complete.json`` (or
touching the scenario's folder) makes the next resume read everything again.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.job.plan import Trial
from harness.util.fs import write_atomic

RECORD_FILE = ".complete.json"
VERSION = 1
RACY_NS = 2_000_000_000


def plan_hash(trials: Iterable[Trial]) -> str:
    """A hash of the plan's trials, in order (their fields, not ``Trial.key``: a cached
    property costs more than the f-string here)."""
    text = "\n".join([f"{t.scenario}|{t.agent}|{t.model}|{t.seed}|{t.repetition}" for t in trials])
    return hashlib.sha256(text.encode()).hexdigest()


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _names(path: str) -> list[str] | None:
    try:
        return sorted(n for n in os.listdir(path) if not n.startswith("."))
    except OSError:
        return None


@dataclass(frozen=True)
class Signature:
    """What a complete job looked like; ``holds`` says whether it still does."""

    plan: str
    results: str
    trials_mtime: int | None
    leaves: dict[str, int | None]  # folder (relative to results) -> mtime
    listings: dict[str, list[str] | None]  # folder above them -> its names
    failed: int

    def holds(self, trials_dir: Path, results: Path, plan: str) -> bool:
        if plan != self.plan or str(results) != self.results:
            return False
        if _mtime(str(trials_dir)) != self.trials_mtime:
            return False
        root = self.results
        for rel, mtime in self.leaves.items():
            if _mtime(f"{root}/{rel}") != mtime:
                return False
        return all(_names(f"{root}/{rel}") == names for rel, names in self.listings.items())

    def as_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "plan": self.plan,
            "results": self.results,
            "trials_mtime": self.trials_mtime,
            "leaves": self.leaves,
            "listings": self.listings,
            "failed": self.failed,
        }


def load(job_path: Path) -> Signature | None:
    """The job's recorded signature; None without one (or an unreadable one)."""
    try:
        doc = json.loads((job_path / RECORD_FILE).read_text(encoding="utf-8"))
        if doc.get("version") != VERSION:
            return None
        return Signature(
            plan=str(doc["plan"]),
            results=str(doc["results"]),
            trials_mtime=doc["trials_mtime"],
            leaves=dict(doc["leaves"]),
            listings=dict(doc["listings"]),
            failed=int(doc["failed"]),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def clear(job_path: Path) -> None:
    with suppress(OSError):
        (job_path / RECORD_FILE).unlink(missing_ok=True)


def _rel(results: str, folder: str) -> str | None:
    """``folder`` relative to ``results`` (None: outside it)."""
    rel = os.path.relpath(folder, results)
    return None if rel == ".." or rel.startswith("../") else rel


def record(
    job_path: Path,
    trials_dir: Path,
    results: Path,
    plan: str,
    scenarios: Iterable[str],
    run_dirs: Iterable[str],
    failed: int,
) -> bool:
    """Record the complete job's signature; False (and none kept) when some mtime is
    too fresh to trust or a run lies outside the results root."""
    clear(job_path)
    root = str(results)
    folders = {f"{root}/{s}" for s in scenarios} | {os.path.dirname(d) for d in run_dirs}
    leaves: dict[str, int | None] = {}
    listings: dict[str, list[str] | None] = {}
    for folder in folders:
        rel = _rel(root, folder)
        if rel is None or rel == ".":
            return False
        leaves[rel] = _mtime(folder)
        parent = os.path.dirname(rel)
        while True:
            key = parent or "."
            if key not in listings:
                listings[key] = _names(f"{root}/{parent}" if parent else root)
            if not parent:
                break
            parent = os.path.dirname(parent)
    trials_mtime = _mtime(str(trials_dir))
    fresh = time.time_ns() - RACY_NS
    if any(m is not None and m > fresh for m in [trials_mtime, *leaves.values()]):
        return False
    sig = Signature(plan, root, trials_mtime, leaves, listings, failed)
    write_atomic(job_path / RECORD_FILE, json.dumps(sig.as_json()), durable=False)
    return True
