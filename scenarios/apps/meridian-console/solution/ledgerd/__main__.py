"""python3 -m ledgerd --port P --db-dir D --vendor URL --tokens-file F --notifier URL"""

import argparse
import json
import threading
import time
from http.server import ThreadingHTTPServer

from ledgerd.money import money
from ledgerd.store import Store
from ledgerd.sync import Approvals, Syncer
from ledgerd.vendor import Vendor
from ledgerd.web import fetch_feed, make_handler

STATUS_CODE = {"pending": "p", "settled": "s", "failed": "f", "refunded": "r"}


class App:
    def __init__(self, args):
        with open(args.tokens_file, encoding="utf-8") as fh:
            tokens = json.load(fh)
        self.users = {u["token"]: u for u in tokens["users"]}
        self.webhook_secret = tokens["webhook_secret"]
        self.notifier = args.notifier.rstrip("/")
        self.store = Store(args.db_dir)
        self.vendor = Vendor(args.vendor, tokens["vendor_key"])
        self.syncer = Syncer(self.store, self.vendor)
        self.approvals = Approvals(self.store, self.vendor)

    def status(self):
        return {
            "sync": self.syncer.state(),
            "pages_done": int(self.store.get("pages_done", "0")),
            "payments": self.store.count(),
            "vendor": "up" if self.vendor.up else "down",
            "last_error": self.store.get("last_error") or self.vendor.last_error or None,
        }

    def summary(self):
        cur, days = self.store.summary()
        return {
            "currencies": [
                {"currency": c, "count": n, "sum_minor": s, "sum": money(s, c)}
                for c, n, s in cur
            ],
            "days": [{"day": d, "count": n} for d, n in days],
        }

    def field(self):
        rows = self.store.field()
        status = "".join(STATUS_CODE[s] for s, _m, _c in rows)
        heights = []
        for _s, minor, cur in rows:
            major = abs(minor) / 10 ** {"JPY": 0, "EUR": 2, "USD": 2, "KWD": 3, "CLF": 4}[cur]
            heights.append(min(99, int(len(str(int(major))) * 6 + 1)))
        return {"n": len(rows), "status": status, "heights": heights}

    def feed(self):
        return fetch_feed(self.notifier)


def main():
    parser = argparse.ArgumentParser(prog="ledgerd")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--db-dir", required=True)
    parser.add_argument("--vendor", required=True)
    parser.add_argument("--tokens-file", required=True)
    parser.add_argument("--notifier", required=True)
    args = parser.parse_args()
    app = App(args)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(app))
    server.daemon_threads = True
    threading.Thread(target=app.approvals.recover, daemon=True).start()
    threading.Thread(target=app.syncer.boot, daemon=True).start()

    def watch_vendor():
        while True:
            time.sleep(3.0)
            if not app.vendor.up and not app.syncer.running():
                app.vendor.probe()

    threading.Thread(target=watch_vendor, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
