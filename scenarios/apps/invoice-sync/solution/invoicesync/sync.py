"""The background sync: fetch pages in order, retry 503s, resume from the stored cursor."""

import json
import time
import urllib.error
import urllib.parse
import urllib.request


class Syncer:
    def __init__(self, store, upstream):
        self.store = store
        self.upstream = upstream.rstrip("/")
        self.state = "done" if store.get("done") == "1" else "syncing"

    def _url(self, cursor):
        base = self.upstream + "/v1/invoices"
        return base if cursor is None else base + "?" + urllib.parse.urlencode({"cursor": cursor})

    def _fetch(self, cursor):
        """One page; retries 503 and connection errors with backoff, forever."""
        pause = 0.2
        while True:
            wait = pause
            try:
                with urllib.request.urlopen(self._url(cursor), timeout=30) as resp:
                    return json.loads(resp.read().decode("utf-8"))
            except urllib.error.HTTPError as exc:
                if exc.code != 503:
                    raise
                wait = max(pause, _retry_after(exc.headers.get("Retry-After")))
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(wait)
            pause = min(pause * 1.5, 5.0)

    def run(self):
        if self.state == "done":
            return
        cursor = self.store.get("cursor")
        try:
            while True:
                page = self._fetch(cursor)
                cursor = page.get("next_cursor")
                self.store.save_page(page.get("data", []), cursor)
                if cursor is None:
                    self.state = "done"
                    return
        except Exception:
            self.state = "failed"
            raise


def _retry_after(value):
    """Seconds from a Retry-After header (delta-seconds form), 0 when absent or odd."""
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        return 0.0
