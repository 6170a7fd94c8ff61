"""The walk (SPEC section 4) and approvals (section 5.6), each in its own thread."""

import threading
import time

from ledgerd.vendor import Fatal, Transient


class Syncer:
    def __init__(self, store, vendor):
        self.store = store
        self.vendor = vendor
        self.lock = threading.Lock()
        self.thread = None

    def running(self):
        return self.thread is not None and self.thread.is_alive()

    def state(self):
        return self.store.get("walk", "idle")

    def start(self, fresh):
        with self.lock:
            if self.running():
                return False
            if fresh:
                self.store.begin_walk()
            self.thread = threading.Thread(target=self._walk, daemon=True)
            self.thread.start()
            return True

    def boot(self):
        """At start: resume an unfinished walk, else start the first one."""
        state = self.store.get("walk", "idle")
        self.start(fresh=state != "running")

    def _walk(self):
        try:
            while True:
                cursor = self.store.get("walk_cursor", "") or None
                etag, stored_next = self.store.page_meta(cursor or "")
                status, body, new_etag = self.vendor.page(cursor, etag)
                if status == 304:
                    self.store.page_unchanged(stored_next)
                    nxt = stored_next
                else:
                    nxt = body.get("next_cursor")
                    self.store.store_page(cursor or "", body.get("data") or [], new_etag, nxt)
                if nxt is None:
                    return
        except (Transient, Fatal, ValueError, KeyError) as exc:
            self.store.fail_walk(str(exc))


class Approvals:
    def __init__(self, store, vendor):
        self.store = store
        self.vendor = vendor

    def approve(self, did):
        """(status, body) of an approval of a draft the caller may approve."""
        claimed = self.store.claim(did)
        if claimed is None:
            return 404, {"error": "no such draft"}
        if claimed != "claimed":
            return 409, {"error": f"draft is {claimed}"}
        return self._submit(did)

    def _submit(self, did):
        row = self.store.draft_row(did)
        draft = self.store.draft(did)
        try:
            created = self.vendor.create(draft, row[7])
        except Fatal as exc:
            return 502, self.store.finish(did, "failed", error=str(exc))
        except Transient as exc:
            return 502, self.store.finish(did, "pending", error=f"vendor unreachable: {exc}")
        return 200, self.store.finish(did, "executed", vendor_id=created.get("id"))

    def recover(self):
        """Finish every draft a crash left in `approving`, with its stored key."""
        pending = self.store.approving()
        while pending:
            for did in list(pending):
                row = self.store.draft_row(did)
                try:
                    created = self.vendor.create(self.store.draft(did), row[7])
                except Transient:
                    continue
                except Fatal as exc:
                    self.store.finish(did, "failed", error=str(exc))
                else:
                    self.store.finish(did, "executed", vendor_id=created.get("id"))
                pending.remove(did)
            if pending:
                time.sleep(1.0)
