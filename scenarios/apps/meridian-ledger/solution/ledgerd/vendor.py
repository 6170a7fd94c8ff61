"""The vendor client: one request at a time, retries with backoff and Retry-After."""

import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request

TIMEOUT = 15.0
MAX_ATTEMPTS = 8
FIRST_PAUSE = 0.25
MAX_PAUSE = 4.0


class VendorError(Exception):
    """The vendor could not be reached or kept failing."""


class Vendor:
    def __init__(self, base_url, api_key):
        self.base = base_url.rstrip("/")
        self.api_key = api_key
        self.up = True
        self.last_error = None

    def _note(self, ok, error=None):
        self.up = ok
        if error:
            self.last_error = error

    def _once(self, method, path, body=None, headers=None):
        """One request: (status, headers, parsed body); raises OSError-like on transport."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.api_key}")
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        for key, value in (headers or {}).items():
            req.add_header(key, value)
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:
                raw = resp.read()
                return resp.status, resp.headers, json.loads(raw) if raw else None
        except urllib.error.HTTPError as exc:
            raw = exc.read() if exc.fp else b""
            try:
                parsed = json.loads(raw) if raw else None
            except ValueError:
                parsed = None
            return exc.code, exc.headers, parsed

    def request(self, method, path, body=None, headers=None, attempts=MAX_ATTEMPTS):
        """Retry transport errors, 429 and 5xx; return (status, headers, body) otherwise."""
        pause = FIRST_PAUSE
        for attempt in range(1, attempts + 1):
            wait = pause
            try:
                status, resp_headers, parsed = self._once(method, path, body, headers)
            except (TimeoutError, urllib.error.URLError, http.client.HTTPException, OSError) as exc:
                self._note(False, f"{type(exc).__name__}: {exc}")
            else:
                if status == 429:
                    self._note(True, "429 Too Many Requests")
                    wait = _retry_after(resp_headers.get("Retry-After"), pause)
                elif status >= 500:
                    self._note(False, f"HTTP {status}")
                else:
                    self._note(True)
                    return status, resp_headers, parsed
            if attempt == attempts:
                break
            time.sleep(wait)
            pause = min(pause * 2, MAX_PAUSE)
        raise VendorError(self.last_error or "vendor unavailable")

    def page(self, cursor, etag=None):
        path = "/v1/payments"
        if cursor:
            path += "?" + urllib.parse.urlencode({"cursor": cursor})
        headers = {"If-None-Match": etag} if etag else {}
        return self.request("GET", path, headers=headers)

    def create_payment(self, draft, key, attempts=3):
        body = {
            "amount_minor": draft["amount_minor"],
            "currency": draft["currency"],
            "counterparty": draft["counterparty"],
            "reference": draft["id"],
        }
        return self.request(
            "POST", "/v1/payments", body=body, headers={"Idempotency-Key": key}, attempts=attempts
        )


def _retry_after(value, default):
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        return default
