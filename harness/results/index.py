"""The run index: an SQLite file beside the result folders, so reading results (report,
board, a job's resume) costs what is shown, not the whole results root.

``<results>/.runs-index.sqlite`` keeps, per run folder, the summary's part of its three
files (a trimmed report, run.json, progress.json) and the stat signature they had.
Every read brings it in step first, in one transaction, whoever wrote the folders (a
trial, a Ray unpack, a copy by hand):

- a folder holding run folders (``<scenario>/``) is listed again only when its mtime
  moved (a run folder was added or removed); unchanged ones cost one ``stat``;
- a run without a final report yet is looked at again on every read until it has one;
- a run a query returns is checked against its signature (three ``stat`` calls) and
  read again when any of its files changed.

So a finished run's JSON is parsed once, ``--job`` reads only the job's rows, and an
index that is lost, stale or unreadable is rebuilt (or bypassed) rather than trusted.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.util.fs import stat_signature

INDEX_FILE = ".runs-index.sqlite"
SCHEMA = 1
FILES = ("run.json", "progress.json", "verify/report.json")
REPORT_KEYS = (
    "run_id",
    "scenario",
    "scenario_version",
    "agent",
    "agent_version",
    "model",
    "success",
    "outcome",
    "score",
    "partial_score",
    "era",
    "reason",
    "verified_at",
    "error",
)
_DDL = (
    "CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)",
    "CREATE TABLE IF NOT EXISTS dirs (path TEXT PRIMARY KEY, parent TEXT, mtime INTEGER)",
    "CREATE INDEX IF NOT EXISTS dirs_parent ON dirs (parent)",
    "CREATE TABLE IF NOT EXISTS runs (path TEXT PRIMARY KEY, dir TEXT, job TEXT,"
    " final INTEGER, sig TEXT, record TEXT)",
    "CREATE INDEX IF NOT EXISTS runs_job ON runs (job)",
    "CREATE INDEX IF NOT EXISTS runs_final ON runs (final)",
    "CREATE INDEX IF NOT EXISTS runs_dir ON runs (dir)",
)
CHUNK = 2000  # index rows parsed per JSON document
RACY_NS = 2_000_000_000  # an mtime this fresh may hide a change made in the same tick
_UNDER = "path = ? OR substr(path, 1, length(?) + 1) = ? || '/'"


@dataclass(frozen=True)
class IndexedRun:
    """A run as the index keeps it: ``report`` holds ``REPORT_KEYS`` only (None while
    the run has no final report), ``progress`` its usage and phases."""

    run_dir: Path
    report: dict[str, Any] | None
    meta: dict[str, Any]
    progress: dict[str, Any]
    sig: str = ""  # the stat signature of its three files checked on this read


def _load(path: Path | str) -> Any:
    """A JSON file's content, or None when it is missing or not JSON (read as bytes and
    decoded whole: what ``read_text`` gives a JSON parser, without a text wrapper)."""
    try:
        with open(path, "rb") as fh:
            return json.loads(fh.read().decode("utf-8"))
    except (OSError, ValueError):
        return None


def read_report(run_dir: Path) -> dict[str, Any] | None:
    """A run folder's final report (``verify/report.json``), or None without one."""
    report = _load(f"{run_dir}/verify/report.json")
    return report if isinstance(report, dict) and report.get("outcome") else None


def read_parts(run_dir: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]] | None:
    """A run folder's report, run.json and progress.json; None without a final report."""
    report = read_report(run_dir)
    if report is None:
        return None
    meta = _load(f"{run_dir}/run.json")
    progress = _load(f"{run_dir}/progress.json")
    return (
        report,
        meta if isinstance(meta, dict) else {},
        progress if isinstance(progress, dict) else {},
    )


def _is_run(path: Path) -> bool:
    return (path / "run.json").is_file() or (path / "verify").is_dir()


def _signature(run_dir: str) -> str:
    """mtime, size and inode of the three files (plain strings: this runs per run shown)."""
    return "|".join([stat_signature(f"{run_dir}/{name}") for name in FILES])


def _trim(report: dict[str, Any], meta: dict[str, Any], progress: dict[str, Any]) -> str:
    small = {"usage": progress.get("usage") or {}, "phases": progress.get("phases") or []}
    trimmed = {k: report[k] for k in REPORT_KEYS if k in report}
    return json.dumps({"report": trimmed, "meta": meta, "progress": small})


def _record(run_dir: Path) -> tuple[bool, str | None, str]:
    """(final, job, record JSON) of one run folder, read from disk; a run without a
    final report keeps its run.json, so a job's unfinished runs are found too."""
    parts = read_parts(run_dir)
    if parts is None:
        meta = _load(run_dir / "run.json")
        meta = meta if isinstance(meta, dict) else {}
        job = meta.get("job")
        doc = json.dumps({"report": None, "meta": meta, "progress": {}})
        return False, job if isinstance(job, str) else None, doc
    job = parts[1].get("job")
    return True, job if isinstance(job, str) else None, _trim(*parts)


class RunIndex:
    """The index of one results root; use as a context manager."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.db = sqlite3.connect(root / INDEX_FILE, timeout=60, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        for ddl in _DDL:
            self.db.execute(ddl)
        row = self.db.execute("SELECT v FROM meta WHERE k = 'schema'").fetchone()
        if row is None or row[0] != str(SCHEMA):
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute("DELETE FROM dirs")
            self.db.execute("DELETE FROM runs")
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (str(SCHEMA),))
            self.db.execute("COMMIT")

    def __enter__(self) -> RunIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.db.close()

    def _rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def _put(self, run_dir: Path, parent: str) -> None:
        sig = _signature(str(run_dir))
        final, job, record = _record(run_dir)
        self.db.execute(
            "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?)",
            (self._rel(run_dir), parent, job, int(final), sig, record),
        )

    def _scan(self, directory: Path, parent: str, known: dict[str, int]) -> None:
        """Bring ``directory`` (not a run) and what is below it in step."""
        rel = self._rel(directory) if directory != self.root else "."
        try:
            mtime = os.stat(directory).st_mtime_ns
        except OSError:
            return
        if rel != "." and known.get(rel) != mtime and _is_run(directory):
            # listed while still empty (a trial's folder before its run.json): a run now
            self.db.execute(f"DELETE FROM dirs WHERE {_UNDER}", (rel, rel, rel))
            self._put(directory, parent)
            return
        if known.get(rel) == mtime:  # same entries as last time: only its subfolders
            children = self.db.execute("SELECT path FROM dirs WHERE parent = ?", (rel,))
            for (child,) in children.fetchall():
                self._scan(self.root / child, rel, known)
            return
        indexed = {p for (p,) in self.db.execute("SELECT path FROM runs WHERE dir = ?", (rel,))}
        subdirs = {p for (p,) in self.db.execute("SELECT path FROM dirs WHERE parent = ?", (rel,))}
        present: set[str] = set()
        with suppress(OSError):
            for entry in os.scandir(directory):
                if not entry.is_dir(follow_symlinks=False) or entry.name.startswith("."):
                    continue
                path = Path(entry.path)
                name = self._rel(path)
                present.add(name)
                if _is_run(path):
                    if name not in indexed:
                        self._put(path, rel)
                elif not (path / "job.json").is_file():  # a job folder holds no runs
                    self._scan(path, rel, known)
        for gone in indexed - present:
            self.db.execute("DELETE FROM runs WHERE path = ?", (gone,))
        for gone in subdirs - present:
            self.db.execute(f"DELETE FROM dirs WHERE {_UNDER}", (gone, gone, gone))
            self.db.execute(f"DELETE FROM runs WHERE {_UNDER}", (gone, gone, gone))
        fresh = time.time_ns() - mtime < RACY_NS  # list it again next time, to be sure
        self.db.execute(
            "INSERT OR REPLACE INTO dirs VALUES (?, ?, ?)", (rel, parent, -1 if fresh else mtime)
        )

    def refresh(self) -> None:
        """Bring the index in step with the folders, in one transaction."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            known = dict(self.db.execute("SELECT path, mtime FROM dirs").fetchall())
            self._scan(self.root, "", known)
            for path, parent in self.db.execute(
                "SELECT path, dir FROM runs WHERE final = 0"
            ).fetchall():
                run_dir = self.root / path
                if (run_dir / "verify" / "report.json").is_file():
                    self._put(run_dir, parent)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def runs(self, job: str | None = None, unfinished: bool = False) -> Iterator[IndexedRun]:
        """Final runs (of ``job`` when given; with ``unfinished`` also those without a
        final report, ``report`` None), each checked against its signature first."""
        query = "SELECT path, dir, final, sig, record FROM runs"
        where, args = [] if unfinished else ["final = 1"], []
        if job is not None:
            where.append("job = ?")
            args.append(job)
        if where:
            query += " WHERE " + " AND ".join(where)
        stale: list[tuple[Path, str]] = []
        root = str(self.root)
        folders: dict[str, Path] = {"": self.root}  # one Path per folder: parts are shared
        cursor = self.db.execute(query + " ORDER BY path", args)
        while batch := cursor.fetchmany(CHUNK):
            good = []
            for path, parent, final, sig, record in batch:
                if final and _signature(f"{root}/{path}") != sig:
                    stale.append((self.root / path, parent))
                else:
                    good.append((path, sig, record))
            # one JSON document per batch: its records share their keys' strings
            docs = json.loads("[" + ",".join([r for _, _, r in good]) + "]")
            for (path, sig, _), doc in zip(good, docs, strict=True):
                head, _, name = path.rpartition("/")
                folder = folders.get(head)
                if folder is None:
                    folder = folders[head] = self.root / head
                run = IndexedRun(folder / name, doc["report"], doc["meta"], doc["progress"], sig)
                yield run
        for changed, parent in stale:  # changed since indexed: read again, and remember
            self.db.execute("BEGIN IMMEDIATE")
            self._put(changed, parent)
            self.db.execute("COMMIT")
            parts = read_parts(changed)
            if parts is not None:
                yield IndexedRun(changed, *parts, _signature(str(changed)))
            elif unfinished:
                meta = _load(changed / "run.json")
                yield IndexedRun(changed, None, meta if isinstance(meta, dict) else {}, {})

    def job_rows(self, job: str) -> list[JobRow]:
        """A job's runs, finished or not, with what a job's ledger needs only (read
        in SQL, not parsed in Python): a finished run is checked against the stat of
        its run.json and report (the ledger reads nothing else) and read again when
        either changed."""
        query = (
            "SELECT path, dir, final, sig, json_extract(record, '$.meta.trial_key'),"
            " json_extract(record, '$.report.outcome'), json_extract(record, '$.report.score')"
            " FROM runs WHERE job = ?"
        )
        rows: list[JobRow] = []
        stale: list[tuple[str, str]] = []
        root = str(self.root)
        for path, parent, final, sig, key, outcome, score in self.db.execute(query, (job,)):
            run_dir = f"{root}/{path}"
            if final:
                meta, _, report = sig.split("|")
                if (
                    stat_signature(f"{run_dir}/run.json") != meta
                    or stat_signature(f"{run_dir}/{FILES[2]}") != report
                ):
                    stale.append((path, parent))
                    continue
            rows.append(JobRow(run_dir, key, None if outcome is None else str(outcome), score))
        for path, parent in stale:  # changed since indexed: read again, and remember
            self.db.execute("BEGIN IMMEDIATE")
            self._put(self.root / path, parent)
            self.db.execute("COMMIT")
            again = self.db.execute(query + " AND path = ?", (job, path)).fetchall()
            for _, _, final, _, key, outcome, score in again:
                rows.append(JobRow(f"{root}/{path}", key, str(outcome) if final else None, score))
        return rows


@dataclass(frozen=True)
class JobRow:
    """A run of a job as its ledger sees it (``outcome`` None: no final report yet)."""

    run_dir: str
    trial_key: str | None
    outcome: str | None
    score: Any


def indexed_job_rows(root: Path, job: str) -> list[JobRow] | None:
    """``RunIndex.job_rows`` after bringing the index in step (None: the index cannot
    be used; the caller reads the folders)."""
    if not root.is_dir():
        return []
    try:
        with RunIndex(root) as index:
            index.refresh()
            return index.job_rows(job)
    except (sqlite3.Error, OSError, ValueError):
        return None


def _open(root: Path, job: str | None, unfinished: bool) -> list[IndexedRun]:
    with RunIndex(root) as index:
        index.refresh()
        return list(index.runs(job, unfinished))


def indexed_runs(
    root: Path, job: str | None = None, unfinished: bool = False
) -> list[IndexedRun] | None:
    """Runs through the index; a damaged index file is removed and rebuilt; None when
    the index cannot be used at all (e.g. a read-only results folder): the caller then
    reads the folders directly."""
    if not root.is_dir():
        return []
    try:
        try:
            return _open(root, job, unfinished)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):
                raise
            for stale in root.glob(INDEX_FILE + "*"):  # not a database: start again
                stale.unlink(missing_ok=True)
            return _open(root, job, unfinished)
    except (sqlite3.Error, OSError, ValueError, KeyError):
        return None
