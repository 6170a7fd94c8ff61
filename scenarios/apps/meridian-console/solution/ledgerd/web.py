"""ledgerd's HTTP API, webhooks and the console's files (SPEC sections 3.4, 5, 6)."""

import hashlib
import hmac
import json
import os
import re
import time
import urllib.error
import urllib.request
from datetime import date
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

from ledgerd.money import EXPONENTS, STATUSES, money

STATIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/field.js": ("field.js", "text/javascript; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
}
WINDOW_S = 300
DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
INT = re.compile(r"^[0-9]+$")


class Bad(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def _int(value, lo, hi, name):
    if not INT.match(value) or not lo <= int(value) <= hi:
        raise Bad(400, f"{name} must be an integer {lo}..{hi}")
    return int(value)


def parse_listing(query):
    qs = parse_qs(query, keep_blank_values=True)
    one = {k: v[-1] for k, v in qs.items()}
    filters = {}
    if "currency" in one:
        if one["currency"] not in EXPONENTS:
            raise Bad(400, "unknown currency")
        filters["currency"] = one["currency"]
    if "status" in one:
        if one["status"] not in STATUSES:
            raise Bad(400, "unknown status")
        filters["status"] = one["status"]
    if "day" in one:
        try:
            if not DAY.match(one["day"]):
                raise ValueError
            date.fromisoformat(one["day"])
        except ValueError:
            raise Bad(400, "day must be YYYY-MM-DD") from None
        filters["day"] = one["day"]
    page = _int(one["page"], 1, 10**9, "page") if "page" in one else 1
    per_page = _int(one["per_page"], 1, 500, "per_page") if "per_page" in one else 100
    return filters, page, per_page


def valid_draft(body):
    if not isinstance(body, dict):
        raise Bad(400, "body must be a JSON object")
    minor = body.get("amount_minor")
    if type(minor) is not int or not 1 <= minor <= 10**18:
        raise Bad(400, "amount_minor must be an integer 1..10^18")
    if body.get("currency") not in EXPONENTS:
        raise Bad(400, "unknown currency")
    cp = body.get("counterparty")
    if not isinstance(cp, str) or not 1 <= len(cp.strip()) <= 80:
        raise Bad(400, "counterparty must be 1..80 characters")
    return minor, body["currency"], cp.strip()


def make_handler(app):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            pass

        def _send(self, status, body, ctype="application/json; charset=utf-8", extra=None):
            raw = body if isinstance(body, bytes) else json.dumps(
                body, separators=(",", ":"), ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(raw)))
            self.send_header("Cache-Control", "no-store")
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(raw)

        def _body(self):
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def _json_body(self):
            try:
                return json.loads(self._body().decode("utf-8"))
            except (ValueError, UnicodeDecodeError):
                raise Bad(400, "body must be JSON") from None

        def _user(self):
            auth = self.headers.get("Authorization", "")
            token = auth[7:].strip() if auth.startswith("Bearer ") else ""
            user = app.users.get(token)
            if user is None:
                raise Bad(401, "unknown or missing token")
            return user

        def _route(self, method):
            url = urlsplit(self.path)
            path = url.path
            try:
                out = self._dispatch(method, path, url.query)
            except Bad as exc:
                out = (exc.status, {"error": str(exc)})
            self._send(*out)

        def do_GET(self):
            self._route("GET")

        def do_POST(self):
            self._route("POST")

        def do_PATCH(self):
            self._route("PATCH")

        def _dispatch(self, method, path, query):
            if method == "GET":
                if path in FILES:
                    name, ctype = FILES[path]
                    with open(os.path.join(STATIC, name), "rb") as fh:
                        return 200, fh.read(), ctype
                if path == "/health":
                    return 200, {"status": "ok"}
                if path == "/api/status":
                    return 200, app.status()
                if path == "/api/payments":
                    filters, page, per_page = parse_listing(query)
                    items, total = app.store.listing(filters, page, per_page)
                    return 200, {"items": items, "total": total, "page": page,
                                 "per_page": per_page}
                if path.startswith("/api/payments/"):
                    found = app.store.payment(path.rsplit("/", 1)[1])
                    return (200, found) if found else (404, {"error": "no such payment"})
                if path == "/api/summary":
                    return 200, app.summary()
                if path == "/api/field":
                    return 200, app.field()
                if path == "/api/drafts":
                    return 200, {"items": app.store.drafts()}
                if path.startswith("/api/drafts/"):
                    found = app.store.draft(path.rsplit("/", 1)[1])
                    return (200, found) if found else (404, {"error": "no such draft"})
                if path == "/api/events":
                    qs = {k: v[-1] for k, v in parse_qs(query).items()}
                    after = _int(qs.get("after", "0"), 0, 10**12, "after")
                    limit = _int(qs.get("limit", "100"), 1, 500, "limit")
                    items, last = app.store.events(after, limit)
                    return 200, {"items": items, "last_seq": last}
                if path == "/api/feed":
                    return app.feed()
            if method == "POST":
                if path == "/webhooks/vendor":
                    return self._webhook()
                if path == "/api/sync":
                    if app.syncer.start(fresh=True):
                        return 202, {"sync": "running"}
                    return 409, {"error": "a sync is running"}
                if path == "/api/drafts":
                    user = self._user()
                    if user["role"] not in ("maker", "lead"):
                        raise Bad(403, "only makers create drafts")
                    minor, cur, cp = valid_draft(self._json_body())
                    return 201, app.store.add_draft(minor, cur, cp, user["name"])
                m = re.match(r"^/api/drafts/([^/]+)/approve$", path)
                if m:
                    user = self._user()
                    draft = app.store.draft(m[1])
                    if draft is None:
                        return 404, {"error": "no such draft"}
                    if user["role"] not in ("checker", "lead") or draft["maker"] == user["name"]:
                        raise Bad(403, "this user may not approve this draft")
                    return app.approvals.approve(m[1])
            if method == "PATCH" and path.startswith("/api/payments/"):
                self._user()
                match = re.match(r'^"?(\d+)"?$', (self.headers.get("If-Match") or "").strip())
                if not self.headers.get("If-Match"):
                    return 428, {"error": "If-Match is required"}
                body = self._json_body()
                note = body.get("note") if isinstance(body, dict) else None
                if not isinstance(note, str) or len(note) > 500:
                    raise Bad(400, "note must be a string of at most 500 characters")
                if not match:
                    return 412, {"error": "stale revision"}
                status, found = app.store.edit_note(path.rsplit("/", 1)[1], int(match[1]), note)
                if status == 200:
                    return 200, found
                return status, {"error": "stale revision" if status == 412 else "no such payment"}
            return 404, {"error": "not found"}

        def _webhook(self):
            raw = self._body()
            ts = self.headers.get("X-Meridian-Timestamp", "")
            sig = self.headers.get("X-Meridian-Signature", "")
            want = hmac.new(app.webhook_secret.encode(), ts.encode() + b"." + raw,
                            hashlib.sha256).hexdigest()
            if not hmac.compare_digest(sig, "v1=" + want):
                return 401, {"error": "bad signature"}
            if not INT.match(ts) or abs(time.time() - int(ts)) > WINDOW_S:
                return 400, {"error": "timestamp outside the window"}
            try:
                ev = json.loads(raw)
                result = app.store.apply_event(str(ev["event_id"]), str(ev["payment_id"]),
                                               str(ev["status"]), int(ev["version"]))
            except (ValueError, KeyError, TypeError):
                return 400, {"error": "malformed event"}
            return 200, {"result": result}

    return Handler


def fetch_feed(notifier):
    try:
        with urllib.request.urlopen(notifier + "/api/notifications?latest=50", timeout=2.0) as r:
            return 200, json.loads(r.read())
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return 503, {"error": f"notifications unavailable: {type(exc).__name__}"}


__all__ = ["make_handler", "fetch_feed", "money"]
