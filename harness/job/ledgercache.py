"""A copy of a job's ledger entries in one SQLite file, so a resume reads one file, not one
per trial.

The per-trial files (``trials/<slug>.json``) stay the ledger; ``<job>/.ledger-cache.sqlite``
keeps each entry's text beside the ``stat`` (mtime, size, inode) its file had when the
text was read or written. An entry is taken from the cache only while its file's
``stat`` still matches, so an entry changed by any other means (by hand, by an older
harness) is read from its file again. A missing or unreadable cache is only slower.
"""

from __future__ import annotations

import os
import sqlite3

from pydantic import ValidationError

from harness.job.ledger import JobDir, TrialEntry
from harness.job.plan import Trial

CACHE_FILE = ".ledger-cache.sqlite"


def _stat(path: str) -> str | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return f"{st.st_mtime_ns}:{st.st_size}:{st.st_ino}"


class LedgerCache:
    """Read a job's entries through the cache; ``note`` what was written; ``save``."""

    def __init__(self, job: JobDir) -> None:
        self.job = job
        self.trials = str(job.trials_dir)
        self.rows: dict[str, tuple[str, str, str]] = {}  # key -> (slug, stat, entry JSON)
        self.changed: dict[str, tuple[str, str, str]] = {}
        try:
            db = sqlite3.connect(job.path / CACHE_FILE, timeout=5)
            try:
                query = "SELECT key, slug, stat, entry FROM entries"
                self.rows = {k: (slug, st, e) for k, slug, st, e in db.execute(query)}
            finally:
                db.close()
        except sqlite3.Error:
            self.rows = {}

    def _path(self, slug: str) -> str:
        return f"{self.trials}/{slug}.json"

    def read(self, trial: Trial) -> TrialEntry:
        """The trial's entry: from the cache while its file is unchanged, else its file."""
        row = self.rows.get(trial.key)
        if row is not None and _stat(self._path(row[0])) == row[1]:
            try:
                return TrialEntry.model_validate_json(row[2])
            except ValidationError:
                pass
        entry = self.job.read_entry(trial)
        self._remember(trial, entry)
        return entry

    def _remember(self, trial: Trial, entry: TrialEntry) -> None:
        slug = trial.slug
        stat = _stat(self._path(slug))
        if stat is not None:
            self.changed[trial.key] = (slug, stat, entry.model_dump_json())

    def write(self, trial: Trial, entry: TrialEntry) -> None:
        """Write the trial's entry file (the ledger) and note it for the cache."""
        self.job.write_entry(trial, entry)
        self._remember(trial, entry)

    def save(self) -> None:
        """Store what was read or written since the cache was loaded (one transaction)."""
        if not self.changed:
            return
        changed, self.changed = self.changed, {}
        try:
            db = sqlite3.connect(self.job.path / CACHE_FILE, timeout=5, isolation_level=None)
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=OFF")  # a cache: lost or old, it is only slower
                db.execute(
                    "CREATE TABLE IF NOT EXISTS entries "
                    "(key TEXT PRIMARY KEY, slug TEXT, stat TEXT, entry TEXT)"
                )
                db.execute("BEGIN IMMEDIATE")
                db.executemany(
                    "INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?)",
                    [(k, *v) for k, v in changed.items()],
                )
                db.execute("COMMIT")
            finally:
                db.close()
        except sqlite3.Error:
            pass
        self.rows.update(changed)
