"""ledgerd's SQLite state: payments, pages, sync, webhooks, drafts, events.

One connection, one lock: every transaction is short, so serialising them is simpler
than coordinating writers.
"""

import json
import os
import sqlite3
import threading

from ledgerd.money import berlin_day, money, utc_now

SCHEMA = """
CREATE TABLE IF NOT EXISTS payments (
  id TEXT PRIMARY KEY, amount_minor INTEGER NOT NULL, currency TEXT NOT NULL,
  status TEXT NOT NULL, counterparty TEXT NOT NULL, created_at TEXT NOT NULL,
  day TEXT NOT NULL, version INTEGER NOT NULL, note TEXT NOT NULL DEFAULT '',
  revision INTEGER NOT NULL DEFAULT 1);
CREATE INDEX IF NOT EXISTS payments_order ON payments (created_at, id);
CREATE TABLE IF NOT EXISTS pages (cursor_key TEXT PRIMARY KEY, etag TEXT, next_cursor TEXT);
CREATE TABLE IF NOT EXISTS early (payment_id TEXT PRIMARY KEY, status TEXT, version INTEGER);
CREATE TABLE IF NOT EXISTS seen_events (event_id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v TEXT);
CREATE TABLE IF NOT EXISTS drafts (
  id TEXT PRIMARY KEY, n INTEGER NOT NULL, amount_minor INTEGER NOT NULL,
  currency TEXT NOT NULL, counterparty TEXT NOT NULL, state TEXT NOT NULL,
  maker TEXT NOT NULL, idem_key TEXT NOT NULL, vendor_payment_id TEXT, error TEXT);
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, body TEXT NOT NULL, at TEXT NOT NULL);
"""

ITEM_COLS = "id, amount_minor, currency, status, counterparty, created_at, day, version, note, revision"


def item(row):
    pid, minor, cur, status, cp, created, day, version, note, rev = row
    return {
        "id": pid, "amount_minor": minor, "amount": money(minor, cur), "currency": cur,
        "status": status, "counterparty": cp, "created_at": created, "day": day,
        "version": version, "note": note, "revision": rev,
    }


def draft_json(row):
    did, _n, minor, cur, cp, state, maker, _key, vpid, error = row
    return {
        "id": did, "amount_minor": minor, "amount": money(minor, cur), "currency": cur,
        "counterparty": cp, "state": state, "maker": maker,
        "vendor_payment_id": vpid, "error": error,
    }


class Store:
    def __init__(self, db_dir):
        os.makedirs(db_dir, exist_ok=True)
        self.db = sqlite3.connect(
            os.path.join(db_dir, "ledger.sqlite3"), check_same_thread=False, isolation_level=None
        )
        self.lock = threading.RLock()
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(SCHEMA)

    # -- plumbing ---------------------------------------------------------------------
    def tx(self, fn):
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                out = fn(self.db)
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")
            return out

    def q(self, sql, args=()):
        with self.lock:
            return self.db.execute(sql, args).fetchall()

    def get(self, key, default=None):
        rows = self.q("SELECT v FROM kv WHERE k = ?", (key,))
        return rows[0][0] if rows else default

    @staticmethod
    def put(db, key, value):
        db.execute("INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)", (key, value))

    @staticmethod
    def publish(db, kind, **fields):
        db.execute(
            "INSERT INTO events (kind, body, at) VALUES (?, ?, ?)",
            (kind, json.dumps(fields, separators=(",", ":")), utc_now()),
        )

    # -- the walk -----------------------------------------------------------------------
    def page_meta(self, cursor_key):
        rows = self.q("SELECT etag, next_cursor FROM pages WHERE cursor_key = ?", (cursor_key,))
        return rows[0] if rows else (None, None)

    def store_page(self, cursor_key, payments, etag, next_cursor):
        def run(db):
            for p in payments:
                self._merge(db, p)
            db.execute(
                "INSERT OR REPLACE INTO pages (cursor_key, etag, next_cursor) VALUES (?, ?, ?)",
                (cursor_key, etag, next_cursor),
            )
            self._advance(db, next_cursor)

        self.tx(run)

    def page_unchanged(self, next_cursor):
        self.tx(lambda db: self._advance(db, next_cursor))

    def _advance(self, db, next_cursor):
        done = int(self.get("pages_done", "0")) + 1
        self.put(db, "pages_done", str(done))
        if next_cursor is None:
            self.put(db, "walk", "done")
            self.put(db, "walk_cursor", "")
            count = db.execute("SELECT COUNT(*) FROM payments").fetchone()[0]
            self.publish(db, "sync.completed", pages=done, payments=count)
        else:
            self.put(db, "walk_cursor", next_cursor)

    def begin_walk(self):
        def run(db):
            self.put(db, "walk", "running")
            self.put(db, "walk_cursor", "")
            self.put(db, "pages_done", "0")
            self.put(db, "last_error", "")

        self.tx(run)

    def fail_walk(self, error):
        def run(db):
            self.put(db, "walk", "failed")
            self.put(db, "last_error", error)

        self.tx(run)

    def _merge(self, db, p):
        early = db.execute(
            "SELECT status, version FROM early WHERE payment_id = ?", (p["id"],)
        ).fetchone()
        status, version = p["status"], int(p["version"])
        if early and early[1] > version:
            status, version = early
        db.execute("DELETE FROM early WHERE payment_id = ?", (p["id"],))
        row = db.execute("SELECT version FROM payments WHERE id = ?", (p["id"],)).fetchone()
        if row is None:
            db.execute(
                f"INSERT INTO payments ({ITEM_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, '', 1)",
                (p["id"], int(p["amount_minor"]), p["currency"], status, p["counterparty"],
                 p["created_at"], berlin_day(p["created_at"]), version),
            )
        elif version > row[0]:
            db.execute(
                "UPDATE payments SET status = ?, version = ?, revision = revision + 1"
                " WHERE id = ?",
                (status, version, p["id"]),
            )

    # -- webhooks -----------------------------------------------------------------------
    def apply_event(self, event_id, payment_id, status, version):
        def run(db):
            if db.execute("SELECT 1 FROM seen_events WHERE event_id = ?", (event_id,)).fetchone():
                return "replay"
            db.execute("INSERT INTO seen_events (event_id) VALUES (?)", (event_id,))
            row = db.execute("SELECT version FROM payments WHERE id = ?", (payment_id,)).fetchone()
            if row is not None:
                if version <= row[0]:
                    return "stale"
                db.execute(
                    "UPDATE payments SET status = ?, version = ?, revision = revision + 1"
                    " WHERE id = ?",
                    (status, version, payment_id),
                )
            else:
                early = db.execute(
                    "SELECT version FROM early WHERE payment_id = ?", (payment_id,)
                ).fetchone()
                if early and early[0] >= version:
                    return "stale"
                db.execute(
                    "INSERT OR REPLACE INTO early (payment_id, status, version) VALUES (?, ?, ?)",
                    (payment_id, status, version),
                )
            self.publish(db, "payment.updated", payment_id=payment_id, status=status,
                         version=version)
            return "applied"

        return self.tx(run)

    # -- notes --------------------------------------------------------------------------
    def edit_note(self, payment_id, revision, note):
        def run(db):
            row = db.execute("SELECT revision FROM payments WHERE id = ?", (payment_id,)).fetchone()
            if row is None:
                return 404, None
            if row[0] != revision:
                return 412, None
            db.execute(
                "UPDATE payments SET note = ?, revision = revision + 1 WHERE id = ?",
                (note, payment_id),
            )
            return 200, self._item(db, payment_id)

        return self.tx(run)

    # -- reading ------------------------------------------------------------------------
    def _item(self, db, payment_id):
        row = db.execute(f"SELECT {ITEM_COLS} FROM payments WHERE id = ?", (payment_id,)).fetchone()
        return item(row) if row else None

    def payment(self, payment_id):
        with self.lock:
            return self._item(self.db, payment_id)

    def count(self):
        return self.q("SELECT COUNT(*) FROM payments")[0][0]

    def listing(self, filters, page, per_page):
        where, args = [], []
        for col in ("currency", "status", "day"):
            if filters.get(col) is not None:
                where.append(f"{col} = ?")
                args.append(filters[col])
        clause = (" WHERE " + " AND ".join(where)) if where else ""
        with self.lock:
            total = self.db.execute(f"SELECT COUNT(*) FROM payments{clause}", args).fetchone()[0]
            rows = self.db.execute(
                f"SELECT {ITEM_COLS} FROM payments{clause} ORDER BY created_at, id"
                " LIMIT ? OFFSET ?",
                [*args, per_page, (page - 1) * per_page],
            ).fetchall()
        return [item(r) for r in rows], total

    def field(self):
        rows = self.q("SELECT status, amount_minor, currency FROM payments ORDER BY created_at, id")
        return rows

    def summary(self):
        cur = self.q(
            "SELECT currency, COUNT(*), SUM(amount_minor) FROM payments"
            " GROUP BY currency ORDER BY currency"
        )
        days = self.q("SELECT day, COUNT(*) FROM payments GROUP BY day ORDER BY day")
        return cur, days

    # -- drafts -------------------------------------------------------------------------
    def add_draft(self, minor, currency, counterparty, maker):
        def run(db):
            n = db.execute("SELECT COALESCE(MAX(n), 0) + 1 FROM drafts").fetchone()[0]
            did = f"dr_{n}"
            db.execute(
                "INSERT INTO drafts VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, NULL, NULL)",
                (did, n, minor, currency, counterparty, maker, f"k_{did}_{os.urandom(6).hex()}"),
            )
            self.publish(db, "draft.created", draft_id=did, amount=money(minor, currency),
                         currency=currency, counterparty=counterparty)
            return self._draft(db, did)

        return self.tx(run)

    def _draft(self, db, did):
        row = db.execute("SELECT * FROM drafts WHERE id = ?", (did,)).fetchone()
        return draft_json(row) if row else None

    def draft(self, did):
        with self.lock:
            return self._draft(self.db, did)

    def draft_row(self, did):
        rows = self.q("SELECT * FROM drafts WHERE id = ?", (did,))
        return rows[0] if rows else None

    def drafts(self):
        return [draft_json(r) for r in self.q("SELECT * FROM drafts ORDER BY n DESC")]

    def approving(self):
        return [r[0] for r in self.q("SELECT id FROM drafts WHERE state = 'approving' ORDER BY n")]

    def claim(self, did):
        """pending -> approving; the draft's state when it was not pending."""

        def run(db):
            row = db.execute("SELECT state FROM drafts WHERE id = ?", (did,)).fetchone()
            if row is None:
                return None
            if row[0] != "pending":
                return row[0]
            db.execute("UPDATE drafts SET state = 'approving', error = NULL WHERE id = ?", (did,))
            return "claimed"

        return self.tx(run)

    def finish(self, did, state, vendor_id=None, error=None):
        def run(db):
            db.execute(
                "UPDATE drafts SET state = ?, vendor_payment_id = ?, error = ? WHERE id = ?",
                (state, vendor_id, error, did),
            )
            if state == "executed":
                self.publish(db, "draft.executed", draft_id=did, vendor_payment_id=vendor_id)
            return self._draft(db, did)

        return self.tx(run)

    # -- events -------------------------------------------------------------------------
    def events(self, after, limit):
        rows = self.q(
            "SELECT seq, kind, body, at FROM events WHERE seq > ? ORDER BY seq LIMIT ?",
            (after, limit),
        )
        last = self.q("SELECT COALESCE(MAX(seq), 0) FROM events")[0][0]
        items = [{"seq": s, "kind": k, "at": at, **json.loads(b)} for s, k, b, at in rows]
        return items, last
