"""SQLite storage: invoices (each id once) plus the sync cursor, committed together."""

import os
import sqlite3
import threading

SCHEMA = """
CREATE TABLE IF NOT EXISTS invoices (
    id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    customer TEXT NOT NULL,
    currency TEXT NOT NULL,
    amount_minor INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT);
"""


class Store:
    """One connection shared by the sync thread and the HTTP threads, behind a lock."""

    def __init__(self, data_dir):
        os.makedirs(data_dir, exist_ok=True)
        self._db = sqlite3.connect(os.path.join(data_dir, "invoices.db"),
                                   check_same_thread=False)
        self._lock = threading.Lock()
        with self._lock, self._db:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(SCHEMA)

    def save_page(self, invoices, next_cursor):
        """Store a page and where to continue, atomically; complete when no next page."""
        with self._lock, self._db:
            (seq,) = self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM invoices").fetchone()
            for inv in invoices:
                seq += 1
                self._db.execute(
                    "INSERT OR IGNORE INTO invoices (id, seq, customer, currency, amount_minor)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (inv["id"], seq, inv["customer"], inv["currency"], int(inv["amount_minor"])),
                )
            self._set("cursor", next_cursor)
            self._set("done", "1" if next_cursor is None else "0")

    def _set(self, key, value):
        self._db.execute("INSERT OR REPLACE INTO state (key, value) VALUES (?, ?)", (key, value))

    def get(self, key):
        with self._lock:
            row = self._db.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def invoices(self):
        with self._lock:
            rows = self._db.execute(
                "SELECT id, customer, currency, amount_minor FROM invoices ORDER BY seq"
            ).fetchall()
        return [{"id": r[0], "customer": r[1], "currency": r[2], "amount_minor": r[3]}
                for r in rows]

    def count(self):
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM invoices").fetchone()[0]
