"""python -m ledgerd --port P --db-dir D --vendor URL --tokens-file F"""

import argparse
import json
import threading
from http.server import ThreadingHTTPServer

from ledgerd import console
from ledgerd.money import format_minor
from ledgerd.store import Store
from ledgerd.sync import Approvals, Syncer
from ledgerd.vendor import Vendor
from ledgerd.web import make_handler


class App:
    def __init__(self, args):
        with open(args.tokens_file, encoding="utf-8") as fh:
            tokens = json.load(fh)
        self.makers = set(tokens["makers"])
        self.checkers = set(tokens["checkers"])
        self.webhook_secret = tokens["webhook_secret"]
        self.store = Store(args.db_dir)
        self.vendor = Vendor(args.vendor, tokens["vendor_api_key"])
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
        totals, days = self.store.summary()
        return {
            "currencies": {
                c: {"count": n, "amount_minor": s, "amount": format_minor(s, c)}
                for c, n, s in totals
            },
            "days": dict(days),
        }

    def console(self, page):
        return console.render(self, page)


def main():
    parser = argparse.ArgumentParser(prog="ledgerd")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--db-dir", required=True)
    parser.add_argument("--vendor", required=True)
    parser.add_argument("--tokens-file", required=True)
    app = App(parser.parse_args())
    server = ThreadingHTTPServer(("127.0.0.1", parser.parse_args().port), make_handler(app))
    server.daemon_threads = True
    threading.Thread(target=app.approvals.recover, daemon=True).start()
    app.syncer.start()
    server.serve_forever()


if __name__ == "__main__":
    main()
