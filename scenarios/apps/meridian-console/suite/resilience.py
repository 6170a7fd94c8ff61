"""Checks of tier R: what survives a SIGKILL, a cold boot with the vendor down and the
partitions between the two services."""

from __future__ import annotations

from typing import Any

from harness.appkit.grading import holds
from harness.scoring import Outcome, absent, graded

from .grader import ck
from .readers import PACE_SLACK_S, ids

CHECK_EVERY_S = 5.0  # a cold-booted ledgerd tries the vendor at least this often (App. B)


# -- R: resilience ----------------------------------------------------------------------


@ck(
    "durability.kill",
    None,
    "lost data: committed state gone after SIGKILL",
    ("M-DUR-1",),
    critical=True,
    severity="data",
)
def durability_kill(ev: Any) -> Outcome:
    b, c = ev.before_cold or {}, ev.cold or {}
    if not c.get("ok"):
        return absent(f"no cold boot: {c.get('err')}")
    # every payment, note, draft and event unchanged (SPEC 8): the whole items, not ids
    keys = ("id", "note", "revision", "version", "status", "amount", "amount_minor", "currency")

    def kept(listing: Any) -> list[tuple[Any, ...]]:
        return [tuple(i.get(k) for k in keys) for i in listing or []]

    same_list = ids(b.get("listing")) == ids(c.get("listing")) and kept(b.get("listing")) == kept(
        c.get("listing")
    )
    same_drafts = b.get("drafts") == c.get("drafts")
    same_events = (b.get("events") or []) == (c.get("events") or [])[: len(b.get("events") or [])]
    return holds(
        bool(b.get("listing")) and same_list and same_drafts and same_events,
        f"payments kept {same_list}, drafts kept {same_drafts}, events kept {same_events}",
    )


@ck(
    "res.down_boot",
    "resilience",
    "outage takes the ledger down: no boot while the vendor is away",
    ("M-DUR-2",),
)
def res_down_boot(ev: Any) -> Outcome:
    c = ev.cold or {}
    if not c:
        return absent("no cold boot")
    st = c.get("status") or {}
    # it keeps trying the vendor: asked at least once since it was started, never more
    # than 5 s between two tries or after the last (SPEC 8 and Appendix B)
    start, end = c.get("t_boot_ms"), c.get("t_end_ms")
    tries = [
        r["t_ms"] for r in ev.pages("offline") if start is not None and r.get("t_ms", -1) >= start
    ]
    marks = [*tries, end] if end is not None else tries
    longest = max((b - a for a, b in zip(marks, marks[1:], strict=False)), default=0.0) / 1000  # noqa: RUF007  (zip kept: a calibrated expression)
    trying = bool(tries) and end is not None and longest <= CHECK_EVERY_S + PACE_SLACK_S
    ok = (
        c.get("ok")
        and c.get("boot_s", 99) <= 10.0
        and st.get("vendor") == "down"
        and bool(c.get("listing"))
        and trying
    )
    return holds(
        bool(ok),
        f"healthy {c.get('ok')} in {round(c.get('boot_s') or 0, 2)} s; vendor {st.get('vendor')}; "
        f"{len(tries)} tries of the vendor since the boot, longest wait {longest:.2f} s "
        f"(SPEC: at most every {CHECK_EVERY_S:g} s)",
    )


@ck(
    "res.health_during_sync",
    "resilience",
    "false alarms: /health blocks while the walk waits",
    ("M-BOOT-1",),
)
def res_health_during_sync(ev: Any) -> Outcome:
    got = ev.health_during_sync
    if got is None:
        return absent("the held page was never reached")
    return holds(got.status == 200, f"GET /health during the held page: {got.status}")


@ck(
    "note.exactly_once",
    None,
    "wrong feed: notifications missing or doubled",
    ("M-NOTE-1",),
    critical=True,
    severity="data",
)
def note_exactly_once(ev: Any) -> Outcome:
    notes, events = ev.notifications, ev.events
    if notes is None or events is None:
        return absent("no notifications or events to compare")
    want = [e.get("seq") for e in events]
    got = [n.get("seq") for n in notes]
    refs = all(
        (n.get("ref") in (e.get("payment_id"), e.get("draft_id"), None, ""))
        and n.get("kind") == e.get("kind")
        for n, e in zip(notes, events, strict=False)
    )
    return holds(
        got == want and refs,
        f"{len(got)} notifications for {len(want)} events; kinds/refs agree {refs}",
    )


@ck(
    "note.kill_resume",
    "resilience",
    "gaps after a crash: notifierd skipped or doubled events",
    ("M-NOTE-1",),
)
def note_kill_resume(ev: Any) -> Outcome:
    k = ev.notifier_kill
    if not k or not k.get("held"):
        return absent("the held read was never reached")
    if not k.get("respawn"):
        return graded(0.0, f"notifierd did not restart: {k.get('error')}")
    got = [n.get("seq") for n in k.get("notes") or []]
    want = [e.get("seq") for e in k.get("events") or []]
    return holds(
        k.get("catchup_s") is not None and got == want,
        f"caught up after {k.get('catchup_s')} s; {len(got)}/{len(want)}",
    )


@ck(
    "note.partition_catchup",
    "resilience",
    "stale feed: notifierd does not catch up after a partition",
    ("M-NOTE-2",),
)
def note_partition_catchup(ev: Any) -> Outcome:
    p = ev.partition
    if not p:
        return absent("no partition")
    t = p.get("catchup_s")
    ok = bool(p.get("refused_seen")) and t is not None and t <= 5.0
    return holds(
        ok, f"refused during the partition {p.get('refused_seen')}; caught up {t} s after it ended"
    )


@ck(
    "note.serves_partitioned",
    "resilience",
    "dark feed: notifierd stops serving while cut off",
    ("M-NOTE-2",),
)
def note_serves_partitioned(ev: Any) -> Outcome:
    p = ev.partition
    if not p:
        return absent("no partition")
    st = p.get("status") or {}
    ok = p.get("health") == 200 and p.get("served") and st.get("ledger") == "down"
    return holds(bool(ok), f"/health {p.get('health')}, served {p.get('served')}, status {st}")


@ck(
    "note.slow_relay",
    "resilience",
    "gaps on a slow link: a 2.5 s answer made notifierd skip",
    ("M-NOTE-2",),
)
def note_slow_relay(ev: Any) -> Outcome:
    p = ev.partition
    if not p or p.get("delay_draft") != 201:
        return absent("no delayed read")
    t = p.get("delay_catchup_s")
    return holds(t is not None, f"caught up through a 2.5 s relay after {t} s")


@ck(
    "note.retry_spacing",
    "resilience",
    "slow recovery: notifierd retries a cut-off ledger less often than every 2 s",
    ("M-NOTE-2",),
)
def note_retry_spacing(ev: Any) -> Outcome:
    p = ev.partition
    if not p:
        return absent("no partition")
    reads = sorted((r for r in p.get("reads") or [] if r[0] is not None), key=lambda r: r[0])
    refused = [i for i, r in enumerate(reads) if r[1] == "reset"]
    if not refused:
        return holds(False, "notifierd asked the ledger nothing while it was cut off")
    # from its first refused read through its first read after the partition
    span = reads[refused[0] : refused[-1] + 2]
    if len(span) < 2:
        return holds(False, "notifierd did not ask again after its last refused read")
    worst = max((b[0] - a[0]) / 1000.0 for a, b in zip(span, span[1:], strict=False))  # noqa: RUF007  (zip kept: a calibrated expression)
    return holds(
        worst <= 2.0 + PACE_SLACK_S,
        f"{len(refused)} refused reads, at most {worst:.2f} s apart (SPEC: at most 2 s)",
    )


@ck(
    "res.ledger_independent",
    "resilience",
    "coupled outage: ledgerd stalls without notifierd",
    ("M-NOTE-3",),
)
def res_ledger_independent(ev: Any) -> Outcome:
    p = ev.partition
    if not p:
        return absent("no partition")
    hooks = p.get("hooks") or []
    # accepted is not enough: each webhook moved its payment and published its event
    listing = (ev.before_cold or {}).get("listing") or []
    by = {str(i.get("id")): i for i in listing}
    published = {
        (str(e.get("payment_id")), e.get("version"))
        for e in ev.events or []
        if e.get("kind") == "payment.updated"
    }
    lost = [
        pid
        for pid, status, version in p.get("moved") or []
        if ((by.get(pid) or {}).get("status"), (by.get(pid) or {}).get("version"))
        != (status, version)
        or (pid, version) not in published
    ]
    ok = (
        p.get("approve_c") == 200
        and hooks
        and all(h in (200, 202) for h in hooks)
        and bool(listing)
        and ev.events is not None
        and not lost
    )
    return holds(
        bool(ok),
        f"while cut off: approval {p.get('approve_c')}, webhooks {hooks}; "
        f"not applied or not published: {lost}",
    )


@ck(
    "res.approval_restart",
    "resilience",
    "slow recovery: the interrupted approval finishes late",
    root="pay.recovers",
)
def res_approval_restart(ev: Any) -> Outcome:
    d = ev.draft_states.get("b")
    return holds(
        isinstance(d, dict) and d.get("state") == "executed", f"draft B after restart: {d}"[:160]
    )
