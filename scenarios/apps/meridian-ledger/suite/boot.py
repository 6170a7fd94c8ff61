"""Checks of boot and deliverables: the app answers, confinement, the run's timing,
/health, SQLite under --db-dir and /api/status."""

from __future__ import annotations

from harness.scoring import Outcome, absent, fraction, graded

from .evidence import Evidence
from .grader import suite


@suite.check(
    "app.boots",
    critical=True,
    severity="dead",
    harm="dead service: it never answers, so nothing is synced, shown or paid",
)
def app_boots(ev: Evidence) -> Outcome:
    return graded(1.0, ev.health_detail) if ev.healthy else absent(ev.health_detail)


@suite.check(
    "app.confinement",
    tier="diagnostic",
    harm="untrusted evidence: an unconfined app could fake its score",
)
def app_confinement(ev: Evidence) -> Outcome:
    return graded(0.0 if ev.confinement.startswith("none") else 1.0, ev.confinement)


@suite.check(
    "run.timing",
    tier="diagnostic",
    harm="slow grading: scoring time beyond the app's own run time is overhead",
)
def run_timing(ev: Evidence) -> Outcome:
    t = ev.timings
    return graded(
        1.0,
        f"execution {t.get('execution_s')} s, of which the app ran {t.get('app_run_s')} s "
        f"(boot {t.get('boot_s')} s, sync {t.get('sync_s')} s, browser {t.get('browser_s')} s)",
    )


@suite.check(
    "boot.health",
    musts=("M-RUN-1",),
    tier="boot",
    root="app.boots",
    harm='unmonitorable: /health does not answer {"status": "ok"}',
)
def boot_health(ev: Evidence) -> Outcome:
    got = ev.first_health
    ok = got is not None and got.status == 200 and got.json() == {"status": "ok"}
    again = " (asked again after the respawn: the first ask fell in the page hold)"
    return graded(
        1.0 if ok else 0.0,
        f"GET /health: {got.status if got else None} {got.text[:60] if got else ''}"
        + (again if ev.first_health_after_hold else ""),
    )


@suite.check(
    "boot.sqlite",
    musts=("M-DATA-1",),
    tier="boot",
    root="app.boots",
    harm="state outside SQLite under --db-dir: durability cannot be relied on",
)
def boot_sqlite(ev: Evidence) -> Outcome:
    return graded(
        1.0 if ev.sqlite_files else 0.0, f"SQLite files under --db-dir: {ev.sqlite_files[:3]}"
    )


@suite.check(
    "boot.status",
    musts=("M-STATUS-1",),
    tier="boot",
    root="app.boots",
    harm="blind operators: /api/status does not report the sync",
)
def boot_status(ev: Evidence) -> Outcome:
    st = ev.status
    if not isinstance(st, dict):
        return absent("GET /api/status gave no JSON object")
    keys = ("sync", "pages_done", "payments", "vendor")
    have = [k for k in keys if k in st]
    return fraction(len(have), len(keys), f"status fields present: {have}")
