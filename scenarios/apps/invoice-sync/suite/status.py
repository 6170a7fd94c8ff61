"""Checks of the service itself: it starts, answers /health while it syncs, reports its status."""

from harness.appkit.grading import strict
from harness.scoring import Outcome, absent, graded

from .evidence import STATES, Evidence, WatchLog, life_of
from .grader import suite
from .listeners import loopback_only
from .watches import STATUS_EVERY_S

AFTER_DONE = ("offline", "startup-kill")  # the lives after the completed sync


@suite.check(
    "app.health",
    critical=True,
    severity="dead",
    musts=("M-RUN-1", "M-HEALTH-1"),
    harm="dead flow: the service never starts, so nothing is synced or shown",
)
def app_health(ev: Evidence) -> Outcome:
    return graded(1.0, ev.health_detail) if ev.healthy else absent(ev.health_detail)


@suite.check(
    "run.loopback",
    tier="core",
    root="app.health",
    musts=("M-RUN-1",),
    harm="exposed service: it listens where other machines reach it, not on 127.0.0.1",
)
def run_loopback(ev: Evidence) -> Outcome:
    if not ev.listeners:
        return absent("no start of the app was seen listening")
    wide = [addrs for addrs in ev.listeners if not loopback_only(addrs)]
    seen = sorted({a for addrs in ev.listeners for a in addrs})
    return graded(
        0.0 if wide else 1.0,
        f"{len(ev.listeners)} starts; the port's listening sockets (kernel's view) on {seen}"
        + (f"; not loopback only: {wide[0]}" if wide else ""),
    )


@suite.check(
    "app.confinement",
    tier="diagnostic",
    harm="untrusted evidence: an app that could reach the suite or trace could fake its score",
)
def app_confinement(ev: Evidence) -> Outcome:
    return graded(1.0 if not ev.confinement.startswith("none") else 0.0, ev.confinement)


@suite.check(
    "run.timing",
    tier="diagnostic",
    harm="slow grading: scoring time that is not the app's own run time is overhead",
)
def run_timing(ev: Evidence) -> Outcome:
    t = ev.timings
    return graded(
        1.0,
        f"execution {t.get('execution_s')} s, of which the app ran {t.get('app_run_s')} s "
        f"(browser probe {t.get('browser_s')} s)",
    )


@suite.check(
    "health.during_sync",
    tier="core",
    root="app.health",
    musts=("M-HEALTH-2",),
    harm="blind operations: health checks time out while a sync waits on the upstream",
)
def health_during_sync(ev: Evidence) -> Outcome:
    if not ev.killed_mid_sync:
        return absent("the sync never reached the held page, so /health was not asked then")
    log = ev.health_watch or WatchLog()
    seen = f"watch during the hold: {log.answered} answered, {len(log.stalls)} unanswered"
    if log.stalls:
        return graded(0.0, f"{seen}: {log.stalls[0]}")
    got = ev.health_during_sync
    if got is None:  # the hold ended before the boot poll's answer: only the watch asked
        return graded(1.0 if log.answered else 0.0, f"{seen}, {log.refused} refused")
    ok = got.status == 200 and got.json() == {"status": "ok"}
    return graded(1.0 if ok else 0.0, f"GET /health mid-sync: {got.status}; {seen}")


@suite.check(
    "health.throughout",
    tier="core",
    root="app.health",
    musts=("M-HEALTH-1",),
    harm="false alarms: /health answers something else than 200 ok at some moment, and "
    "monitoring pulls a working service out",
)
def health_throughout(ev: Evidence) -> Outcome:
    got = ev.health_samples
    if not got:
        return absent("GET /health never answered the watch")
    bad = [s for s in got if s.status != 200 or s.body != {"status": "ok"}]
    seen = f'GET /health every {STATUS_EVERY_S} s over every life: 200 {{"status": "ok"}}'
    if bad:
        one = bad[0]
        seen += f"; first other at {one.t_ms / 1000:.1f} s ({one.phase}): HTTP {one.status} "
        seen += str(one.body)[:80]
    return strict(len(got) - len(bad), len(got), seen)


@suite.check(
    "health.before_sync",
    tier="core",
    root="app.health",
    musts=("M-HEALTH-2",),
    harm="blind start-up: /health is not answered until the upstream answers a first page",
)
def health_before_sync(ev: Evidence) -> Outcome:
    gates = [r for r in ev.trace if r.get("mark") == "gate"]
    if not gates:
        return absent("no start asked the upstream for a page")
    late = [r for r in gates if not r["served"]]
    return strict(
        len(gates) - len(late),
        len(gates),
        "starts whose first page ask, held, saw /health answered first"
        + (f"; {late[0]['phase']}: unanswered for {late[0]['waited_s']} s" if late else ""),
    )


@suite.check(
    "status.done",
    tier="core",
    root="app.health",
    musts=("M-STATUS-1",),
    harm="stuck status: operators are never told the sync finished (or how far it got)",
)
def status_done(ev: Evidence) -> Outcome:
    st = ev.status
    if not isinstance(st, dict):
        return absent("GET /api/status gave no JSON object")
    stored = len(set(ev.ids(ev.listing)))
    complete = stored == len(ev.dataset.invoices)
    if st.get("state") == "done" and complete and st.get("count") == len(ev.ids(ev.listing)):
        return graded(1.0, f"state done, count {st.get('count')}")
    return graded(0.0, f"status {st} with {stored} of {len(ev.dataset.invoices)} stored")


def _sample_misses(ev: Evidence) -> tuple[int, list[str]]:
    """Judge every status sample against what the SPEC allows at its moment."""
    total = len(ev.dataset.invoices)
    last = len(ev.dataset.pages) - 1
    answered = [r["t_ms"] for r in ev.requests() if r.get("page") == last and r["status"] == 200]
    last_at = min(answered) if answered else None
    bad: list[str] = []
    done_in: set[str] = set()
    high, fresh = 0, False
    for s in ev.samples:
        at = f"{s.t_ms / 1000:.1f} s ({s.phase})"
        body = s.body if isinstance(s.body, dict) else {}
        state, count = body.get("state"), body.get("count")
        life = life_of(s.phase)
        if s.status != 200 or state not in STATES or type(count) is not int:
            bad.append(f"{at}: HTTP {s.status} {str(s.body)[:80]}")
            continue
        if s.phase == "fresh-dir" and life not in done_in and not fresh:
            fresh, high = True, 0  # --data emptied on purpose: nothing is stored now
        if count < high:
            bad.append(f"{at}: count {count} after {high} (stored invoices cannot shrink)")
        high = max(high, count)
        if count > total:
            bad.append(f"{at}: count {count} > {total} invoices upstream")
        answered_at = s.t_ms + 1000.0 * s.rtt_s  # a slow answer may read a later state
        if state == "done" and (last_at is None or answered_at < last_at or count != total):
            bad.append(f"{at}: done with count {count} before the last page was stored")
        if state == "syncing" and (life in done_in or s.phase in AFTER_DONE):
            bad.append(f"{at}: syncing after the sync was complete")
        if state == "done":
            done_in.add(life)
    return len(ev.samples), bad


@suite.check(
    "status.throughout",
    tier="core",
    root="app.health",
    musts=("M-STATUS-1",),
    harm="misleading status: mid-sync, after a restart or after completion the status "
    "says what the SPEC does not allow then",
)
def status_throughout(ev: Evidence) -> Outcome:
    n, bad = _sample_misses(ev)
    after = ev.status_after_restart
    completed = isinstance(ev.status, dict) and ev.status.get("state") == "done"
    if (
        completed
        and not ev.restore_error
        and not (isinstance(after, dict) and after.get("state") == "done")
    ):
        bad.append(f"after the restart of a completed sync: {after}")
    if not n:
        return absent("GET /api/status never answered during the run")
    return graded(
        0.0 if bad else 1.0,
        f"{n} samples of /api/status every {STATUS_EVERY_S} s over the run: "
        f"{len(bad)} not allowed then{'; ' + ' | '.join(bad[:3]) if bad else ''}",
    )
