"""Scorer of apps/meridian-console: execute ledgerd + notifierd against the seeded vendor.

``context()`` runs the scenario once (``script.run``: four SIGKILLs, two partitions, the
vendor's outage, six browser journeys) and collects evidence; the checks only read it.
Every SPEC MUST id is verified by at least one check (``musts=``): success means every
MUST met and no critical fired; the graded score (ten tiers plus excellence) ranks.
See the scenario's README for the table of ids, checks and defects.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.scoring import Outcome, Suite, absent, graded
from harness.appkit.grading import (
    TIMER_SLACK_S,
    colour_close,
    first_pause_ok,
    gaps,
    growth_failures,
    holds,
)
from harness.appkit.jail import Jail
from harness.appkit.procs import AppProcess
from harness.scoring.era import load_thresholds

HERE = Path(__file__).resolve().parent


def _load(stem: str) -> Any:
    name = f"meridian_console_{stem}_{abs(hash(str(HERE)))}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE / f"{stem}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


V = _load("vendor")
R = _load("relay")
D = _load("drive")
B = _load("browse")
S = _load("script")
S.bind(B, D, V)

TIERS = {
    "boot": 0.04,  # A
    "wire": 0.09,  # B
    "sync": 0.09,  # C
    "validation": 0.06,  # D
    "journeys": 0.12,  # J
    "rendered": 0.06,  # V
    "performance": 0.08,  # P
    "transactions": 0.14,  # T
    "consistency": 0.16,  # X
    "resilience": 0.16,  # R
}
EXCELLENCE = 0.12
assert abs(sum(TIERS.values()) - 1.0) < 1e-9
assert TIERS["transactions"] + TIERS["consistency"] + TIERS["resilience"] >= 0.46
assert EXCELLENCE >= 0.10
GATES = (  # the named perfection conditions that unlock the excellence slice
    "boot >= 1",
    "wire >= 1",
    "sync >= 1",
    "validation >= 1",
    "journeys >= 1",
    "rendered >= 1",
    "transactions >= 1",
    "consistency >= 1",
    "resilience >= 1",
    "perf.requests >= 1",
    "perf.latency >= 1",
    "perf.first_paint >= 1",
    "field.pixels >= 1",
    "field.pick >= 1",
    "note.partition_catchup >= 1",
    "fe.budget >= 1",
)
SQLITE_SIDECARS = ("-journal", "-wal", "-shm")  # files SQLite itself keeps beside a database
STATUS_RGB = {
    "pending": (0xF0, 0xB4, 0x29),
    "settled": (0x2F, 0x9E, 0x44),
    "failed": (0xE0, 0x31, 0x31),
    "refunded": (0x1C, 0x7E, 0xD6),
}
PLANE_RGB = (0x0B, 0x1E, 0x2D)
COLOUR_TOL = 12
SLACK_S = TIMER_SLACK_S
FE_BUDGET = 150_000
FE_FILES = {"/", "/app.js", "/field.js", "/style.css"}
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
#: root -> the checks a failed root blocks (they are excused, not charged twice)
ROOT_BLOCKS: dict[str, str] = {}

suite = Suite(
    name="meridian-console",
    version="1.0.0",
    tier_weights=TIERS,
    excellence_weight=EXCELLENCE,
    gates=GATES,
    critical_floor=0.6,
    class_floors={"dead": 0.0},
    thresholds=HERE / "thresholds.yml",
    # the scorer container stages suite/ only: a byte-identical copy travels with it
    spec=HERE.parent / "SPEC.md" if (HERE.parent / "SPEC.md").is_file() else HERE / "SPEC.md",
    sources=[HERE / f"{s}.py" for s in ("vendor", "relay", "drive", "browse", "script")],
)


def ck(
    name: str,
    tier: str | None,
    harm: str,
    musts: tuple[str, ...] = (),
    *,
    critical: bool = False,
    severity: str | None = None,
    root: str | None = "app.boots",
) -> Any:
    if root:
        ROOT_BLOCKS[name] = root
    return suite.check(
        name, tier=tier, harm=harm, musts=musts, critical=critical, severity=severity, root=root
    )


@contextlib.contextmanager
def context(tree: Path, seed: str, evidence_dir: Path) -> Iterator[Any]:
    """Execute both services in ``tree`` once against the vendor seeded by ``seed``."""
    evidence_dir = Path(evidence_dir)
    evidence_dir.mkdir(parents=True, exist_ok=True)
    found = load_thresholds(HERE / "thresholds.yml")
    budgets = {
        n: found.budget(n, d)
        for n, d in (("start", 10.0), ("sync", 40.0), ("approval", 10.0), ("down", 6.0))
    }
    started = time.monotonic()
    readme = Path(tree) / "README.md"
    jail = Jail(Path(tree))
    try:
        with V.Vendor(seed, evidence_dir / "trace.jsonl") as vendor:
            ledger_box: list[AppProcess] = []
            notifier_box: list[AppProcess] = []

            def target(box: list[AppProcess]) -> Any:
                return lambda: box[0].url() if box and box[0].port else None

            with (
                R.Relay(
                    "notifier->ledger", target(ledger_box), evidence_dir / "relay-n2l.jsonl"
                ) as n2l,
                R.Relay(
                    "ledger->notifier", target(notifier_box), evidence_dir / "relay-l2n.jsonl"
                ) as l2n,
            ):
                tokens = jail.home / "tokens.json"
                tokens.write_text(json.dumps(vendor.dataset.tokens), encoding="utf-8")
                tokens.chmod(0o644)
                ev = D.Evidence(dataset=vendor.dataset, evidence_dir=evidence_dir)
                ev.readme = readme.read_text(errors="replace") if readme.is_file() else ""
                ev.confinement = f"{jail.mode}: {jail.statement()}"
                notifier = AppProcess(
                    [
                        jail.python,
                        "-m",
                        "notifierd",
                        "--port",
                        "{port}",
                        "--db-dir",
                        "{data}/notifier",
                        "--ledger",
                        n2l.url,
                    ],
                    cwd=Path(tree),
                    logs=evidence_dir / "logs",
                    budget=budgets["start"],
                    name="notifierd",
                    jail=jail,
                )
                ledger = AppProcess(
                    [
                        jail.python,
                        "-m",
                        "ledgerd",
                        "--port",
                        "{port}",
                        "--db-dir",
                        "{data}/ledger",
                        "--vendor",
                        vendor.url,
                        "--tokens-file",
                        str(tokens),
                        "--notifier",
                        l2n.url,
                    ],
                    cwd=Path(tree),
                    logs=evidence_dir / "logs",
                    budget=budgets["start"],
                    name="ledgerd",
                    jail=jail,
                )
                ledger_box.append(ledger)
                notifier_box.append(notifier)
                with notifier, ledger:
                    vendor.app_url = lambda: ledger.url() if ledger.port else None
                    app_start = time.monotonic()
                    S.run(ev, vendor, n2l, l2n, ledger, notifier, budgets)
                ev.timings["app_run_s"] = round(time.monotonic() - app_start, 2)
                ev.relay_trace = n2l.records()
            ev.trace = vendor.records()
            ev.creations = list(vendor.creations)
        for sub in ("ledger", "notifier"):
            db = jail.data / sub
            files = sorted(p for p in db.rglob("*") if p.is_file()) if db.is_dir() else []
            sqlite = {p for p in files if p.read_bytes()[:16] == b"SQLite format 3\x00"}
            ev.sqlite_files += [p.relative_to(jail.data).as_posix() for p in sorted(sqlite)]
            # SQLite's own sidecars (rollback journal, WAL and its index) beside a database
            sidecar = {p.with_name(p.name + s) for p in sqlite for s in SQLITE_SIDECARS}
            ev.other_files += [
                p.relative_to(jail.data).as_posix()
                for p in files
                if p not in sqlite and p not in sidecar
            ]
    finally:
        jail.close()
    ev.timings["execution_s"] = round(time.monotonic() - started, 2)
    yield ev


# -- helpers ------------------------------------------------------------------------------


def ids(items: list[dict[str, Any]] | None) -> list[str]:
    return [str(i.get("id")) for i in items or []]


def truth_order(ev: Any) -> list[str]:
    return [p.id for p in ev.dataset.api_order()]


def need_listing(ev: Any) -> Outcome | None:
    if ev.respawn_error:
        return absent(f"no restart after the first SIGKILL: {ev.respawn_error}")
    if not ev.listing:
        return absent("GET /api/payments gave no {items: [...]} listing")
    return None


def page_requests(ev: Any, page: int) -> list[dict[str, Any]]:
    return [r for r in ev.walk() if r.get("page") == page]


def pauses(asks: list[dict[str, Any]]) -> list[float]:
    """Seconds between the asks of one page, up to its first answer."""
    return gaps(asks, ok_status=(200, 304))


def main(ev: Any) -> dict[str, Any]:
    return dict(ev.browser.get("main") or {})


def no_browser(ev: Any, what: str) -> Outcome:
    if ev.probe_error:
        from harness.scoring import unavailable

        return unavailable(f"browser: {ev.probe_error}")
    return absent(f"no {what}: the run stopped before it")


def rows_of(look: dict[str, Any] | None) -> list[dict[str, Any]]:
    return list((look or {}).get("rows") or [])


def close(px: Any, rgb: tuple[int, int, int]) -> bool:
    return colour_close(px, rgb, COLOUR_TOL)


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


# -- B: wire (from the vendor's trace) ----------------------------------------------------


@ck("wire.auth", "wire", "rejected calls: vendor requests without the API key", ("M-SYNC-1",))
def wire_auth(ev: Any) -> Outcome:
    reqs = [
        r
        for r in ev.trace
        if r.get("kind") in ("page", "create")
        and not r.get("outage")
        and r["phase"] not in ("offline", "vendor-down")
    ]
    if not reqs:
        return absent("the vendor was never called")
    bad = [r for r in reqs if not r.get("auth")]
    return holds(not bad, f"{len(reqs) - len(bad)}/{len(reqs)} requests carried the key")


@ck("wire.sequential", "wire", "rate-limited vendor: pages fetched concurrently", ("M-SYNC-2",))
def wire_sequential(ev: Any) -> Outcome:
    reqs = ev.pages("initial-sync", "after-respawn", "resync")
    if not reqs:
        return absent("no page requests")
    over = [r for r in reqs if r.get("inflight", 1) > 1]
    return holds(not over, f"{len(over)} of {len(reqs)} page requests overlapped another")


@ck(
    "wire.cursor_order",
    "wire",
    "corrupt walk: pages asked out of the cursor chain's order",
    ("M-SYNC-2",),
)
def wire_cursor_order(ev: Any) -> Outcome:
    reqs = ev.walk()
    if not reqs:
        return absent("no page requests")

    def out_of_order(rs: list[dict[str, Any]]) -> int:
        pages = [r.get("page") for r in rs]
        return sum(
            1
            for a, b in zip(pages, pages[1:], strict=False)
            if b is None or a is None or b not in (a, a + 1)
        )

    bad = out_of_order(reqs)
    # the respawn resumes at the stored cursor: one step back to the held page is allowed
    respawn = [r for r in reqs if r["phase"] == "after-respawn"]
    allowed = 1 if respawn else 0
    # the second walk (POST /api/sync) follows the cursors too, from the first page
    again = ev.pages("resync")
    bad_again = out_of_order(again) + (1 if again and again[0].get("page") != 0 else 0)
    return holds(
        bad <= allowed and bad_again == 0,
        f"{bad} out-of-order steps (allowed {allowed}); second walk: {bad_again}",
    )


@ck("wire.dropped", "wire", "hammered vendor: a dropped connection retried at once", ("M-SYNC-3",))
def wire_dropped(ev: Any) -> Outcome:
    asks = page_requests(ev, ev.dataset.faults.drop_page)
    p = pauses(asks)
    if not p:
        return absent("the dropped page was never retried")
    return holds(first_pause_ok(p, 0.2), f"retry after {p[0]:.3f} s (SPEC >= 0.2 s)")


@ck("wire.backoff_first", "wire", "hammered vendor: a 5xx retried sooner than 0.2 s", ("M-SYNC-3",))
def wire_backoff_first(ev: Any) -> Outcome:
    p = pauses(page_requests(ev, ev.dataset.faults.error_page))
    if not p:
        return absent("the failing page was never retried")
    return holds(first_pause_ok(p, 0.2), f"first retry after {p[0]:.3f} s (SPEC >= 0.2 s)")


def schedule_failures(p: list[float], first: bool = True) -> list[str]:
    """How the pauses ``p`` miss SPEC 3.2's schedule: 0.2 s first (``first``), then each at
    least twice the previous measured pause less the latency it may carry, capped at 2 s
    (``appkit.grading``); growth starts from what the first pause was."""
    early = [] if not first or first_pause_ok(p, 0.2) else [f"first pause {p[0]:.3f} s < 0.2 s"]
    return early + growth_failures(p, 2.0, min(p[0], 0.2), 2.0)


@ck("wire.backoff_growth", "wire", "hammered vendor: the pause does not double", ("M-SYNC-4",))
def wire_backoff_growth(ev: Any) -> Outcome:
    asks = page_requests(ev, ev.dataset.faults.error_page)
    p = pauses(asks)
    if len(p) < V.ERRORS_IN_A_ROW:
        return absent(f"{len(p)} retries of the 3x503 page")
    # each pause: the SPEC's schedule (0.2, 0.4, 0.8 s: latency only adds) and at least
    # twice the previous measured pause, less the latency it may carry (appkit.grading;
    # the first pause's own bound is M-SYNC-3's: growth starts from what it was)
    bad = schedule_failures(p, first=False)
    return holds(
        not bad, f"pauses {[round(x, 3) for x in p]} (each 2x the previous, cap 2 s): {bad}"
    )


@ck(
    "wire.outage_cap", "wire", "idle sync: after an outage the client waits too long", ("M-SYNC-5",)
)
def wire_outage_cap(ev: Any) -> Outcome:
    page = ev.dataset.faults.outage_page
    asks = page_requests(ev, page)
    resets = [r for r in asks if r.get("outage")]
    okay = [r for r in asks if r.get("status") in (200, 304)]
    if not resets or not okay:
        return absent("the outage page was not retried to success")
    end = resets[0]["t_ms"] + V.OUTAGE_S * 1000
    late = (okay[0]["t_ms"] - end) / 1000.0
    gaps = [
        b - a
        for a, b in zip([r["t_ms"] for r in asks], [r["t_ms"] for r in asks][1:], strict=False)
    ]
    worst = max(gaps) / 1000.0 if gaps else 0.0
    # SPEC: no wait above 2 s plus the attempt's own time (a reset takes milliseconds)
    return holds(
        late <= 2.5 and worst <= 2.0 + PACE_SLACK_S,
        f"asked again {late:.2f} s after the outage ended; longest pause {worst:.2f} s "
        f"(SPEC: 2 s plus the attempt)",
    )


@ck(
    "wire.create_backoff",
    "wire",
    "hammered vendor: a failing creation retried without the backoff",
    ("M-SYNC-3", "M-SYNC-4"),
)
def wire_create_backoff(ev: Any) -> Outcome:
    """A creation is a vendor request like a page (SPEC 3.2): while the vendor is down,
    the failed approval's retries wait 0.2 s first, then twice as long each time."""
    tries: dict[str, list[float]] = {}
    for r in ev.trace:
        if r.get("kind") == "create" and r.get("phase") == "vendor-down":
            tries.setdefault(str(r.get("key")), []).append(float(r["t_ms"]))
    if not tries:
        return absent("no creation was tried while the vendor was down")
    times = max(tries.values(), key=len)
    p = [(b - a) / 1000.0 for a, b in zip(times, times[1:], strict=False)]
    if not p:
        return holds(False, "the failed creation was never retried")
    bad = schedule_failures(p)
    return holds(not bad, f"pauses {[round(x, 3) for x in p]}: {bad[:3]}")


@ck(
    "wire.outage_growth",
    "wire",
    "hammered vendor: connection errors retried without a growing pause",
    ("M-SYNC-3", "M-SYNC-4"),
)
def wire_outage_growth(ev: Any) -> Outcome:
    """A connection that cannot be opened is transient like a 5xx (SPEC 3.2 rule 2): the
    outage page's retries follow the same schedule, from 0.2 s doubling to 2 s."""
    p = pauses(page_requests(ev, ev.dataset.faults.outage_page))
    if len(p) < 3:
        return absent(f"{len(p)} retries of the outage page")
    bad = schedule_failures(p)
    return holds(not bad, f"pauses {[round(x, 3) for x in p]} (0.2 s, each 2x, cap 2 s): {bad[:3]}")


@ck("wire.retry_after", "wire", "ban risk: Retry-After not honoured", ("M-SYNC-6",))
def wire_retry_after(ev: Any) -> Outcome:
    reqs = [r for r in ev.trace if r.get("kind") in ("page", "create")]
    rate = [r for r in reqs if r.get("status") == 429]
    if not rate:
        return absent("the 429 was never served")
    after = [r for r in reqs if r["seq"] > rate[0]["seq"]]
    if not after:
        return absent("nothing asked after the 429")
    gap = (after[0]["t_ms"] - rate[0]["t_ms"]) / 1000.0
    return holds(
        gap >= V.RETRY_AFTER_S - 0.05,
        f"next request {gap:.2f} s after the 429 (Retry-After {V.RETRY_AFTER_S})",
    )


@ck("wire.slow", "wire", "doubled load: a slow page re-asked before it answered", ("M-SYNC-7",))
def wire_slow(ev: Any) -> Outcome:
    asks = page_requests(ev, ev.dataset.faults.slow_page)
    if not asks:
        return absent("the slow page was never asked")
    again = [r for r in ev.pages("resync") if r.get("page") == ev.dataset.faults.slow_page]
    return holds(
        len(asks) == 1
        and asks[0].get("status") == 200
        and len(again) == 1
        and again[0].get("status") in (200, 304),
        f"{len(asks)} requests for the slow page ({V.SLOW_S} s), {len(again)} in the second "
        f"walk ({V.RESYNC_SLOW_S} s); SPEC timeout >= 7 s",
    )


@ck("wire.etag", "wire", "wasted bandwidth: the second walk is not conditional", ("M-SYNC-10",))
def wire_etag(ev: Any) -> Outcome:
    reqs = ev.pages("resync")
    if not reqs:
        return absent("no second walk reached the vendor")
    ok = [r for r in reqs if r.get("status") in (200, 304)]
    conditional = [r for r in ok if r.get("inm")]
    n304 = sum(1 for r in ok if r.get("status") == 304)
    want = V.PAGES - len(ev.dataset.faults.resync_pages)
    return holds(
        len(conditional) == len(ok) == V.PAGES and n304 == want,
        f"{len(conditional)}/{len(ok)} conditional, {n304} x 304 (want {want})",
    )


@ck(
    "wire.idempotency",
    "wire",
    "double payment risk: creations without one stable key per draft",
    ("M-PAY-3",),
)
def wire_idempotency(ev: Any) -> Outcome:
    creates = [r for r in ev.trace if r.get("kind") == "create" and r.get("key")]
    if not creates:
        return absent("no payment was created")
    keys_by_ref: dict[str, set[str]] = {}
    refs_by_key: dict[str, set[str]] = {}
    for r in creates:
        keys_by_ref.setdefault(str(r.get("reference")), set()).add(r["key"])
        refs_by_key.setdefault(r["key"], set()).add(str(r.get("reference")))
    multi = [k for k, v in keys_by_ref.items() if len(v) > 1]
    shared = [k for k, v in refs_by_key.items() if len(v) > 1]
    return holds(
        not multi and not shared,
        f"{len(keys_by_ref)} drafts; several keys for {multi}; keys shared: {len(shared)}",
    )


# -- C: sync ----------------------------------------------------------------------------


@ck(
    "sync.complete",
    None,
    "missing payments: the ledger lacks vendor payments",
    ("M-SYNC-9",),
    critical=True,
    severity="data",
)
def sync_complete(ev: Any) -> Outcome:
    if (miss := need_listing(ev)) is not None:
        return miss
    have = set(ids(ev.listing))
    want = truth_order(ev)
    got = sum(1 for i in want if i in have)
    return holds(got == len(want), f"{got}/{len(want)} vendor payments listed")


@ck("sync.no_duplicates", "sync", "double counting: a payment stored twice", ("M-SYNC-9",))
def sync_no_duplicates(ev: Any) -> Outcome:
    if (miss := need_listing(ev)) is not None:
        return miss
    dup = [k for k, n in Counter(ids(ev.listing)).items() if n > 1]
    return holds(not dup, f"{len(dup)} ids listed more than once")


@ck("sync.resumes", "sync", "wasted walk: a restart fetches stored pages again", ("M-SYNC-8",))
def sync_resumes(ev: Any) -> Outcome:
    if not ev.killed_mid_sync:
        return absent("the held page was never reached")
    kill = ev.dataset.faults.kill_page
    after = [r.get("page") for r in ev.pages("after-respawn")]
    if not after:
        return absent("no page asked after the respawn")
    early = [p for p in after if p is not None and p < kill]
    return holds(
        not early and after[0] == kill,
        f"after the respawn: first page {after[0]}, {len(early)} stored pages refetched",
    )


@ck(
    "sync.status", "sync", "blind operators: the status does not say the walk is done", ("M-API-1",)
)
def sync_status(ev: Any) -> Outcome:
    st = ev.status
    if not isinstance(st, dict):
        return absent("no status")
    n = len(set(ids(ev.listing)))
    ok = (
        st.get("sync") == "done"
        and st.get("pages_done") == V.PAGES
        and st.get("payments") == n
        and st.get("vendor") == "up"  # the walk just succeeded: nothing failed since
    )
    return holds(ok, f"status {st}")


@ck("sync.on_request", "sync", "stale data: POST /api/sync does not walk again", ("M-API-2",))
def sync_on_request(ev: Any) -> Outcome:
    got = ev.resync
    if got is None:
        return absent("no second walk asked")
    walked = {r.get("page") for r in ev.pages("resync") if r.get("status") in (200, 304)}
    ok = (
        got.status == 202
        and len(walked) == V.PAGES
        and (ev.resync_status or {}).get("sync") == "done"
    )
    return holds(ok, f"POST /api/sync: {got.status}; pages walked {len(walked)}")


@ck(
    "sync.no_concurrent",
    "sync",
    "corrupt state: a second walk started beside the first",
    ("M-API-2",),
)
def sync_no_concurrent(ev: Any) -> Outcome:
    got = ev.resync_again
    if got is None:
        return absent("no second POST")
    pages = [r.get("page") for r in ev.pages("resync") if r.get("status") in (200, 304)]
    dup = [p for p, n in Counter(pages).items() if n > 1]
    return holds(
        got.status == 409 and not dup, f"second POST: {got.status}; pages walked twice: {len(dup)}"
    )


@ck(
    "sync.resync_changes",
    "sync",
    "stale data: pages changed between walks are not stored",
    ("M-SYNC-10",),
)
def sync_resync_changes(ev: Any) -> Outcome:
    items = (ev.after_resync or {}).get("listing")
    if not items:
        return absent("no listing after the second walk")
    by = {str(i.get("id")): i for i in items}
    truth = ev.truth_at.get("resync") or {}
    changed = list(ev.dataset.resync_changes)
    good = sum(
        1
        for pid in changed
        if pid in by and (by[pid].get("status"), by[pid].get("version")) == truth.get(pid)
    )
    return holds(good == len(changed), f"{good}/{len(changed)} changed payments current")


@ck(
    "sync.outage_continues",
    "sync",
    "wasted walk: the outage restarts the walk from page 1",
    ("M-SYNC-5",),
)
def sync_outage_continues(ev: Any) -> Outcome:
    page = ev.dataset.faults.outage_page
    reqs = ev.walk()
    idx = [k for k, r in enumerate(reqs) if r.get("page") == page and r.get("outage")]
    if not idx:
        return absent("the outage never happened")
    nxt = [r.get("page") for r in reqs[idx[0] + 1 :] if not r.get("outage")]
    return holds(bool(nxt) and nxt[0] == page, f"after the outage the walk asked page {nxt[:1]}")


# -- D: validation ------------------------------------------------------------------------


@ck(
    "val.query",
    "validation",
    "silent wrong answers: invalid query parameters accepted",
    ("M-API-3",),
)
def val_query(ev: Any) -> Outcome:
    if not ev.bad_queries:
        return absent("not asked")
    bad = {q: s for q, s in ev.bad_queries.items() if s != 400}
    return holds(not bad, f"not 400: {bad}")


@ck("val.drafts", "validation", "bad payments: invalid drafts stored", ("M-PAY-1",))
def val_drafts(ev: Any) -> Outcome:
    answers = {k: c.status for k, c in ev.calls.items() if k.startswith("bad:")}
    if not answers:
        return absent("not asked")
    bad = {k: s for k, s in answers.items() if s != 400}
    stored = ev.drafts_after_bad
    empty = isinstance(stored, dict) and stored.get("items") == []
    return holds(not bad and empty, f"not 400: {bad}; nothing stored: {empty}")


@ck("val.roles", "validation", "fraud: roles of maker and checker not enforced", ("M-PAY-2",))
def val_roles(ev: Any) -> Outcome:
    want = {
        "create:no-token": 401,
        "create:unknown": 401,
        "create:checker": 403,
        "approve:no-token": 401,
        "approve:unknown": 401,
        "approve:maker": 403,
        "approve:own": 403,
        "approve:lead": 200,  # the lead may approve a draft it did not make
    }
    got = {k: (ev.calls[k].status if k in ev.calls else None) for k in want}
    bad = {k: v for k, v in got.items() if v != want[k]}
    return holds(not bad and None not in got.values(), f"wrong: {bad}")


@ck(
    "val.webhook_signature", "validation", "forged state: unsigned webhooks accepted", ("M-HOOK-1",)
)
def val_webhook_signature(ev: Any) -> Outcome:
    hooks = [r for r in ev.trace if r.get("kind") == "hook" and r.get("cls") == "forged"]
    if not hooks:
        return absent("no forged event delivered")
    answered = all(r.get("answer") == 401 for r in hooks)
    by = {str(i.get("id")): i for i in ev.listing or []}
    applied = [r for r in hooks if (by.get(r["payment"]) or {}).get("version") == r["version"]]
    # and one with no signature header at all
    unsigned = ev.calls.get("hook:unsigned")
    later = {str(i.get("id")): i for i in (ev.before_cold or {}).get("listing") or []}
    pid, version = (ev.unsigned_hook or [None, None])[:2]
    took = pid is not None and (later.get(pid) or {}).get("version") == version
    return holds(
        answered and not applied and unsigned is not None and unsigned.status == 401 and not took,
        f"answers {[r.get('answer') for r in hooks]}; applied {len(applied)}; unsigned: "
        f"{unsigned.status if unsigned else None}, applied {took}",
    )


@ck(
    "val.webhook_window",
    "validation",
    "replay attacks: events outside the window accepted",
    ("M-HOOK-2",),
)
def val_webhook_window(ev: Any) -> Outcome:
    hooks = {
        r.get("cls"): r
        for r in ev.trace
        if r.get("kind") == "hook" and r.get("cls") in ("stale", "future", "edge")
    }
    if len(hooks) < 3:
        return absent(f"window events delivered: {sorted(hooks)}")
    by = {str(i.get("id")): i for i in ev.listing or []}
    ok = all(hooks[c].get("answer") == 400 for c in ("stale", "future"))
    applied = [
        c
        for c in ("stale", "future")
        if (by.get(hooks[c]["payment"]) or {}).get("version") == hooks[c]["version"]
    ]
    edge = (
        hooks["edge"].get("answer") in (200, 202)
        and (by.get(hooks["edge"]["payment"]) or {}).get("version") == hooks["edge"]["version"]
    )
    return holds(
        ok and not applied and edge,
        f"stale/future {[hooks[c].get('answer') for c in ('stale', 'future')]}, applied {applied}; 290 s old applied: {edge}",
    )


@ck(
    "val.edit_precondition",
    "validation",
    "lost updates: edits without a current revision accepted",
    ("M-EDIT-1",),
)
def val_edit_precondition(ev: Any) -> Outcome:
    e = ev.edits
    if not e:
        return absent("no edits made")
    ok = e.get("no_if_match") == 428 and e.get("stale") == 412
    return holds(ok, f"no If-Match: {e.get('no_if_match')}; stale: {e.get('stale')}")


@ck("val.note_body", "validation", "bad notes: a non-string note or no token accepted")
def val_note_body(ev: Any) -> Outcome:
    e = ev.edits
    if not e:
        return absent("no edits made")
    return holds(
        e.get("bad_note") == 400 and e.get("no_token") == 401,
        f"note 5: {e.get('bad_note')}; no token: {e.get('no_token')}",
    )


# -- roots of the browser checks ------------------------------------------------------


def _expected_rows(ev: Any, n: int) -> list[dict[str, Any]]:
    listing = ev.listing or []
    return listing[(n - 1) * 100 : n * 100]


def _pages(ev: Any) -> dict[int, dict[str, Any]]:
    return {int(k): v for k, v in (main(ev).get("pages") or {}).items()}


@ck(
    "console.data_visible",
    None,
    "hidden payments: rows not visible to the user",
    ("M-UI-3",),
    critical=True,
    severity="view",
)
def console_data_visible(ev: Any) -> Outcome:
    pages = _pages(ev)
    if not pages:
        return no_browser(ev, "console pages")
    bad = 0
    total = 0
    for n, look in pages.items():
        rows = rows_of(look)
        want = len(_expected_rows(ev, n))
        total += want
        bad += sum(1 for r in rows if not r.get("visible") or any(r.get("clipped") or []))
        bad += max(0, want - len(rows))
    return holds(bad == 0 and total > 0, f"{bad} of {total} rows hidden, clipped or missing")


@ck(
    "field.instanced",
    None,
    "unusable field: columns not drawn as one instanced draw per payment",
    ("M-GL-1",),
    critical=True,
    severity="view",
    root="app.boots",  # the field does not depend on the table
)
def field_instanced(ev: Any) -> Outcome:
    f = main(ev).get("field")
    if not f:
        return no_browser(ev, "field")
    st = f.get("state") or {}
    last = st.get("last") or {}
    ok = st.get("contexts", 0) >= 1 and last.get("inst") == f.get("expected") and f.get("expected")
    return holds(
        bool(ok), f"contexts {st.get('kinds')}, last frame {last}, payments {f.get('expected')}"
    )


# -- J: journeys (six: load, field, sync, approval, error states, cold boot) ----------------


@ck("journey.load", "journeys", "broken console: the page does not load cleanly", ("M-UI-1",))
def journey_load(ev: Any) -> Outcome:
    m = main(ev)
    if not m:
        return no_browser(ev, "console")
    load = m.get("load") or {}
    ctype = str(load.get("ctype") or "").lower().replace(" ", "")
    errors = m.get("console_errors_all") or []
    # later in the session (the sync, the approval click): an uncaught exception is an
    # error too (a failed request's own log line is not judged there)
    errors += [
        e
        for e in m.get("console_errors_end") or []
        if e.startswith("uncaught:") and e not in errors
    ]
    ok = load.get("status") == 200 and ctype.startswith("text/html;charset=utf-8") and not errors
    return holds(ok, f"status {load.get('status')}, {ctype}, console errors {errors[:2]}")


@ck(
    "journey.sync", "journeys", "stale console: a finished walk never reaches the feed", ("M-UI-9",)
)
def journey_sync(ev: Any) -> Outcome:
    m = main(ev)
    if not m:
        return no_browser(ev, "console")
    s = m.get("sync") or {}
    if not s.get("event"):
        return absent("the second walk published no sync.completed event")
    t = s.get("feed_s")
    return holds(t is not None and t <= 5.0, f"sync.completed shown in #feed after {t} s")


@ck(
    "journey.approve_click",
    "journeys",
    "stuck payments: the approve button does not work",
    ("M-UI-6",),
)
def journey_approve_click(ev: Any) -> Outcome:
    a = main(ev).get("approve")
    if not a:
        return no_browser(ev, "approval")
    api = a.get("api") or {}
    t = a.get("executed_s")
    ok = t is not None and api.get("state") == "executed"
    return holds(
        ok, f"row executed after {t} s; API {api.get('state')}; {a.get('click_error', '')}"
    )


@ck(
    "journey.approve_feed",
    "journeys",
    "silent approvals: the execution never reaches the feed",
    ("M-UI-9",),
)
def journey_approve_feed(ev: Any) -> Outcome:
    a = main(ev).get("approve")
    if not a or "feed_s" not in a:
        return absent("no draft.executed event to look for")
    t = a.get("feed_s")
    return holds(t is not None and t <= 5.0, f"draft.executed shown after {t} s")


#: what a pace check allows above the SPEC's figure (browser timers, a loaded machine)
PACE_SLACK_S = 0.25
CHECK_EVERY_S = 5.0  # a cold-booted ledgerd tries the vendor at least this often (App. B)


@ck(
    "journey.feed_cadence",
    "journeys",
    "stale feed: the console refreshes its feed less often than every 2 s",
    ("M-UI-9",),
)
def journey_feed_cadence(ev: Any) -> Outcome:
    m = main(ev)
    if not m:
        return no_browser(ev, "console")
    asks = m.get("feed_asks")
    if asks is None:
        return absent("the main session ended before the feed requests were read")
    # gaps between the console's /api/feed requests within one page load
    gaps = [b[1] - a[1] for a, b in zip(asks, asks[1:], strict=False) if a[0] == b[0]]
    if len(gaps) < 3:
        return holds(False, f"{len(asks)} feed requests in the whole session: no steady refresh")
    mid = statistics.median(gaps)
    return holds(
        mid <= 2.0 + PACE_SLACK_S,
        f"median {mid:.2f} s between feed requests ({len(gaps)} gaps; SPEC: at least every 2 s)",
    )


@ck(
    "journey.approve_error",
    "journeys",
    "silent failure: a failed approval says nothing",
    ("M-UI-7",),
)
def journey_approve_error(ev: Any) -> Outcome:
    e = ev.browser.get("errors")
    if not e:
        return no_browser(ev, "error journey")
    shown = e.get("error") or {}
    draft = e.get("draft_f") or {}
    row = (e.get("draft_row") or [{}])[0]
    not_exec = draft.get("state") != "executed" and "executed" not in " ".join(
        row.get("cells") or []
    )
    ok = e.get("error_s") is not None and shown.get("visible") and shown.get("text") and not_exec
    # "or no answer": the request dropped before it reached ledgerd (script._approve_unanswered)
    u = e.get("unanswered") or {}
    said = u.get("error") or {}
    told = u.get("error_s") is not None and said.get("visible") and said.get("text")
    return holds(
        bool(ok and told),
        f"refused: #error {shown}; draft {draft.get('state')}; {e.get('click_error', '')}; "
        f"no answer: #error {said or None} {u.get('click_error', '')}",
    )


@ck(
    "journey.feed_error", "journeys", "silent outage: the feed's failure is not shown", ("M-UI-10",)
)
def journey_feed_error(ev: Any) -> Outcome:
    e = ev.browser.get("errors")
    if not e:
        return no_browser(ev, "error journey")
    rows = rows_of({"rows": e.get("rows_feed_down")})
    visible = len(rows) >= 100 and all(r.get("visible") for r in rows)
    ok = e.get("feed_error_s") is not None and visible
    return holds(
        ok,
        f"#feed-error after {e.get('feed_error_s')} s: {e.get('feed_error')}; rows visible {visible}",
    )


@ck("journey.cold_boot", "journeys", "empty console after a restart", ("M-DUR-2",))
def journey_cold_boot(ev: Any) -> Outcome:
    c = ev.browser.get("cold")
    if not c:
        return no_browser(ev, "cold boot journey")
    rows = c.get("rows") or []
    want = truth_order(ev)[:100]
    got = [r.get("id") for r in rows]
    visible = all(r.get("visible") for r in rows)
    banner = c.get("banner") or {}
    ok = (
        got == want
        and visible
        and banner.get("visible")
        and "unavailable" in str(banner.get("text", "")).lower()
    )
    return holds(
        bool(ok), f"{len(rows)} rows, order ok {got == want}, visible {visible}, banner {banner}"
    )


@ck(
    "field.pick",
    "journeys",
    "dead field: clicking a column does not tell which payment it is",
    ("M-GL-3",),
    root="field.instanced",
)
def field_pick(ev: Any) -> Outcome:
    f = main(ev).get("field") or {}
    picks = f.get("picks")
    if not picks:
        return no_browser(ev, "field")

    def told(p: dict[str, Any]) -> bool:
        """#pick names the clicked payment's counterparty, amount and status (SPEC 7)."""
        item, text = p.get("item") or {}, str(p.get("text") or "")
        words = (item.get("counterparty"), item.get("amount"), p.get("status"))
        return all(w is not None and str(w) in text for w in words)

    good = [p for p in picks if p.get("took") is not None and p.get("visible")]
    full = [p for p in good if told(p)]
    return holds(
        len(full) == len(picks),
        f"{len(good)}/{len(picks)} clicks picked the right payment, {len(full)} showing its "
        f"counterparty, amount and status; e.g. {[p.get('text') for p in good if p not in full][:1]}",
    )


@ck(
    "field.orbit",
    "journeys",
    "static field: dragging does not orbit",
    ("M-GL-4",),
    root="field.instanced",
)
def field_orbit(ev: Any) -> Outcome:
    f = main(ev).get("field") or {}
    o = f.get("orbit")
    if not o:
        return no_browser(ev, "field")
    state = o.get("state") or {}
    last = state.get("last") or {}
    moved = o.get("hash") is not None and o.get("hash") != f.get("hash_default")
    redrawn = state.get("frames", 0) > o.get("frames_before", 0)
    pan = _pan(o.get("grid_px"), f.get("layout") or "")
    ok = moved and redrawn and last.get("inst") == f.get("expected") and pan is None
    panned = f"; a pan by {pan[0]} cells ({pan[1]:.0%} of {pan[2]}), not an orbit" if pan else ""
    return holds(
        ok, f"image changed {moved}, redrawn {redrawn}, instances {last.get('inst')}{panned}"
    )


def _pan(px: list[Any] | None, layout: str) -> tuple[tuple[int, int], float, int] | None:
    """A drag that only moved the default view (``browse.pan_shift`` at each of
    ``PAN_SPOTS``: an edge shows the column a half-cell pan moved there), or None."""
    if not px:
        return None
    seen = [next((s[0] for s, rgb in STATUS_RGB.items() if close(p, rgb)), "") for p in px]
    cells = B.grid_cells()
    n = len(cells)
    if len(seen) != len(B.PAN_SPOTS) * n:
        return None
    found = [B.pan_shift(cells, seen[k * n : (k + 1) * n], layout) for k in range(len(B.PAN_SPOTS))]
    return max((f for f in found if f), key=lambda f: f[1], default=None)


@ck(
    "field.reset",
    "journeys",
    "lost view: the reset button does not return to the default view",
    root="field.instanced",
)
def field_reset(ev: Any) -> Outcome:
    f = main(ev).get("field") or {}
    r = f.get("reset")
    if not r:
        return no_browser(ev, "field")
    cells = f.get("cells") or []
    px = r.get("px") or []
    if not cells or len(px) != len(cells):
        return graded(0.0, f"no pixels after the reset: {r.get('error', '')}")
    bad = [
        c
        for c, p in zip(cells, px, strict=True)
        if not close(p, STATUS_RGB.get(str(c[1]), (0, 0, 0)))
    ]
    return holds(not bad, f"{len(cells) - len(bad)}/{len(cells)} cells back in the default view")


# -- V: rendered truth ------------------------------------------------------------------


@ck(
    "ui.order",
    "rendered",
    "misread ledger: rows not in the API's order",
    ("M-UI-3",),
    root="console.data_visible",
)
def ui_order(ev: Any) -> Outcome:
    pages = _pages(ev)
    if not pages:
        return no_browser(ev, "console pages")
    bad = [
        n
        for n, look in pages.items()
        if [r.get("id") for r in rows_of(look)] != ids(_expected_rows(ev, n))
    ]
    return holds(not bad, f"pages out of order: {bad} of {sorted(pages)}")


def _cells_match(ev: Any, col: int, expect: Any) -> tuple[int, int, list[str]]:
    good = total = 0
    wrong: list[str] = []
    by = {str(i.get("id")): i for i in ev.listing or []}
    truth = ev.dataset.by_id
    for look in _pages(ev).values():
        for r in rows_of(look):
            p = truth.get(str(r.get("id")))
            cells = r.get("cells") or []
            if p is None or len(cells) <= col:
                total += 1
                wrong.append(str(r.get("id")))
                continue
            total += 1
            if cells[col] == expect(p, by.get(p.id, {})):
                good += 1
            else:
                wrong.append(f"{cells[col]!r}")
    return good, total, wrong


@ck(
    "ui.money_exact",
    None,
    "wrong money on screen: amounts or sums not exact",
    ("M-UI-5",),
    critical=True,
    severity="money",
    root="console.data_visible",
)
def ui_money_exact(ev: Any) -> Outcome:
    good, total, wrong = _cells_match(ev, 4, lambda p, _i: p.amount)
    totals = main(ev).get("totals") or []
    want = {
        c: V.money(sum(p.amount_minor for p in ev.dataset.payments if p.currency == c), c)
        for c in V.CURRENCIES
    }
    t_bad = [
        r
        for r in totals
        if (r.get("cells") or [None] * 3)[2:3] != [want.get(r.get("currency") or "")]
        or not r.get("visible")
        or any(r.get("clipped") or [])
    ]
    ok = total > 0 and good == total and len(totals) == len(V.CURRENCIES) and not t_bad
    return holds(
        ok,
        f"{good}/{total} amount cells exact; totals wrong {len(t_bad)}/{len(totals)}; e.g. {wrong[:2]}",
    )


@ck(
    "ui.escaped",
    "rendered",
    "injected markup: text rendered as HTML",
    ("M-UI-2",),
    root="console.data_visible",
)
def ui_escaped(ev: Any) -> Outcome:
    good, total, wrong = _cells_match(ev, 2, lambda p, _i: p.counterparty)
    marked = [
        r
        for look in _pages(ev).values()
        for r in rows_of(look)
        if (
            ev.dataset.by_id.get(str(r.get("id"))) or V.Payment("", 0, "EUR", "", "", "", 0)
        ).counterparty
        in V.MARKUP_NAMES
    ]
    return holds(
        good == total and bool(marked),
        f"{good}/{total} counterparties literal ({len(marked)} with markup); {wrong[:2]}",
    )


@ck(
    "ui.drafts_escaped",
    "rendered",
    "injected markup: a maker's text runs in the checker's console",
    ("M-UI-2",),
    root="console.data_visible",
)
def ui_drafts_escaped(ev: Any) -> Outcome:
    rows = main(ev).get("drafts_rows")
    if rows is None:
        return no_browser(ev, "drafts table")
    want = {ev.drafts[t]: D.DRAFTS[t][1]["counterparty"] for t in ev.drafts}
    seen = {r.get("id"): (r.get("cells") or [""])[0] for r in rows}
    bad = [d for d, cp in want.items() if seen.get(d) != cp]
    return holds(not bad, f"drafts not literal or missing: {bad}")


@ck(
    "ui.feed_escaped",
    "rendered",
    "injected markup: notifications rendered as HTML",
    ("M-UI-2",),
    root="console.data_visible",
)
def ui_feed_escaped(ev: Any) -> Outcome:
    feed = main(ev).get("feed_rows")
    if feed is None:
        return no_browser(ev, "feed")
    name = D.DRAFTS["a"][1]["counterparty"]
    hit = [f for f in feed if name in (f.get("text") or "")]
    return holds(bool(hit), f"the draft.created of {name!r} shown literally: {len(hit)}")


@ck(
    "ui.pick_escaped",
    "rendered",
    "injected markup in the pick panel",
    ("M-UI-2",),
    root="field.instanced",
)
def ui_pick_escaped(ev: Any) -> Outcome:
    picks = (main(ev).get("field") or {}).get("picks") or []
    special = [p for p in picks if (p.get("item") or {}).get("counterparty") in V.MARKUP_NAMES]
    if not special:
        return no_browser(ev, "pick of a markup name")
    p = special[0]
    item = p["item"]
    ok = (
        p.get("took") is not None
        and item["counterparty"] in p.get("text", "")
        and item["amount"] in p.get("text", "")
    )
    return holds(ok, f"#pick text {p.get('text')!r}"[:200])


@ck(
    "ui.berlin_time",
    "rendered",
    "wrong times: created not shown in Berlin time",
    ("M-UI-4",),
    root="console.data_visible",
)
def ui_berlin_time(ev: Any) -> Outcome:
    good, total, wrong = _cells_match(ev, 0, lambda p, _i: V.berlin_minute(p.created_at))
    return holds(
        total > 0 and good == total, f"{good}/{total} created cells in Berlin time; {wrong[:2]}"
    )


@ck(
    "ui.row_cells",
    "rendered",
    "wrong rows on screen: currency, status or note cells not what the ledger holds",
    ("M-UI-3",),
    root="console.data_visible",
)
def ui_row_cells(ev: Any) -> Outcome:
    """Cells 3, 5 and 6 (currency, status, note; SPEC 6.1) against the dataset's currency
    and the API's status and note read just before the pages were."""
    api = {str(i.get("id")): i for i in ev.listing_pages or ev.listing or []}

    def said(pid: str, key: str) -> str:
        value = (api.get(pid) or {}).get(key)
        return "" if value is None else str(value)

    wrong: list[str] = []
    total = 0
    for col, name, expect in (
        (3, "currency", lambda p: p.currency),
        (5, "status", lambda p: said(p.id, "status")),
        (6, "note", lambda p: said(p.id, "note")),
    ):
        good, seen, bad = _cells_match(ev, col, lambda p, _i, f=expect: f(p))
        total += seen
        if good != seen:
            wrong.append(f"{name} {seen - good}/{seen} wrong, e.g. {bad[:2]}")
    return holds(total > 0 and not wrong, "; ".join(wrong) or f"{total} cells as the ledger holds")


@ck("ui.day_cells", "rendered", "wrong days on screen", ("M-DAY-1",), root="console.data_visible")
def ui_day_cells(ev: Any) -> Outcome:
    good, total, wrong = _cells_match(ev, 1, lambda p, _i: p.day)
    return holds(total > 0 and good == total, f"{good}/{total} day cells; {wrong[:2]}")


@ck("ui.vendor_down", "rendered", "silent outage: no banner while the vendor is down", ("M-UI-8",))
def ui_vendor_down(ev: Any) -> Outcome:
    e = ev.browser.get("errors")
    if not e:
        return no_browser(ev, "vendor-down journey")
    rows = e.get("rows_vendor_down") or []
    visible = len(rows) >= 100 and all(r.get("visible") for r in rows)
    return holds(
        e.get("banner_s") is not None and visible,
        f"banner after {e.get('banner_s')} s: {e.get('banner')}; rows visible {visible}",
    )


@ck("ui.feed_order", "rendered", "confusing feed: not newest first or without seq", ("M-UI-9",))
def ui_feed_order(ev: Any) -> Outcome:
    feed = main(ev).get("feed_after")
    if not feed:
        return no_browser(ev, "feed")
    seqs = [int(f["seq"]) for f in feed if str(f.get("seq") or "").isdigit()]
    # the 50 most recent, newest first: from the newest (the approval's draft.executed,
    # awaited in the feed just before, or later) down without a gap, 50 once there are
    newest = ((main(ev).get("approve") or {}).get("event_seq")) or 0
    ok = (
        len(seqs) == len(feed)
        and bool(seqs)
        and seqs == sorted(seqs, reverse=True)
        and seqs[0] >= newest
        and seqs == list(range(seqs[0], seqs[0] - len(seqs), -1))
        and len(feed) == min(50, seqs[0])
    )
    return holds(ok, f"{len(feed)} items, seqs {seqs[:3]}...{seqs[-2:]} (newest event {newest})")


@ck(
    "field.pixels",
    "rendered",
    "misleading field: columns not where or not the colour they must be",
    ("M-GL-2",),
    root="field.instanced",
)
def field_pixels(ev: Any) -> Outcome:
    f = main(ev).get("field") or {}
    cells = f.get("cells")
    if not cells:
        return no_browser(ev, "field pixels")
    bad = [(i, s, px) for i, s, px in cells if not close(px, STATUS_RGB.get(str(s), (0, 0, 0)))]
    return holds(
        not bad,
        f"{len(cells) - len(bad)}/{len(cells)} cell centres in their status colour; e.g. {bad[:2]}",
    )


@ck(
    "field.gaps",
    "rendered",
    "smeared field: columns bleed into their neighbours",
    ("M-GL-2",),
    root="field.instanced",
)
def field_gaps(ev: Any) -> Outcome:
    gaps = (main(ev).get("field") or {}).get("gaps")
    if not gaps:
        return no_browser(ev, "field pixels")
    bad = [px for px in gaps if not close(px, PLANE_RGB)]
    return holds(not bad, f"{len(gaps) - len(bad)}/{len(gaps)} gaps show the plane; e.g. {bad[:2]}")


# -- P: performance and the frontend budget ---------------------------------------------


def _fe(ev: Any) -> list[dict[str, Any]]:
    """Every request of the console's main session, as the browser saw them."""
    return main(ev).get("requests") or []


def _static(reqs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The console's requests for files: every same-origin request but the API's, of any
    resource type (a shader or a module fetched with ``fetch()`` is a file too); the
    favicon the browser asks for by itself is not the console's."""
    from urllib.parse import urlsplit

    def is_file(url: str) -> bool:
        parts = urlsplit(url)
        path = parts.path
        local = parts.hostname in ("127.0.0.1", "localhost")
        return local and not path.startswith("/api/") and path != "/favicon.ico"

    return [r for r in reqs if is_file(r["url"])]


@ck(
    "fe.budget",
    "performance",
    "heavy console: the four files exceed 150,000 bytes",
    ("M-FE-1",),
    root="journey.load",
)
def fe_budget(ev: Any) -> Outcome:
    reqs = _fe(ev)
    if not reqs:
        return no_browser(ev, "console requests")
    static = _static(reqs)
    size = sum(int(r.get("size") or 0) for r in static)
    return holds(
        size <= FE_BUDGET and all(r.get("size") is not None for r in static),
        f"{size} bytes in {len(static)} static files",
    )


@ck(
    "fe.files",
    "performance",
    "unreviewed code: more than the four frontend files, or code from elsewhere",
    ("M-FE-1",),
    root="journey.load",
)
def fe_files(ev: Any) -> Outcome:
    from urllib.parse import urlsplit

    reqs = _fe(ev)
    if not reqs:
        return no_browser(ev, "console requests")
    files = _static(reqs)
    static = {urlsplit(r["url"]).path for r in files}
    foreign = [
        r["url"] for r in reqs if urlsplit(r["url"]).hostname not in ("127.0.0.1", "localhost")
    ]
    # SPEC 1.5 and 6.6: only code the entrant wrote (browse.third_party_marks)
    marked = {urlsplit(r["url"]).path: r["marks"] for r in files if r.get("marks")}
    ok = static <= FE_FILES and not foreign and not marked
    return holds(
        ok, f"static files {sorted(static)}; foreign {foreign[:3]}; third-party code {marked}"
    )


@ck("perf.requests", "performance", "wasted calls: more vendor requests than the walk needs")
def perf_requests(ev: Any) -> Outcome:
    reqs = ev.walk()
    if not reqs:
        return absent("no walk")
    outage = sum(1 for r in reqs if r.get("outage"))
    n = len(reqs) - outage
    optimal = V.PAGES + 1 + 1 + 1 + V.ERRORS_IN_A_ROW  # held, dropped, 429, 503s
    return graded(
        min(1.0, optimal / max(1, n)),
        f"{n} requests (+{outage} during the outage); optimal {optimal}",
    )


@ck("perf.latency", "performance", "slow API under concurrent use")
def perf_latency(ev: Any) -> Outcome:
    lat = ev.latencies
    if not lat:
        return absent("no load run")
    p95 = lat[int(0.95 * (len(lat) - 1))]
    return graded(1.0 if p95 <= 1.0 else max(0.0, 1 - (p95 - 1.0) / 2.0), f"p95 {p95:.3f} s")


@ck("perf.latency_sync", "performance", "slow API while a walk runs")
def perf_latency_sync(ev: Any) -> Outcome:
    lat = ev.latency_sync
    if not lat:
        return absent("no load during the walk")
    p95 = lat[int(0.95 * (len(lat) - 1))]
    return graded(1.0 if p95 <= 1.0 else max(0.0, 1 - (p95 - 1.0) / 2.0), f"p95 {p95:.3f} s")


@ck("perf.first_paint", "performance", "slow console: rows appear late", root="journey.load")
def perf_first_paint(ev: Any) -> Outcome:
    t = (main(ev).get("load") or {}).get("paint_s")
    if t is None:
        return no_browser(ev, "first paint")
    return graded(1.0 if t <= 4.0 else max(0.0, 1 - (t - 4.0) / 4.0), f"100 rows after {t} s")


@ck(
    "perf.field_frame",
    "performance",
    "slow field: the first frame comes late",
    root="field.instanced",
)
def perf_field_frame(ev: Any) -> Outcome:
    t = (main(ev).get("field") or {}).get("first_frame_s")
    if t is None:
        return no_browser(ev, "field frame")
    return graded(
        1.0 if t <= 5.0 else max(0.0, 1 - (t - 5.0) / 5.0), f"first instanced frame after {t} s"
    )


# -- T: transactions (drafts, approvals, edits) -------------------------------------------


@ck(
    "pay.once",
    None,
    "money paid twice: a draft created more than one vendor payment",
    ("M-PAY-3",),
    critical=True,
    severity="money",
)
def pay_once(ev: Any) -> Outcome:
    if not ev.creations:
        return absent("no payment was created")
    per = Counter(str(c.get("reference")) for c in ev.creations)
    twice = {k: n for k, n in per.items() if n > 1}
    return holds(not twice, f"{len(per)} drafts paid; more than once: {twice}")


@ck(
    "pay.recovers",
    None,
    "stuck money: an approval interrupted by a crash never completes",
    ("M-PAY-4",),
    critical=True,
    severity="flow",
)
def pay_recovers(ev: Any) -> Outcome:
    if ev.approval_kill_error:
        return absent(f"no restart after the approval kill: {ev.approval_kill_error}")
    d = ev.draft_states.get("b")
    if not ev.held_create or not isinstance(d, dict):
        return absent("the held creation was never reached")
    vendor_ids = {c["id"] for c in ev.creations if str(c.get("reference")) == ev.drafts.get("b")}
    ok = d.get("state") == "executed" and d.get("vendor_payment_id") in vendor_ids
    return holds(
        ok,
        f"draft B {d.get('state')} with {d.get('vendor_payment_id')}; vendor made {sorted(vendor_ids)}",
    )


@ck(
    "pay.conflict",
    "transactions",
    "confusing API: approving an executed draft does not say 409",
    ("M-PAY-5",),
)
def pay_conflict(ev: Any) -> Outcome:
    got = ev.calls.get("approve:again")
    if got is None:
        return absent("not asked")
    did = ev.drafts.get("a")
    n = sum(1 for c in ev.creations if str(c.get("reference")) == did)
    return holds(
        got.status == 409 and n == 1, f"second approval: {got.status}; vendor payments {n}"
    )


@ck(
    "pay.vendor_ids",
    "transactions",
    "unreconcilable: executed drafts lack the vendor's payment id",
    ("M-PAY-4",),
)
def pay_vendor_ids(ev: Any) -> Outcome:
    drafts = (ev.before_cold.get("drafts") or {}).get("items") if ev.before_cold else None
    if not drafts:
        return absent("no drafts listed")
    made = {str(c.get("reference")): c["id"] for c in ev.creations}
    executed = [d for d in drafts if d.get("state") == "executed"]
    bad = [
        d.get("id") for d in executed if made.get(str(d.get("id"))) != d.get("vendor_payment_id")
    ]
    return holds(bool(executed) and not bad, f"{len(executed)} executed; wrong ids {bad}")


@ck(
    "pay.draft_money",
    "transactions",
    "wrong money: draft amounts not exact money strings",
    ("M-MONEY-1",),
)
def pay_draft_money(ev: Any) -> Outcome:
    bodies = {t: ev.calls[f"create:{t}"].body for t in ev.drafts}
    if not bodies:
        return absent("no drafts created")
    bad = [
        t
        for t, b in bodies.items()
        if not isinstance(b, dict)
        or b.get("amount") != V.money(D.DRAFTS[t][1]["amount_minor"], D.DRAFTS[t][1]["currency"])
        or b.get("amount_minor") != D.DRAFTS[t][1]["amount_minor"]
    ]
    return holds(not bad, f"wrong draft amounts: {bad}")


@ck("pay.failed_kept", "transactions", "phantom payments: an approval that failed shows executed")
def pay_failed_kept(ev: Any) -> Outcome:
    e = ev.browser.get("errors") or {}
    d = e.get("draft_f")
    if not isinstance(d, dict):
        return absent("no failed approval")
    return holds(d.get("state") == "pending" and bool(d.get("error")), f"draft F: {d}"[:200])


@ck(
    "pay.roles_ok",
    "transactions",
    "blocked work: the lead's draft cannot be approved by a checker",
    ("M-PAY-2",),
)
def pay_roles_ok(ev: Any) -> Outcome:
    got = ev.partition.get("approve_c") if ev.partition else None
    if got is None:
        return absent("draft C was not approved")
    return holds(got == 200, f"checker approving the lead's draft: {got}")


@ck(
    "edit.one_winner",
    "transactions",
    "lost updates: concurrent edits with one revision all win",
    ("M-EDIT-1",),
)
def edit_one_winner(ev: Any) -> Outcome:
    e = ev.edits
    if not e or not e.get("race"):
        return absent("no concurrent edits")
    codes = Counter(s for _k, s in e["race"])
    after = e.get("after_race") or {}
    body = e.get("winner_body")
    body = body if isinstance(body, dict) else {}
    rev = e.get("rev")
    # SPEC 5.4: the 200 answers with the updated item, its revision one more than named
    bumped = (
        isinstance(rev, int)
        and body.get("revision") == rev + 1
        and after.get("revision") == rev + 1
        and body.get("note") == e.get("winner_note")
    )
    ok = (
        codes.get(200) == 1
        and codes.get(412) == len(e["race"]) - 1
        and after.get("note") == e.get("winner_note")
        and bumped
    )
    return holds(
        ok,
        f"answers {dict(codes)}; stored note {after.get('note')!r} (winner {e.get('winner_note')!r}); "
        f"revision {rev} -> answered {body.get('revision')}, stored {after.get('revision')}",
    )


@ck(
    "edit.webhook_keeps_note",
    "transactions",
    "lost notes: a webhook wiped a person's note",
    ("M-EDIT-2",),
)
def edit_webhook_keeps_note(ev: Any) -> Outcome:
    e = ev.edits
    if not e or e.get("y_edit") != 200:
        return absent(f"the note was not stored: {e.get('y_edit') if e else None}")
    before, after = e.get("y_before") or {}, e.get("y_after") or {}
    want = ev.extra_truth.get(e.get("y_id"))
    ok = (
        after.get("note") == "checked <b>twice</b>"
        and want is not None
        and (after.get("status"), after.get("version")) == want
        and after.get("revision") == (before.get("revision") or 0) + 1
    )
    return holds(
        ok,
        f"before {before.get('note')!r} r{before.get('revision')}, after {after.get('note')!r} r{after.get('revision')} {after.get('status')}",
    )


@ck(
    "edit.walk_keeps_note", "transactions", "lost notes: a new snapshot wiped a note", ("M-EDIT-2",)
)
def edit_walk_keeps_note(ev: Any) -> Outcome:
    e = ev.edits
    items = (ev.after_resync or {}).get("listing")
    if not e or not items or not e.get("winner_note"):
        return absent("no note, or no second walk")
    x = {str(i.get("id")): i for i in items}.get(e["x_id"]) or {}
    want = (ev.truth_at.get("resync") or {}).get(e["x_id"])
    ok = x.get("note") == e["winner_note"] and (x.get("status"), x.get("version")) == want
    return holds(
        ok,
        f"after the walk: note {x.get('note')!r}, {x.get('status')} v{x.get('version')} (want {want})",
    )


# -- X: consistency ---------------------------------------------------------------------


def _versions(ev: Any, kinds: tuple[str, ...]) -> Outcome:
    if (miss := need_listing(ev)) is not None:
        return miss
    by = {str(i.get("id")): i for i in ev.listing or []}
    truth = ev.truth_at.get("listing") or ev.dataset.truth
    touched = sorted({e.payment_id for e in ev.dataset.events if e.kind in kinds})
    good = sum(
        1
        for pid in touched
        if pid in by and (by[pid].get("status"), by[pid].get("version")) == truth[pid]
    )
    return holds(good == len(touched), f"{good}/{len(touched)} payments at their highest version")


@ck(
    "cons.versions",
    "consistency",
    "stale state: webhooks applied by arrival, not by version",
    ("M-HOOK-3",),
)
def cons_versions(ev: Any) -> Outcome:
    if (miss := need_listing(ev)) is not None:
        return miss
    by = {str(i.get("id")): i for i in ev.listing or []}
    truth = ev.truth_at.get("listing") or ev.dataset.truth
    good = sum(
        1
        for pid, sv in truth.items()
        if pid in by and (by[pid].get("status"), by[pid].get("version")) == sv
    )
    return holds(
        good == len(truth), f"{good}/{len(truth)} payments with the vendor's status and version"
    )


@ck(
    "cons.early_events",
    "consistency",
    "stale state: an event before its page is lost",
    ("M-HOOK-3",),
)
def cons_early_events(ev: Any) -> Outcome:
    return _versions(ev, ("early",))


@ck(
    "cons.reordered",
    "consistency",
    "stale state: an older event overwrote a newer one",
    ("M-HOOK-3",),
)
def cons_reordered(ev: Any) -> Outcome:
    return _versions(ev, ("reordered",))


@ck(
    "cons.replay",
    "consistency",
    "double notifications: a replayed event applied again",
    ("M-HOOK-4",),
)
def cons_replay(ev: Any) -> Outcome:
    hooks = [r for r in ev.trace if r.get("kind") == "hook" and r.get("cls") == "replay"]
    events = ev.events
    if not hooks or events is None:
        return absent("no replay delivered or no events listed")
    per = Counter(
        (e.get("payment_id"), e.get("version"))
        for e in events
        if e.get("kind") == "payment.updated"
    )
    twice = [r["event"] for r in hooks if per.get((r["payment"], r["version"]), 0) != 1]
    answered = all(r.get("answer") in (200, 202) for r in hooks)
    return holds(
        answered and not twice,
        f"replays answered {[r.get('answer') for r in hooks]}; published twice {twice}",
    )


@ck(
    "cons.conservation",
    None,
    "money created or lost: summary sums differ from the payments",
    ("M-API-6",),
    critical=True,
    severity="money",
)
def cons_conservation(ev: Any) -> Outcome:
    s = ev.summary
    if not isinstance(s, dict) or not isinstance(s.get("currencies"), list):
        return absent("no summary")
    truth: dict[str, list[int]] = {}
    for p in ev.dataset.payments:
        t = truth.setdefault(p.currency, [0, 0])
        t[0] += 1
        t[1] += p.amount_minor
    got = {c.get("currency"): c for c in s["currencies"] if isinstance(c, dict)}
    residual = 0
    bad = []
    for cur, (n, total) in truth.items():
        c = got.get(cur) or {}
        m = c.get("sum_minor") if type(c.get("sum_minor")) is int else 0
        residual += abs(m - total)
        if c.get("count") != n or m != total or c.get("sum") != V.money(total, cur):
            bad.append(cur)
    return holds(
        not bad and set(got) == set(truth),
        f"residual {residual} minor units; wrong currencies {bad}",
    )


@ck(
    "money.exponent",
    None,
    "wrong money: amounts not exact or not in the currency's exponent",
    ("M-MONEY-1",),
    critical=True,
    severity="money",
)
def money_exponent(ev: Any) -> Outcome:
    if (miss := need_listing(ev)) is not None:
        return miss
    by = ev.dataset.by_id
    bad = [
        i.get("id")
        for i in ev.listing or []
        if str(i.get("id")) in by
        and (
            type(i.get("amount_minor")) is not int
            or i.get("amount_minor") != by[str(i["id"])].amount_minor
            or i.get("amount") != by[str(i["id"])].amount
        )
    ]
    big = sum(1 for p in ev.dataset.payments if p.amount_minor > 2**53)
    return holds(
        not bad, f"{len(bad)} wrong amounts ({big} above 2^53 in the data); e.g. {bad[:2]}"
    )


@ck(
    "money.raw_json",
    "consistency",
    "float money: amount_minor not written as JSON integers",
    ("M-MONEY-1",),
)
def money_raw_json(ev: Any) -> Outcome:
    text = ev.listing_text
    if not text:
        return absent("no listing text")
    import re

    floats = re.findall(r'"amount_minor"\s*:\s*-?\d+\.\d+|"amount_minor"\s*:\s*-?\d+e', text)
    return holds(not floats, f"{len(floats)} non-integer amount_minor tokens")


@ck(
    "days.dst",
    None,
    "wrong books: counts per Berlin day wrong across DST",
    ("M-DAY-1",),
    critical=True,
    severity="data",
)
def days_dst(ev: Any) -> Outcome:
    s = ev.summary
    if not isinstance(s, dict) or not isinstance(s.get("days"), list):
        return absent("no summary")
    truth = Counter(p.day for p in ev.dataset.payments)
    got = {d.get("day"): d.get("count") for d in s["days"] if isinstance(d, dict)}
    bad = [d for d in truth if got.get(d) != truth[d]] + [d for d in got if d not in truth]
    return holds(not bad, f"{len(bad)} wrong days of {len(truth)}; e.g. {bad[:3]}")


@ck(
    "api.summary_order",
    "consistency",
    "confusing books: the summary's currencies or days out of order or repeated",
    ("M-API-6",),
)
def api_summary_order(ev: Any) -> Outcome:
    s = ev.summary
    if not isinstance(s, dict) or not all(
        isinstance(s.get(k), list) for k in ("currencies", "days")
    ):
        return absent("no summary")
    codes = [c.get("currency") for c in s["currencies"] if isinstance(c, dict)]
    days = [d.get("day") for d in s["days"] if isinstance(d, dict)]
    # SPEC 5.5: currencies sorted by code, days sorted, each once
    ok = (
        all(isinstance(c, str) for c in codes)
        and all(isinstance(d, str) for d in days)
        and codes == sorted(set(codes))
        and days == sorted(set(days))
    )
    return holds(ok, f"currencies {codes}; days {days[:2]}...{days[-2:]} ({len(days)})")


@ck("api.days", "consistency", "wrong days: items carry the wrong Berlin day", ("M-DAY-1",))
def api_days(ev: Any) -> Outcome:
    if (miss := need_listing(ev)) is not None:
        return miss
    by = ev.dataset.by_id
    bad = [
        i.get("id")
        for i in ev.listing or []
        if str(i.get("id")) in by and i.get("day") != by[str(i["id"])].day
    ]
    return holds(not bad, f"{len(bad)} wrong days")


@ck(
    "api.order",
    "consistency",
    "misread ledger: listing not ordered by created_at, id",
    ("M-API-4",),
)
def api_order(ev: Any) -> Outcome:
    if (miss := need_listing(ev)) is not None:
        return miss
    return holds(ids(ev.listing) == truth_order(ev), "listing order vs (created_at, id)")


@ck(
    "api.pagination", "consistency", "missing rows: pages of different sizes disagree", ("M-API-4",)
)
def api_pagination(ev: Any) -> Outcome:
    if (miss := need_listing(ev)) is not None:
        return miss
    ok = ids(ev.paged) == ids(ev.listing) and ev.paged_total == len(ev.listing or [])
    return holds(ok, f"per_page 97: {len(ev.paged or [])} items, total {ev.paged_total}")


@ck("api.filters", "consistency", "wrong reports: filters select the wrong payments", ("M-API-5",))
def api_filters(ev: Any) -> Outcome:
    if not ev.filters:
        return absent("no filters asked")
    truth = ev.truth_at.get("listing") or ev.dataset.truth
    order = ev.dataset.api_order()
    tests = {
        "currency": lambda p: p.currency == "CLF",
        "status": lambda p: truth[p.id][0] == "refunded",
        "dst": lambda p: p.day == "2026-03-29",
        "after-dst": lambda p: p.day == "2026-03-30",
        "combined": lambda p: p.currency == "EUR" and truth[p.id][0] == "settled",
        "day-currency": lambda p: p.day == "2026-04-11" and p.currency == "JPY",
    }
    bad = [n for n, t in tests.items() if ev.filters.get(n) != [p.id for p in order if t(p)]]
    # "total counts every item matching the filters" (SPEC 5.3), not every stored one
    miscounted = [
        n
        for n in tests
        if ev.filter_totals.get(n) != len(ev.filters.get(n) or []) and ev.filters.get(n) is not None
    ]
    return holds(not bad and not miscounted, f"wrong filters: {bad}; wrong totals: {miscounted}")


@ck("api.counterparty", "consistency", "altered names: counterparties not as the vendor sent them")
def api_counterparty(ev: Any) -> Outcome:
    if (miss := need_listing(ev)) is not None:
        return miss
    by = ev.dataset.by_id
    bad = [
        i.get("id")
        for i in ev.listing or []
        if str(i.get("id")) in by and i.get("counterparty") != by[str(i["id"])].counterparty
    ]
    return holds(not bad, f"{len(bad)} altered names")


@ck(
    "evt.sequence",
    "consistency",
    "broken feed: events not numbered 1, 2, 3 without gaps",
    ("M-EVT-1",),
)
def evt_sequence(ev: Any) -> Outcome:
    events = ev.events
    if not events:
        return absent("no events listed")
    seqs = [e.get("seq") for e in events]
    return holds(seqs == list(range(1, len(seqs) + 1)), f"{len(seqs)} events; first {seqs[:3]}")


@ck(
    "evt.exactly_once",
    "consistency",
    "wrong feed: changes published twice or not at all",
    ("M-EVT-1",),
)
def evt_exactly_once(ev: Any) -> Outcome:
    events = ev.events
    if events is None:
        return absent("no events listed")
    kinds = Counter(e.get("kind") for e in events)
    created = [e.get("draft_id") for e in events if e.get("kind") == "draft.created"]
    executed = [e.get("draft_id") for e in events if e.get("kind") == "draft.executed"]
    problems = _event_problems(ev, events)
    ok = (
        len(created) == len(set(created))
        and len(executed) == len(set(executed))
        and kinds.get("sync.completed", 0) >= 2
        and set(ev.drafts.values()) <= set(created)
        and not problems
    )
    return holds(ok, f"kinds {dict(kinds)}; {'; '.join(problems)[:300] or 'fields as the changes'}")


def _event_problems(ev: Any, events: list[dict[str, Any]]) -> list[str]:
    """What the event table (SPEC 5.7) says that did not happen, or says wrong."""
    out: list[str] = []
    updates = [
        (str(e.get("payment_id")), e.get("version"))
        for e in events
        if e.get("kind") == "payment.updated"
    ]
    twice = [k for k, n in Counter(updates).items() if n > 1]
    if twice:
        out.append(f"payment.updated twice for {twice[:2]}")
    # webhooks that changed nothing: refused ones, and the older of a reordered pair
    refused = {
        (str(r.get("payment")), r.get("version"))
        for r in ev.trace
        if r.get("kind") == "hook" and r.get("cls") in ("forged", "stale", "future")
    }
    pairs: dict[str, list[int]] = {}
    for e in ev.dataset.events:
        if e.kind == "reordered":
            pairs.setdefault(e.payment_id, []).append(e.version)
    older = {(pid, v) for pid, vs in pairs.items() for v in vs if v < max(vs)}
    phantom = sorted(k for k in set(updates) if k in refused or k in older)
    if phantom:
        out.append(f"payment.updated for webhooks that changed nothing: {phantom[:2]}")
    # every executed draft: one draft.executed naming its vendor payment
    drafts = ((ev.cold or {}).get("drafts") or {}).get("items") or []
    said = {
        e.get("draft_id"): e.get("vendor_payment_id")
        for e in events
        if e.get("kind") == "draft.executed"
    }
    unsaid = [
        d.get("id")
        for d in drafts
        if isinstance(d, dict)
        and d.get("state") == "executed"
        and said.get(d.get("id")) != d.get("vendor_payment_id")
    ]
    if unsaid:
        out.append(f"executed drafts without their draft.executed: {unsaid[:2]}")
    # draft.created carries the draft's money string, currency and counterparty
    made = {e.get("draft_id"): e for e in events if e.get("kind") == "draft.created"}
    for tag, did in ev.drafts.items():
        body = D.DRAFTS[tag][1]
        want = (
            V.money(body["amount_minor"], body["currency"]),
            body["currency"],
            body["counterparty"],
        )
        e = made.get(did) or {}
        if (e.get("amount"), e.get("currency"), e.get("counterparty")) != want:
            out.append(f"draft.created of {tag}: {e.get('amount')!r} {e.get('currency')!r}")
    return out


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
    longest = max((b - a for a, b in zip(marks, marks[1:], strict=False)), default=0.0) / 1000
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
    worst = max((b[0] - a[0]) / 1000.0 for a, b in zip(span, span[1:], strict=False))
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


# -- excellence (graded continuously; unlocked by the gates) --------------------------------


@ck("exc.api_compact", "excellence", "heavy API: bytes per listed item")
def exc_api_compact(ev: Any) -> Outcome:
    text = ev.listing_text
    if not text or not ev.listing:
        return absent("no listing")
    per = len(text.encode()) / max(1, min(500, len(ev.listing)))
    return graded(max(0.0, min(1.0, (400 - per) / 200)), f"{per:.0f} bytes per item")


@ck("exc.fe_bytes", "excellence", "heavy console: frontend bytes", root="journey.load")
def exc_fe_bytes(ev: Any) -> Outcome:
    reqs = main(ev).get("requests") or []
    static = [r for r in reqs if r.get("type") in ("document", "script", "stylesheet")]
    if not static:
        return no_browser(ev, "console requests")
    size = sum(int(r.get("size") or 0) for r in static)
    return graded(max(0.0, min(1.0, (FE_BUDGET - size) / (FE_BUDGET - 20_000))), f"{size} bytes")
