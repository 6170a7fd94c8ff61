"""SQLite state under --db-dir: payments, early webhook events, sync cursor, drafts."""

import os
import sqlite3
import threading

from ledgerd.money import berlin_day

SCHEMA = """
CREATE TABLE IF NOT EXISTS payments (
    id TEXT PRIMARY KEY, amount_minor INTEGER NOT NULL, currency TEXT NOT NULL,
    status TEXT NOT NULL, counterparty TEXT NOT NULL, created_at TEXT NOT NULL,
    day TEXT NOT NULL, version INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS payments_order ON payments (created_at, id);
CREATE TABLE IF NOT EXISTS early_events (
    payment_id TEXT PRIMARY KEY, status TEXT NOT NULL, version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS pages (
    idx INTEGER PRIMARY KEY, cursor TEXT, etag TEXT, next_cursor TEXT);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS drafts (
    id TEXT PRIMARY KEY, seq INTEGER NOT NULL, amount_minor INTEGER NOT NULL,
    currency TEXT NOT NULL, counterparty TEXT NOT NULL, state TEXT NOT NULL,
    idempotency_key TEXT, vendor_payment_id TEXT, maker TEXT, checker TEXT);
"""

COLUMNS = "id, amount_minor, currency, status, counterparty, created_at, day, version"


class Store:
    def __init__(self, db_dir):
        os.makedirs(db_dir, exist_ok=True)
        self.db = sqlite3.connect(
            os.path.join(db_dir, "ledger.sqlite3"), check_same_thread=False, isolation_level=None
        )
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        self.lock = threading.RLock()

    # -- meta ------------------------------------------------------------------------
    def get(self, key, default=None):
        with self.lock:
            row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def put(self, key, value):
        with self.lock:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- payments --------------------------------------------------------------------
    def _upsert(self, p):
        self.db.execute(
            f"INSERT INTO payments ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET status = excluded.status, "
            "version = excluded.version WHERE excluded.version > payments.version",
            (
                p["id"],
                int(p["amount_minor"]),
                p["currency"],
                p["status"],
                p["counterparty"],
                p["created_at"],
                berlin_day(p["created_at"]),
                int(p["version"]),
            ),
        )
        early = self.db.execute(
            "SELECT status, version FROM early_events WHERE payment_id = ?", (p["id"],)
        ).fetchone()
        if early:
            self.db.execute(
                "UPDATE payments SET status = ?, version = ? WHERE id = ? AND version < ?",
                (early[0], early[1], p["id"], early[1]),
            )
            self.db.execute("DELETE FROM early_events WHERE payment_id = ?", (p["id"],))

    def store_page(self, idx, cursor, etag, items, next_cursor, sync_next):
        """One transaction: the page's payments, its ETag and the cursor to resume from."""
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                for p in items:
                    self._upsert(p)
                self.db.execute(
                    "INSERT OR REPLACE INTO pages VALUES (?, ?, ?, ?)",
                    (idx, cursor, etag, next_cursor),
                )
                for key, value in sync_next.items():
                    self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise

    def page_row(self, idx):
        with self.lock:
            return self.db.execute(
                "SELECT cursor, etag, next_cursor FROM pages WHERE idx = ?", (idx,)
            ).fetchone()

    def apply_event(self, payment_id, status, version):
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                row = self.db.execute(
                    "SELECT version FROM payments WHERE id = ?", (payment_id,)
                ).fetchone()
                if row is None:
                    self.db.execute(
                        "INSERT INTO early_events VALUES (?, ?, ?) ON CONFLICT(payment_id) DO "
                        "UPDATE SET status = excluded.status, version = excluded.version "
                        "WHERE excluded.version > early_events.version",
                        (payment_id, status, version),
                    )
                elif version > row[0]:
                    self.db.execute(
                        "UPDATE payments SET status = ?, version = ? WHERE id = ?",
                        (status, version, payment_id),
                    )
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise

    def query(self, where, args, limit, offset):
        sql = f"SELECT {COLUMNS} FROM payments{where} ORDER BY created_at, id LIMIT ? OFFSET ?"
        with self.lock:
            total = self.db.execute(f"SELECT COUNT(*) FROM payments{where}", args).fetchone()[0]
            rows = self.db.execute(sql, (*args, limit, offset)).fetchall()
        return total, rows

    def count(self):
        with self.lock:
            return self.db.execute("SELECT COUNT(*) FROM payments").fetchone()[0]

    def summary(self):
        with self.lock:
            totals = self.db.execute(
                "SELECT currency, COUNT(*), amount_minor FROM payments GROUP BY currency "
                "ORDER BY currency"
            ).fetchall()
            sums = {}
            for currency, amount in self.db.execute("SELECT currency, amount_minor FROM payments"):
                sums[currency] = sums.get(currency, 0) + amount  # exact: SUM() may overflow
            days = self.db.execute(
                "SELECT day, COUNT(*) FROM payments GROUP BY day ORDER BY day"
            ).fetchall()
        return [(c, n, sums[c]) for c, n, _ in totals], days

    # -- drafts ----------------------------------------------------------------------
    def add_draft(self, draft):
        with self.lock:
            seq = self.db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM drafts").fetchone()[0]
            self.db.execute(
                "INSERT INTO drafts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    draft["id"],
                    seq,
                    draft["amount_minor"],
                    draft["currency"],
                    draft["counterparty"],
                    "pending_approval",
                    None,
                    None,
                    draft["maker"],
                    None,
                ),
            )

    def drafts(self, state=None):
        sql = (
            "SELECT id, amount_minor, currency, counterparty, state, idempotency_key, "
            "vendor_payment_id, maker, checker FROM drafts"
        )
        args = ()
        if state:
            sql, args = sql + " WHERE state = ?", (state,)
        with self.lock:
            rows = self.db.execute(sql + " ORDER BY seq", args).fetchall()
        keys = ("id", "amount_minor", "currency", "counterparty", "state", "idempotency_key")
        keys += ("vendor_payment_id", "maker", "checker")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def draft(self, draft_id):
        return next((d for d in self.drafts() if d["id"] == draft_id), None)

    def update_draft(self, draft_id, **fields):
        sets = ", ".join(f"{k} = ?" for k in fields)
        with self.lock:
            self.db.execute(f"UPDATE drafts SET {sets} WHERE id = ?", (*fields.values(), draft_id))
