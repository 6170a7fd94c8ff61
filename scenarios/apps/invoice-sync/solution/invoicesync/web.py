"""The HTTP interface: health, status, the JSON list and the HTML table."""

import html
import json
from http.server import BaseHTTPRequestHandler

from invoicesync.money import format_minor

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Invoices</title>
<style>body{{font-family:sans-serif}} td.amount{{text-align:right}}</style></head>
<body><h1>Invoices ({count})</h1>
<table><thead><tr><th>id</th><th>customer</th><th>currency</th><th>amount</th></tr></thead>
<tbody>
{rows}
</tbody></table></body></html>
"""


def render(invoices):
    rows = "\n".join(
        '<tr data-id="{id}"><td>{id}</td><td>{customer}</td><td>{currency}</td>'
        '<td class="amount">{amount}</td></tr>'.format(
            id=html.escape(inv["id"]), customer=html.escape(inv["customer"]),
            currency=html.escape(inv["currency"]),
            amount=format_minor(inv["amount_minor"], inv["currency"]),
        )
        for inv in invoices
    )
    return PAGE.format(count=len(invoices), rows=rows)


def make_handler(store, syncer):
    class Handler(BaseHTTPRequestHandler):
        def _send(self, status, body, ctype):
            data = body.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _json(self, obj):
            self._send(200, json.dumps(obj), "application/json")

        def do_GET(self):
            path = self.path.split("?", 1)[0]
            if path == "/health":
                self._json({"status": "ok"})
            elif path == "/api/status":
                self._json({"state": syncer.state, "count": store.count()})
            elif path == "/api/invoices":
                self._json(store.invoices())
            elif path == "/":
                self._send(200, render(store.invoices()), "text/html; charset=utf-8")
            else:
                self._send(404, "not found\n", "text/plain")

        def log_message(self, format, *args):
            pass

    return Handler
