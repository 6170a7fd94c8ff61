"""The ledger cache: an entry read from the cache only while its file is unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.job.ledger import JobDir, TrialEntry
from harness.job.ledgercache import CACHE_FILE, LedgerCache, StoredEntries
from harness.job.plan import Trial

pytestmark = pytest.mark.unit
JOB = "j"


def _trials() -> list[Trial]:
    return [Trial(f"py/s{i}", "alpha", "none", "1", 0) for i in range(3)]


def test_the_cache_yields_to_an_entry_changed_on_disk(tmp_path: Path) -> None:
    trials = _trials()
    job = JobDir(tmp_path / "jobs" / JOB)
    job.trials_dir.mkdir(parents=True)
    cache = LedgerCache(job)
    entry = TrialEntry.new(trials[0])
    entry.detail = "first"
    cache.write(trials[0], entry)
    cache.save()
    assert LedgerCache(job).read(trials[0]).detail == "first"
    path = job.entry_path(trials[0])
    data = json.loads(path.read_text())
    data["detail"] = "edited in place, longer"  # the file changed, not through the cache
    with path.open("w") as fh:  # same inode: only its size and mtime tell
        fh.write(json.dumps(data))
    assert LedgerCache(job).read(trials[0]).detail == "edited in place, longer"
    assert LedgerCache(job).read(trials[1]) == TrialEntry.new(trials[1])  # no file: a new one
    (job.path / CACHE_FILE).write_text("not a database")
    assert LedgerCache(job).read(trials[0]).detail == "edited in place, longer"


def test_stored_entries_read_nothing_until_looked_at(tmp_path: Path) -> None:
    trials = _trials()
    job = JobDir(tmp_path / "jobs" / JOB)
    job.trials_dir.mkdir(parents=True)
    cache = LedgerCache(job)
    stored = StoredEntries(cache, trials)
    assert len(stored) == 3 and cache.changed == {}  # the length needs no entry
    assert cache.rows == {}  # no cache file yet: an empty cache, not an error
    written = TrialEntry.new(trials[1])
    written.detail = "written"
    cache.write(trials[1], written)
    assert stored[1].detail == "written" and len(stored[0:2]) == 2
    assert [e.key for e in stored] == [t.key for t in trials]
    assert stored == [cache.read(t) for t in trials]
    cache.save()
    assert set(LedgerCache(job).rows) == {trials[1].key}  # only entries with a file are kept
