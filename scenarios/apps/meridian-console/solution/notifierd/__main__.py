"""python3 -m notifierd --port P --db-dir D --ledger URL

Pulls ledgerd's event sequence by `seq` and stores each event as a notification, with
its read position, in one transaction per answer; serves the feed.
"""

import argparse
import json
import os
import sqlite3
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

READ_TIMEOUT_S = 5.0
RETRY_S = 1.0


def sentence(ev):
    kind = ev.get("kind")
    if kind == "payment.updated":
        return f"Payment {ev.get('payment_id')} is now {ev.get('status')} (version {ev.get('version')})"
    if kind == "draft.created":
        return (f"Draft {ev.get('draft_id')} for {ev.get('amount')} {ev.get('currency')}"
                f" to {ev.get('counterparty')} created")
    if kind == "draft.executed":
        return f"Draft {ev.get('draft_id')} executed as {ev.get('vendor_payment_id')}"
    if kind == "sync.completed":
        return f"Sync completed: {ev.get('payments')} payments in {ev.get('pages')} pages"
    return f"{kind}"


class Notes:
    def __init__(self, db_dir):
        os.makedirs(db_dir, exist_ok=True)
        self.db = sqlite3.connect(os.path.join(db_dir, "notifier.sqlite3"),
                                  check_same_thread=False, isolation_level=None)
        self.lock = threading.Lock()
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(
            "CREATE TABLE IF NOT EXISTS notes (seq INTEGER PRIMARY KEY, kind TEXT, text TEXT,"
            " at TEXT, ref TEXT);"
            "CREATE TABLE IF NOT EXISTS pos (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER);"
        )
        self.ledger_up = False

    def last(self):
        with self.lock:
            row = self.db.execute("SELECT seq FROM pos WHERE id = 1").fetchone()
        return row[0] if row else 0

    def store(self, events):
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                last = self.db.execute("SELECT seq FROM pos WHERE id = 1").fetchone()
                last = last[0] if last else 0
                for ev in events:
                    if ev["seq"] != last + 1:
                        break  # never leave a gap: ask again from `last`
                    ref = ev.get("payment_id") or ev.get("draft_id") or ""
                    self.db.execute("INSERT INTO notes VALUES (?, ?, ?, ?, ?)",
                                    (ev["seq"], ev["kind"], sentence(ev), ev.get("at", ""), ref))
                    last = ev["seq"]
                self.db.execute("INSERT OR REPLACE INTO pos (id, seq) VALUES (1, ?)", (last,))
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def items(self, sql, args):
        with self.lock:
            rows = self.db.execute(sql, args).fetchall()
        return [{"seq": s, "kind": k, "text": t, "at": a, "ref": r} for s, k, t, a, r in rows]


def pull(notes, ledger):
    while True:
        after = notes.last()
        try:
            url = f"{ledger}/api/events?after={after}&limit=500"
            with urllib.request.urlopen(url, timeout=READ_TIMEOUT_S) as resp:
                data = json.loads(resp.read())
            items = data.get("items") or []
            notes.store(items)
            notes.ledger_up = True
            if len(items) < 500:
                time.sleep(0.5)
        except (urllib.error.URLError, OSError, ValueError, KeyError):
            notes.ledger_up = False
            time.sleep(RETRY_S)


def make_handler(notes):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            pass

        def _send(self, status, body):
            raw = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self):
            url = urlsplit(self.path)
            qs = {k: v[-1] for k, v in parse_qs(url.query).items()}
            if url.path == "/health":
                return self._send(200, {"status": "ok"})
            if url.path == "/api/status":
                return self._send(200, {"last_seq": notes.last(),
                                        "ledger": "up" if notes.ledger_up else "down"})
            if url.path == "/api/notifications":
                try:
                    if "latest" in qs:
                        k = max(1, min(500, int(qs["latest"])))
                        items = notes.items("SELECT * FROM notes ORDER BY seq DESC LIMIT ?", (k,))
                    else:
                        after = int(qs.get("after", "0"))
                        limit = max(1, min(500, int(qs.get("limit", "100"))))
                        items = notes.items(
                            "SELECT * FROM notes WHERE seq > ? ORDER BY seq LIMIT ?",
                            (after, limit))
                except ValueError:
                    return self._send(400, {"error": "bad parameter"})
                return self._send(200, {"items": items, "last_seq": notes.last()})
            return self._send(404, {"error": "not found"})

    return Handler


def main():
    parser = argparse.ArgumentParser(prog="notifierd")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--db-dir", required=True)
    parser.add_argument("--ledger", required=True)
    args = parser.parse_args()
    notes = Notes(args.db_dir)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(notes))
    server.daemon_threads = True
    threading.Thread(target=pull, args=(notes, args.ledger.rstrip("/")), daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
