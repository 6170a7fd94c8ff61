"""HTTP API, webhook receiver and the console page."""

import hashlib
import hmac
import json
import re
import time
import uuid
from datetime import date
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

from ledgerd.money import EXPONENTS, format_minor

STATUSES = ("pending", "settled", "failed")
MAX_AMOUNT = 10**18
CONSOLE_PAGE = 100
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class BadRequest(Exception):
    pass


def payment_json(row):
    pid, amount, currency, status, counterparty, created_at, day, version = row
    return {
        "id": pid,
        "created_at": created_at,
        "day": day,
        "counterparty": counterparty,
        "currency": currency,
        "amount_minor": amount,
        "amount": format_minor(amount, currency),
        "status": status,
        "version": version,
    }


def draft_json(d):
    return {
        "id": d["id"],
        "state": d["state"],
        "amount_minor": d["amount_minor"],
        "currency": d["currency"],
        "amount": format_minor(d["amount_minor"], d["currency"]),
        "counterparty": d["counterparty"],
        "vendor_payment_id": d["vendor_payment_id"],
    }


def filters(query):
    where, args = [], []
    currency = query.get("currency")
    if currency is not None:
        if currency not in EXPONENTS:
            raise BadRequest(f"currency must be one of {', '.join(EXPONENTS)}")
        where.append("currency = ?")
        args.append(currency)
    status = query.get("status")
    if status is not None:
        if status not in STATUSES:
            raise BadRequest(f"status must be one of {', '.join(STATUSES)}")
        where.append("status = ?")
        args.append(status)
    day = query.get("day")
    if day is not None:
        try:
            if not _DAY.match(day):
                raise ValueError
            date.fromisoformat(day)
        except ValueError:
            raise BadRequest("day must be a calendar date YYYY-MM-DD") from None
        where.append("day = ?")
        args.append(day)
    clause = (" WHERE " + " AND ".join(where)) if where else ""
    return clause, tuple(args)


def _int_param(query, name, default, low, high):
    raw = query.get(name)
    if raw is None:
        return default
    if not re.fullmatch(r"\d{1,6}", raw) or not low <= int(raw) <= high:
        raise BadRequest(f"{name} must be an integer from {low} to {high}")
    return int(raw)


def make_handler(app):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "ledgerd"

        def log_message(self, format, *args):
            pass

        # -- plumbing ----------------------------------------------------------------
        def _send(self, status, body, ctype="application/json", headers=None):
            if ctype == "application/json":
                payload = json.dumps(body, separators=(",", ":")).encode()
            else:
                payload = body.encode("utf-8")
                ctype = "text/html; charset=utf-8"
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("Cache-Control", "no-store")
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(payload)

        def _error(self, status, message):
            self._send(status, {"error": message})

        def _query(self):
            parts = urlsplit(self.path)
            return parts.path, {k: v[-1] for k, v in parse_qs(parts.query).items()}

        def _body(self):
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _role(self):
            auth = self.headers.get("Authorization") or ""
            token = auth[7:] if auth.startswith("Bearer ") else ""
            if token and token in app.makers:
                return "maker", token
            if token and token in app.checkers:
                return "checker", token
            return None, None

        # -- GET ---------------------------------------------------------------------
        def do_GET(self):
            path, query = self._query()
            try:
                if path == "/health":
                    return self._send(200, {"status": "ok"})
                if path == "/api/status":
                    return self._send(200, app.status())
                if path == "/api/payments":
                    return self._payments(query)
                if path == "/api/summary":
                    return self._send(200, app.summary())
                if path == "/api/drafts":
                    return self._send(200, {"items": [draft_json(d) for d in app.store.drafts()]})
                m = re.fullmatch(r"/api/drafts/([A-Za-z0-9_-]+)", path)
                if m:
                    d = app.store.draft(m.group(1))
                    if d is None:
                        return self._error(404, "no such draft")
                    return self._send(200, draft_json(d))
                if path == "/":
                    page = _int_param(query, "page", 1, 1, 100000)
                    return self._send(200, app.console(page), ctype="text/html")
                return self._error(404, "not found")
            except BadRequest as exc:
                return self._error(400, str(exc))

        def _payments(self, query):
            page = _int_param(query, "page", 1, 1, 100000)
            per_page = _int_param(query, "per_page", 100, 1, 500)
            where, args = filters(query)
            total, rows = app.store.query(where, args, per_page, (page - 1) * per_page)
            self._send(
                200,
                {
                    "items": [payment_json(r) for r in rows],
                    "total": total,
                    "page": page,
                    "per_page": per_page,
                },
            )

        # -- POST --------------------------------------------------------------------
        def do_POST(self):
            path, _ = self._query()
            body = self._body()
            if path == "/webhooks/vendor":
                return self._webhook(body)
            if path == "/api/sync":
                app.syncer.start()
                return self._send(202, {"sync": "running"})
            if path == "/api/drafts":
                return self._create_draft(body)
            m = re.fullmatch(r"/api/drafts/([A-Za-z0-9_-]+)/approve", path)
            if m:
                return self._approve(m.group(1))
            return self._error(404, "not found")

        def _webhook(self, body):
            stamp = self.headers.get("X-Vendor-Timestamp") or ""
            sig = self.headers.get("X-Vendor-Signature") or ""
            signed = stamp.encode() + b"." + body
            mac = hmac.new(app.webhook_secret.encode(), signed, hashlib.sha256)
            if not hmac.compare_digest(sig, "v1=" + mac.hexdigest()):
                return self._error(401, "bad signature")
            try:
                if abs(time.time() - int(stamp)) > 300:
                    return self._error(401, "stale timestamp")
                event = json.loads(body)
                pid, status, version = event["payment_id"], event["status"], event["version"]
                if status not in STATUSES or not isinstance(version, int):
                    raise ValueError
            except (ValueError, KeyError, TypeError):
                return self._error(400, "malformed event")
            app.store.apply_event(pid, status, version)
            return self._send(200, {"ok": True})

        def _create_draft(self, body):
            role, token = self._role()
            if role is None:
                return self._error(401, "a maker token is required")
            if role != "maker":
                return self._error(403, "only makers create drafts")
            try:
                data = json.loads(body)
            except ValueError:
                return self._error(400, "body must be JSON")
            if not isinstance(data, dict):
                return self._error(400, "body must be a JSON object")
            amount, currency = data.get("amount_minor"), data.get("currency")
            counterparty = data.get("counterparty")
            if type(amount) is not int or not 0 < amount <= MAX_AMOUNT:
                return self._error(400, "amount_minor must be a positive integer")
            if currency not in EXPONENTS:
                return self._error(400, "currency must be one of EUR, USD, JPY, KWD")
            if not isinstance(counterparty, str) or not 1 <= len(counterparty.strip()) <= 80:
                return self._error(400, "counterparty must be 1 to 80 characters")
            draft = {
                "id": "d_" + uuid.uuid4().hex[:12],
                "amount_minor": amount,
                "currency": currency,
                "counterparty": counterparty.strip(),
                "maker": token,
            }
            app.store.add_draft(draft)
            return self._send(201, draft_json(app.store.draft(draft["id"])))

        def _approve(self, draft_id):
            role, token = self._role()
            if role is None:
                return self._error(401, "a checker token is required")
            if role != "checker":
                return self._error(403, "only checkers approve drafts")
            status, body = app.approvals.approve(draft_id, token)
            return self._send(status, draft_json(body) if status == 200 else body)

    return Handler
