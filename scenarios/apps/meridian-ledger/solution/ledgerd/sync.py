"""The sync (resumable, conditional) and the approval of drafts (idempotent)."""

import threading
import time
import uuid

from ledgerd.vendor import VendorError


class Syncer:
    def __init__(self, store, vendor):
        self.store = store
        self.vendor = vendor
        self.lock = threading.Lock()
        self.thread = None

    def start(self):
        """Start a sync unless one is running; True when a new one started."""
        with self.lock:
            if self.thread is not None and self.thread.is_alive():
                return False
            self.thread = threading.Thread(target=self.run, daemon=True)
            self.thread.start()
            return True

    def state(self):
        return self.store.get("sync", "idle")

    def run(self):
        store = self.store
        if store.get("sync") != "running":  # not a resumed, interrupted walk
            if store.get("complete") == "1":
                # a completed copy: walk again with conditional requests
                store.put("mode", "refresh")
                store.put("next_index", "0")
                store.put("next_cursor", "")
            else:
                store.put("mode", "initial")  # resume where a failed first walk stopped
        store.put("sync", "running")
        try:
            self._walk()
        except VendorError as exc:
            store.put("sync", "failed")
            store.put("last_error", str(exc))
            return
        store.put("complete", "1")
        store.put("sync", "done")
        store.put("last_error", "")

    def _walk(self):
        store = self.store
        refresh = store.get("mode") == "refresh"
        idx = int(store.get("next_index", "0"))
        cursor = None if refresh else (store.get("next_cursor") or None)
        while True:
            known = store.page_row(idx) if refresh else None
            if refresh:
                cursor = known[0] if known else cursor
            etag = known[1] if known else None
            status, headers, body = self.vendor.page(cursor, etag)
            if status == 304 and known:
                nxt = known[2]
                store.store_page(idx, cursor, etag, [], nxt, _next(idx, nxt))
            elif status == 200 and isinstance(body, dict):
                nxt = body.get("next_cursor")
                store.store_page(
                    idx, cursor, headers.get("ETag"), body.get("data") or [], nxt, _next(idx, nxt)
                )
            else:
                raise VendorError(f"unexpected vendor answer HTTP {status}")
            if not nxt:
                return
            idx, cursor = idx + 1, nxt


def _next(idx, nxt):
    return {"next_index": str(idx + 1), "next_cursor": nxt or "", "pages_done": str(idx + 1)}


class Approvals:
    def __init__(self, store, vendor):
        self.store = store
        self.vendor = vendor
        self.lock = threading.Lock()

    def approve(self, draft_id, checker):
        """(http status, draft or error). One vendor payment per draft, ever."""
        with self.lock:
            draft = self.store.draft(draft_id)
            if draft is None:
                return 404, {"error": "no such draft"}
            if draft["state"] == "executed":
                return 409, {"error": "draft already executed"}
            key = draft["idempotency_key"] or str(uuid.uuid4())
            self.store.update_draft(
                draft_id, state="approving", idempotency_key=key, checker=checker
            )
            draft = self.store.draft(draft_id)
            return self._submit(draft)

    def _submit(self, draft, attempts=3):
        try:
            status, _, body = self.vendor.create_payment(
                draft, draft["idempotency_key"], attempts=attempts
            )
        except VendorError as exc:
            self.store.update_draft(draft["id"], state="pending_approval")
            return 502, {"error": f"vendor unavailable: {exc}"}
        if status in (200, 201) and isinstance(body, dict) and body.get("id"):
            self.store.update_draft(draft["id"], state="executed", vendor_payment_id=body["id"])
            return 200, self.store.draft(draft["id"])
        self.store.update_draft(draft["id"], state="pending_approval")
        return 502, {"error": f"vendor refused the payment (HTTP {status})"}

    def recover(self):
        """At start: finish approvals a crash interrupted, with their stored keys."""
        for _ in range(20):
            pending = self.store.drafts("approving")
            if not pending:
                return
            for draft in pending:
                with self.lock:
                    self._submit_recover(draft)
            time.sleep(1.0)

    def _submit_recover(self, draft):
        try:
            status, _, body = self.vendor.create_payment(draft, draft["idempotency_key"])
        except VendorError:
            return
        if status in (200, 201) and isinstance(body, dict) and body.get("id"):
            self.store.update_draft(draft["id"], state="executed", vendor_payment_id=body["id"])
