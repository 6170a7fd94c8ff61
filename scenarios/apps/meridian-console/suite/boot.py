"""Checks of tier A: the services boot, answer /health and /api/status, keep their state
in SQLite, and the README documents them."""

from __future__ import annotations

import json
from typing import Any

from harness.appkit.grading import holds
from harness.scoring import Outcome, absent, graded

from .grader import ck

README_NEEDS = (
    "python3 -m ledgerd",
    "python3 -m notifierd",
    "--port",
    "--db-dir",
    "--vendor",
    "--tokens-file",
    "--notifier",
    "--ledger",
    "/api/payments",
    "/api/summary",
    "/api/drafts",
    "/api/events",
    "/api/notifications",
    "/webhooks/vendor",
)


# -- A: boot and deliverables -----------------------------------------------------------


@ck(
    "app.boots",
    None,
    "dead service: ledgerd never answers, nothing is synced, shown or paid",
    ("M-BOOT-1",),
    critical=True,
    severity="dead",
    root=None,
)
def app_boots(ev: Any) -> Outcome:
    return graded(1.0, ev.health_detail) if ev.healthy else absent(ev.health_detail)


@ck(
    "app.confinement",
    "diagnostic",
    "untrusted evidence: an unconfined app could fake its score",
    root=None,
)
def app_confinement(ev: Any) -> Outcome:
    return graded(0.0 if ev.confinement.startswith("none") else 1.0, ev.confinement)


@ck(
    "run.timing",
    "diagnostic",
    "slow grading: scoring time beyond the apps' own run time",
    root=None,
)
def run_timing(ev: Any) -> Outcome:
    return graded(1.0, json.dumps(ev.timings))


@ck("boot.health", "boot", 'unmonitorable: /health does not answer {"status": "ok"}', ("M-BOOT-1",))
def boot_health(ev: Any) -> Outcome:
    got = ev.first_health
    ok = got is not None and got.status == 200 and got.json() == {"status": "ok"}
    return holds(ok, f"GET /health: {got.status if got else None} {got.text[:60] if got else ''}")


@ck(
    "boot.notifier",
    "boot",
    "no notifications service: notifierd never became healthy",
    ("M-BOOT-2",),
    root=None,
)
def boot_notifier(ev: Any) -> Outcome:
    got = ev.notifier_health
    ok = (
        ev.notifier_healthy
        and got is not None
        and got.status == 200
        and got.json() == {"status": "ok"}
    )
    return holds(ok, ev.notifier_detail)


@ck("boot.sqlite", "boot", "state outside SQLite: durability cannot be relied on", ("M-BOOT-3",))
def boot_sqlite(ev: Any) -> Outcome:
    both = {f.split("/")[0] for f in ev.sqlite_files}
    return holds(
        both >= {"ledger", "notifier"} and not ev.other_files,
        f"SQLite files: {ev.sqlite_files[:4]}; other files: {ev.other_files[:4]}",
    )


@ck("boot.status", "boot", "blind operators: /api/status lacks its fields", ("M-API-1",))
def boot_status(ev: Any) -> Outcome:
    st = ev.status
    if not isinstance(st, dict):
        return absent("GET /api/status gave no JSON object")
    keys = ("sync", "pages_done", "payments", "vendor", "last_error")
    have = [k for k in keys if k in st]
    return holds(len(have) == len(keys), f"fields present: {have}")


@ck(
    "docs.readme",
    "boot",
    "unrunnable: the README does not say how to start the services",
    ("M-DOC-1",),
    root=None,
)
def docs_readme(ev: Any) -> Outcome:
    text = ev.readme
    missing = [n for n in README_NEEDS if n not in text]
    sections = "## Running" in text and "## API" in text
    return holds(sections and not missing, f"missing: {missing}; sections: {sections}")


@ck("boot.time", "boot", "slow start: ledgerd takes long to become healthy")
def boot_time(ev: Any) -> Outcome:
    t = ev.boot_s
    if t is None:
        return absent("no boot time")
    return graded(1.0 if t <= 4.0 else max(0.0, 1 - (t - 4.0) / 6.0), f"healthy after {t} s")
