"""Checks of durability: a SIGKILL anywhere, a restart, a completed sync, state only in --data."""

from harness.appkit.grading import (
    strict,
)
from harness.scoring import Outcome, absent, graded

from .evidence import Evidence, why
from .grader import suite


@suite.check(
    "sync.resumes",
    tier="resilience",
    root="app.health",
    musts=("M-DUR-1",),
    harm="wasteful restart: a crash makes the service fetch everything again",
)
def sync_resumes(ev: Evidence) -> Outcome:
    kill = ev.dataset.faults.kill_page
    if not ev.killed_mid_sync:
        return graded(0.0, f"the sync never reached page {kill}, where it is killed")
    if ev.respawn_error:
        return graded(0.0, f"no restart after SIGKILL: {ev.respawn_error}")
    start = ev.resume_from or (kill,)
    after = [r for r in ev.requests("after-respawn") if r["status"] == 200]
    if not any(r.get("page") in start for r in after):
        shown = " or ".join(str(p) for p in start)
        return graded(0.0, f"after the restart page {shown} was never fetched")
    stored = min(start)
    again = {r["page"] for r in after if r.get("page") is not None and r["page"] < stored}
    return strict(
        stored - len(again),
        stored,
        f"pages stored before SIGKILL not fetched again ({sorted(again)})",
    )


@suite.check(
    "sync.not_repeated",
    tier="resilience",
    root="app.health",
    musts=("M-DUR-3",),
    harm="endless re-sync: a completed sync starts over after every restart",
)
def sync_not_repeated(ev: Evidence) -> Outcome:
    if not (isinstance(ev.status, dict) and ev.status.get("state") == "done"):
        return graded(1.0, "the sync never completed: asking again after a restart is resuming")
    if ev.restore_error:
        return graded(0.0, f"no restart after the completed sync: {ev.restore_error}")
    asked = ev.requests("offline") + ev.requests("startup-kill")  # every life after it
    return graded(0.0 if asked else 1.0, f"{len(asked)} upstream requests after a completed sync")


@suite.check(
    "sync.write_kill",
    tier="resilience",
    root="app.health",
    musts=("M-DUR-1",),
    harm="torn page: a SIGKILL between a page's writes loses it or makes it asked again",
)
def sync_write_kill(ev: Evidence) -> Outcome:
    page = ev.write_kill_page
    if not ev.write_killed:
        return graded(0.0, f"the app was not killed at a write: {ev.write_kill_detail}")
    kept = set(ev.ids(ev.survived_write_kill))
    if ev.invoices(ev.survived_write_kill) is None:
        return graded(
            0.0, f"nothing served after the write kill ({why(ev, ev.survived_write_kill)})"
        )
    stored = [p for p, invs in enumerate(ev.dataset.pages) if invs and {i.id for i in invs} <= kept]
    again = sorted(
        {
            r["page"]
            for r in ev.requests("after-write-kill")
            if r.get("page") in stored and r["status"] == 200
        }
    )
    lost = [p for p in range(page) if not {i.id for i in ev.dataset.pages[p]} <= kept]
    detail = (
        f"SIGKILL after page {page}'s answer, {ev.write_kill_detail}: pages stored "
        f"{stored}, asked again {again}, stored before it but missing {lost}"
    )
    return graded(0.0 if again or lost else 1.0, detail)


@suite.check(
    "storage.sqlite",
    tier="core",
    root="app.health",
    musts=("M-DATA-1",),
    harm="state outside SQLite: durability and resumption cannot be relied on",
)
def storage_sqlite(ev: Evidence) -> Outcome:
    # every file in --data is an SQLite database or one of its own companions (journal,
    # WAL, shared memory): a cursor or status in a file beside the database is state
    # outside SQLite, however the database itself looks
    bases = set(ev.sqlite_files)
    companions = ("-journal", "-wal", "-shm")
    other = [
        f
        for f in ev.data_files
        if f not in bases and not any(f.endswith(s) and f[: -len(s)] in bases for s in companions)
    ]
    detail = f"SQLite files in --data: {ev.sqlite_files[:3]}; other files: {other[:3]}"
    # --data replaced by an empty folder: state kept anywhere else shows
    fresh = ev.fresh_dir_status
    elsewhere = isinstance(fresh, dict) and fresh.get("state") == "done"
    if ev.fresh_dir_error:
        detail += f"; {ev.fresh_dir_error} (not charged)"
    else:
        detail += f"; with --data emptied: {fresh}"
    return graded(1.0 if ev.sqlite_files and not other and not elsewhere else 0.0, detail)


@suite.check(
    "durability.after_kill",
    critical=True,
    severity="data",
    root="app.health",
    musts=("M-DUR-2",),
    harm="lost data: invoices stored before a SIGKILL are gone after the restart",
)
def durability_after_kill(ev: Evidence) -> Outcome:
    before = set(ev.ids(ev.listing))
    if not before:
        return absent("nothing was stored to survive the SIGKILL")
    if ev.restore_error:
        return graded(0.0, f"no restart after SIGKILL: {ev.restore_error}")
    if ev.write_killed and ev.invoices(ev.survived_write_kill) is None:
        # every restart with the upstream down, not only the last: the one after the
        # write kill comes mid-sync, where an app that holds its store while it waits
        # on the upstream serves nothing
        got = why(ev, ev.survived_write_kill)
        return graded(0.0, f"nothing served at the restart after the write kill ({got})")
    after = set(ev.ids(ev.restored))
    return strict(
        len(before & after),
        len(before),
        "invoices served after SIGKILL with the upstream offline (and something served "
        "at the restart after the write kill, mid-sync, the upstream down)",
    )


@suite.check(
    "durability.startup_kill",
    tier="resilience",
    root="app.health",
    musts=("M-DUR-2",),
    harm="lost data: a SIGKILL while the service starts (a migration, a rewrite) loses "
    "or reorders what it had stored",
)
def durability_startup_kill(ev: Evidence) -> Outcome:
    before = ev.ids(ev.restored)
    if not before:
        return absent("nothing was stored before the start-up kills")
    if ev.startup_kill_error:
        return graded(0.0, ev.startup_kill_error)
    bad = []
    for where, fetched in ev.startup_kills:
        after = ev.ids(fetched)
        lost = len(set(before) - set(after))
        kept = [i for i in after if i in set(before)]
        reordered = kept != [i for i in before if i in set(after)]
        if lost or reordered:
            what = [f"{lost} of {len(before)} lost"] if lost else []
            what += ["the order changed"] if reordered else []
            bad.append(f"after the kill at {where}: {', '.join(what)}")
    return graded(
        0.0 if bad else 1.0,
        f"{len(ev.startup_kills)} SIGKILLs right after start-up writes ({ev.startup_kill_detail})"
        + (f"; {bad[0]}" if bad else f"; every restart served all {len(before)} in order"),
    )


@suite.check(
    "durability.startup_done",
    tier="resilience",
    root="app.health",
    musts=("M-DUR-3",),
    harm="a completed sync forgotten: a SIGKILL while the service starts leaves it "
    "believing the sync unfinished, so it would be repeated",
)
def durability_startup_done(ev: Evidence) -> Outcome:
    """After every start-up kill's restart, /api/status still reads "done": a start that
    clears the mark and sets it again (a re-verification, a migration) must not leave it
    cleared when killed in between. Read once per restart, not sampled."""
    if not ev.ids(ev.restored):
        return absent("nothing was stored before the start-up kills")
    if ev.startup_kill_error:
        return graded(0.0, ev.startup_kill_error)
    bad = [
        f"after the kill at {where}: {state!r}"
        for (where, _), state in zip(ev.startup_kills, ev.startup_kill_states, strict=False)
        if not (isinstance(state, dict) and state.get("state") == "done")
    ]
    if len(ev.startup_kill_states) < len(ev.startup_kills):
        bad.append("a restart's /api/status was not read")
    return graded(
        0.0 if bad else 1.0,
        f"{len(ev.startup_kills)} restarts after start-up kills"
        + (f"; not done: {bad[0]}" if bad else ': each read "done"'),
    )
