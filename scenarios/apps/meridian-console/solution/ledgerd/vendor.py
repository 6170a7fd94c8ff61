"""The vendor's HTTP API with the SPEC's wire rules (section 3.2)."""

import json
import threading
import time
import urllib.error
import urllib.request

TIMEOUT_S = 10.0
FIRST_WAIT_S = 0.2
MAX_WAIT_S = 2.0


class Transient(Exception):
    pass


class Fatal(Exception):
    pass


class Vendor:
    def __init__(self, base, key):
        self.base = base.rstrip("/")
        self.key = key
        self.up = True
        self.last_error = None
        self.lock = threading.Lock()  # one request at a time

    def _once(self, method, path, body=None, headers=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.key}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
                return resp.status, resp.headers, resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers, exc.read() if exc.fp else b""
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise Transient(f"{type(exc).__name__}: {exc}") from exc

    def request(self, method, path, body=None, headers=None, give_up_s=60.0, attempts=None):
        """Retry transient failures with the doubling, capped wait; honour 429."""
        wait = FIRST_WAIT_S
        started = time.monotonic()
        tries = 0
        while True:
            tries += 1
            with self.lock:
                try:
                    status, hdrs, raw = self._once(method, path, body, headers)
                except Transient as exc:
                    status, hdrs, raw, error = None, None, b"", str(exc)
                else:
                    error = None
                if status == 429:
                    self.up = True
                    try:
                        pause = float(hdrs.get("Retry-After", "1"))
                    except ValueError:
                        pause = 1.0
                    time.sleep(pause)  # holding the lock: nothing else goes out meanwhile
                    continue
            if status is not None and status < 500:
                self.up, self.last_error = True, None
                return status, hdrs, raw
            self.up = False
            self.last_error = error or f"vendor answered {status}"
            if attempts is not None and tries >= attempts:
                raise Transient(self.last_error)
            if time.monotonic() - started > give_up_s:
                raise Transient(self.last_error)
            time.sleep(wait)
            wait = min(wait * 2, MAX_WAIT_S)

    def page(self, cursor, etag):
        path = "/v1/payments?limit=64" + (f"&cursor={cursor}" if cursor else "")
        headers = {"If-None-Match": etag} if etag else {}
        status, hdrs, raw = self.request("GET", path, headers=headers)
        if status == 304:
            return 304, None, etag
        if status != 200:
            raise Fatal(f"vendor answered {status} for a page")
        return 200, json.loads(raw), hdrs.get("ETag")

    def create(self, draft, key):
        body = {"amount_minor": draft["amount_minor"], "currency": draft["currency"],
                "counterparty": draft["counterparty"], "reference": draft["id"]}
        status, _h, raw = self.request(
            "POST", "/v1/payments", body, {"Idempotency-Key": key}, attempts=4
        )
        if status in (200, 201):
            return json.loads(raw)
        raise Fatal(f"vendor answered {status}: {raw[:200].decode('utf-8', 'replace')}")

    def probe(self):
        try:
            with self.lock:
                self._once("GET", "/v1/payments?limit=1")
            self.up = True
        except Transient as exc:
            self.up, self.last_error = False, str(exc)
