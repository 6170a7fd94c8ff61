"""Steps of the run on the services' HTTP API, no browser: the scorer's own webhooks,
concurrent edits, the partitions between the services and notifierd's SIGKILL."""

from __future__ import annotations

import hashlib
import json
import threading
import time
import urllib.request
from typing import Any

from harness.appkit.fetch import get, poll
from harness.appkit.payments import sign_v1
from harness.appkit.procs import AppProcess

from . import drive
from .fixtures import STATUSES


def post_event(
    ev: Any, vendor: Any, app: AppProcess, pid: str, status: str, version: int
) -> int | None:
    """A genuine, fresh vendor event sent by the scorer (recorded in the truth)."""
    body = json.dumps(
        {
            "event_id": "evt_s_" + hashlib.sha256(f"{pid}{version}".encode()).hexdigest()[:12],
            "type": "payment.updated",
            "payment_id": pid,
            "status": status,
            "version": version,
        },
        separators=(",", ":"),
    ).encode()
    ts = str(int(time.time()))
    secret = vendor.dataset.tokens["webhook_secret"]
    sig = sign_v1(secret, ts, body)
    got = drive.call(
        app.url("/webhooks/vendor"),
        "POST",
        body.decode(),
        headers={"X-Meridian-Timestamp": ts, "X-Meridian-Signature": sig},
    )
    if got.status in (200, 202):
        ev.extra_truth[pid] = (status, version)
    return got.status


def _final(ev: Any) -> dict[str, tuple[str, int]]:
    return {**ev.dataset.final(), **ev.extra_truth}


def _edits(ev: Any, vendor: Any, ledger: AppProcess, maker: Any, checker: Any) -> None:
    listing = ev.listing or []
    if not listing:
        return
    ds = ev.dataset
    changed = list(ds.resync_changes)
    by_id = {str(i.get("id")): i for i in listing}
    x = by_id.get(changed[0]) if changed else None  # changes in the second walk
    y_id = ds.api_order()[len(listing) // 3].id  # gets a webhook
    y = by_id.get(y_id)
    out: dict[str, Any] = {}
    if x is None or y is None:
        ev.edits = out
        return
    url = ledger.url(f"/api/payments/{x['id']}")
    rev = x.get("revision")
    barrier = threading.Barrier(6)
    answers: list[Any] = []
    lock = threading.Lock()

    def edit(k: int) -> None:
        barrier.wait(5.0)
        got = drive.call(
            url, "PATCH", {"note": f"race {k}"}, maker["token"], headers={"If-Match": f'"{rev}"'}
        )
        with lock:
            answers.append((k, got.status, got.body))

    threads = [threading.Thread(target=edit, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20.0)
    out["race"] = [(k, s) for k, s, _b in answers]
    winners = [(k, b) for k, s, b in answers if s == 200]
    out["after_race"] = drive.jget(ledger, f"/api/payments/{x['id']}")
    out["winner_note"] = f"race {winners[0][0]}" if len(winners) == 1 else None
    out["rev"] = rev  # the revision every racer named
    out["winner_body"] = winners[0][1] if len(winners) == 1 else None
    out["no_if_match"] = drive.call(url, "PATCH", {"note": "x"}, maker["token"]).status
    out["stale"] = drive.call(
        url, "PATCH", {"note": "stale"}, maker["token"], headers={"If-Match": f'"{rev}"'}
    ).status
    current = (out["after_race"] or {}).get("revision")
    out["bad_note"] = drive.call(
        url, "PATCH", {"note": 5}, maker["token"], headers={"If-Match": f'"{current}"'}
    ).status
    out["no_token"] = drive.call(
        url, "PATCH", {"note": "x"}, None, headers={"If-Match": f'"{rev}"'}
    ).status
    # a note on y, then a webhook moves y: the note must stay, the revision grows
    yurl = ledger.url(f"/api/payments/{y['id']}")
    first = drive.call(
        yurl,
        "PATCH",
        {"note": "checked <b>twice</b>"},
        checker["token"],
        headers={"If-Match": f'"{y.get("revision")}"'},
    )
    out["y_edit"] = first.status
    before = drive.jget(ledger, f"/api/payments/{y['id']}") or {}
    status, version = _final(ev)[y["id"]]
    new_status = next(s for s in STATUSES if s != status)
    out["y_hook"] = post_event(ev, vendor, ledger, y["id"], new_status, version + 1)
    out["y_before"], out["y_after"] = before, drive.jget(ledger, f"/api/payments/{y['id']}")
    out["x_id"], out["y_id"] = x["id"], y["id"]
    ev.edits = out


def _partition(
    ev: Any, vendor: Any, n2l: Any, l2n: Any, ledger: AppProcess, notifier: AppProcess, checker: Any
) -> None:
    out: dict[str, Any] = {}
    if not ev.notifier_healthy:
        ev.partition = out
        return
    poll(lambda: drive.caught_up(ledger, notifier), 6.0, 0.2)
    # a notifierd that has never read the ledger (no request through its relay in a minute
    # and more) reads none of what follows: every wait below looks once instead of waiting
    # its budget out (the same answers: it is refused nothing and catches nothing up)
    wait = _reads_ledger(n2l)
    n2l.set("refuse")
    l2n.set("refuse")  # both directions: ledgerd must not need notifierd
    since = len(n2l.records())
    # the partition counts from notifierd's first refused read (it may be pausing after
    # an earlier failure): only then does its retry pause decide the catch-up
    out["refused_seen"] = poll(
        lambda: any(r.get("status") == "reset" for r in n2l.records()[since:]), wait(12.0), 0.1
    )
    cut = time.monotonic()
    time.sleep(1.5)
    # the ledger keeps working while notifierd is cut off
    if "c" in ev.drafts:
        out["approve_c"] = drive.call(
            ledger.url(f"/api/drafts/{ev.drafts['c']}/approve"), "POST", None, checker["token"]
        ).status
    listing = ev.listing or []
    hooked = []
    moved = []  # what each webhook sent while notifierd was cut off: [id, status, version]
    for k in (5, 6):
        if len(listing) > k * 1000:
            pid = str(listing[k * 1000]["id"])
            st, ver = _final(ev)[pid]
            new = next(s for s in STATUSES if s != st)
            hooked.append(post_event(ev, vendor, ledger, pid, new, ver + 1))
            moved.append([pid, new, ver + 1])
    out["hooks"] = hooked
    out["moved"] = moved
    out["health"] = get(notifier.url("/health"), timeout=3.0).status
    time.sleep(max(0.0, 3.5 - (time.monotonic() - cut)))
    out["status"] = drive.jget(notifier, "/api/status")
    out["served"] = isinstance(drive.jget(notifier, "/api/notifications?after=0&limit=5"), dict)
    n2l.set("pass")
    l2n.set("pass")
    out["catchup_s"] = drive.poll_true(lambda: drive.caught_up(ledger, notifier), wait(12.0), 0.1)
    # notifierd's reads from its first refused one to its first one after the partition
    # (M-NOTE-2: retried at most 2 s apart): [ms when the relay got it, its answer]
    out["reads"] = [
        [r.get("asked_ms", r.get("t_ms")), r.get("status")]
        for r in n2l.records()[since:]
        if r.get("kind") == "request"
    ]
    # a slow relay (2.5 s per answer, the SPEC allows 3 s): nothing skipped, nothing doubled
    n2l.set("delay", 2.5)
    made = drive.call(
        ledger.url("/api/drafts"),
        "POST",
        {"amount_minor": 31, "currency": "CLF", "counterparty": "Slow Relay AG"},
        ev.dataset.user("maker")["token"],
    )
    out["delay_draft"] = made.status
    out["delay_catchup_s"] = drive.poll_true(
        lambda: drive.caught_up(ledger, notifier), wait(12.0), 0.2
    )
    n2l.set("pass")
    ev.partition = out


def _reads_ledger(n2l: Any) -> Any:
    """``wait(budget)``: the budget when notifierd has read the ledger through its relay
    at least once, else 0 (a single look)."""
    reads = any(r.get("kind") == "request" for r in n2l.records())
    return lambda budget: budget if reads else 0.0


def _notifier_kill(ev: Any, n2l: Any, ledger: AppProcess, notifier: AppProcess, maker: Any) -> None:
    out: dict[str, Any] = {}
    if not ev.notifier_healthy:
        ev.notifier_kill = out
        return
    wait = _reads_ledger(n2l)
    poll(lambda: drive.caught_up(ledger, notifier), wait(6.0), 0.2)
    n2l.set("hold")
    for k in range(3):
        drive.call(
            ledger.url("/api/drafts"),
            "POST",
            {"amount_minor": 1000 + k, "currency": "EUR", "counterparty": f"Held Read {k}"},
            maker["token"],
        )
    out["held"] = n2l.held.wait(wait(8.0))
    drive.kill(notifier)
    n2l.release()
    ok, took, err = drive.respawn(notifier)
    out["respawn"], out["respawn_s"], out["error"] = ok, round(took, 2), err
    if ok:
        out["catchup_s"] = drive.poll_true(
            lambda: drive.caught_up(ledger, notifier), wait(10.0), 0.2
        )
        out["notes"] = drive.notes_of(notifier)
        out["events"] = drive.events_of(ledger)
    ev.notifier_kill = out


def wait_url(url: str, budget: float) -> bool:
    def ok() -> bool:
        try:
            with urllib.request.urlopen(url, timeout=1.0):
                return True
        except OSError:
            return False

    return poll(ok, budget)
