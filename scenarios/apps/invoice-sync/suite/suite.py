"""Scorer of apps/invoice-sync 2.x: execute the built app against the seeded mock upstream.

``context()`` runs the scenario once and collects evidence; the checks only read it.
The app runs confined (``appkit.jail``: its own user, its own tree copy; it cannot reach
this suite, the seed, the fixtures or the trace). The run: start the mock and the app;
while the app waits on the held *kill page*, ask its /health and /api/status, then
SIGKILL it; respawn it and let it finish (through 503s, a Retry-After, a slow page);
read its API over HTTP and its page in a real browser (rendered text, occlusion); then
SIGKILL again, take the upstream offline, respawn, and read what survived. Time-aware
checks grade the mock's trace timestamps.

Every SPEC requirement maps to a check: see the scenario's README.
"""

import contextlib
import signal
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.scoring import Outcome, Suite, absent, fraction, graded, unavailable
from harness.scoring.appkit.browser import BrowserUnavailable, PageProbe, probe_page
from harness.scoring.appkit.fetch import Fetched, get, poll
from harness.scoring.appkit.fixtures import MARKUP_NAMES, RETRY_AFTER, SLOW_DELAY, Dataset
from harness.scoring.appkit.jail import Jail
from harness.scoring.appkit.mockdep import RESOURCE, MockUpstream
from harness.scoring.appkit.procs import AppNotHealthy, AppProcess
from harness.scoring.era import load_thresholds

HERE = Path(__file__).resolve().parent
BACKOFF_FIRST_S = 0.15  # SPEC: at least 0.2 s before the first retry (timer tolerance)
# SPEC: each further pause at least 1.5x the previous one, so over three 503s the pauses
# are at least 0.2, 0.3, 0.45 s: the last >= 0.4 s and the sum >= 0.9 s (with slack)
BACKOFF_LAST_S = 0.4
BACKOFF_SUM_S = 0.9
RETRY_AFTER_SLACK_S = 0.05
SETTLE_S = 1.0  # after the offline restart: time a re-syncing app gets to show itself

suite = Suite(
    name="invoice-sync",
    version="2.0.0",
    tier_weights={"core": 0.45, "resilience": 0.35, "ui": 0.2},
    class_floors={"dead": 0.0, "money": 0.2, "data": 0.3, "view": 0.5},
    severity_ranking=("dead", "money", "data", "view", "core", "resilience", "ui"),
    thresholds=HERE / "thresholds.yml",
    thresholds_pin="588cc67ec8d4c2aca9f3c67dd58dd9b2c7884661e2450bf50401004c3f782856",
)


@dataclass
class Evidence:
    """Everything one execution of the app produced, for the checks to grade."""

    dataset: Dataset
    evidence_dir: Path
    confinement: str = ""
    healthy: bool = False
    health_detail: str = ""
    health_during_sync: Fetched | None = None
    killed_mid_sync: bool = False
    respawn_error: str | None = None
    status: Any = None
    listing: Fetched | None = None
    page: Fetched | None = None
    probe: PageProbe | None = None
    probe_error: str | None = None
    restore_error: str | None = None
    restored: Fetched | None = None
    data_files: list[str] = field(default_factory=list)
    sqlite_files: list[str] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def invoices(self, fetched: Fetched | None) -> list[dict[str, Any]] | None:
        """The JSON invoice list of a fetch, or None when it is not one."""
        data = fetched.json() if fetched is not None and fetched.ok else None
        if not isinstance(data, list) or not all(isinstance(i, dict) for i in data):
            return None
        return data

    def ids(self, fetched: Fetched | None) -> list[str]:
        return [str(i.get("id")) for i in self.invoices(fetched) or []]

    def requests(self, phase: str | None = None) -> list[dict[str, Any]]:
        return [
            r
            for r in self.trace
            if r.get("path") == RESOURCE and (phase is None or r["phase"] == phase)
        ]

    def page_requests(self, page: int) -> list[dict[str, Any]]:
        return [r for r in self.requests() if r.get("page") == page and r["phase"] != "offline"]


def _state(app: AppProcess) -> Any:
    answer = get(app.url("/api/status"), timeout=5.0).json()
    return answer if isinstance(answer, dict) else None


def _run(ev: Evidence, mock: MockUpstream, app: AppProcess, budgets: dict[str, float]) -> None:
    """The scripted execution; fills ``ev`` step by step and stops at the first dead end."""
    try:
        app.start()
    except AppNotHealthy as exc:
        ev.health_detail = f"{exc}; stderr: {exc.log_tail[-300:]}"
        return
    ev.healthy, ev.health_detail = True, f"GET /health answered on port {app.port}"
    if mock.kill_point.wait(budgets["sync"]):
        ev.health_during_sync = get(app.url("/health"), timeout=3.0)
        app.kill_group(signal.SIGKILL)
        ev.killed_mid_sync = True
    mock.release()
    mock.mark_phase("after-respawn")
    try:
        if ev.killed_mid_sync:
            app.respawn()
    except AppNotHealthy as exc:
        ev.respawn_error = str(exc)
        return

    def finished() -> bool:
        state = _state(app)
        return bool(state) and state.get("state") in ("done", "failed")

    poll(finished, budgets["sync"])
    ev.status = _state(app)
    ev.listing = get(app.url("/api/invoices"))
    ev.page = get(app.url("/"))
    probe_start = time.monotonic()
    try:
        ev.probe = probe_page(app.url("/"), ev.evidence_dir, name="invoices")
    except BrowserUnavailable as exc:
        ev.probe_error = str(exc)
    ev.timings["browser_s"] = round(time.monotonic() - probe_start, 2)
    mock.mark_phase("offline")
    mock.set_offline(True)
    try:
        app.respawn()
    except AppNotHealthy as exc:
        ev.restore_error = str(exc)
        return
    before = len(ev.ids(ev.listing))
    poll(lambda: len(ev.ids(get(app.url("/api/invoices")))) >= before, budgets["restore"])
    ev.restored = get(app.url("/api/invoices"))
    time.sleep(SETTLE_S)


@contextlib.contextmanager
def context(tree: Path, seed: str, evidence_dir: Path) -> Iterator[Evidence]:
    """Execute the app in ``tree`` once against the mock seeded by ``seed``."""
    evidence_dir = Path(evidence_dir)
    evidence_dir.mkdir(parents=True, exist_ok=True)
    found = load_thresholds(HERE / "thresholds.yml")
    budgets = {
        "start": found.budget("start", 10.0),
        "sync": found.budget("sync", 25.0),
        "restore": found.budget("restore", 5.0),
    }
    started = time.monotonic()
    jail = Jail(Path(tree))
    try:
        with MockUpstream(seed, evidence_dir / "trace.jsonl") as mock:
            argv = [
                jail.python,
                "-m",
                "invoicesync",
                "--port",
                "{port}",
                "--data",
                "{data}",
                "--upstream",
                mock.url,
            ]
            ev = Evidence(dataset=mock.dataset, evidence_dir=evidence_dir)
            ev.confinement = f"{jail.mode}: {jail.statement()}"
            with AppProcess(
                argv,
                cwd=Path(tree),
                logs=evidence_dir / "logs",
                budget=budgets["start"],
                name="invoicesync",
                jail=jail,
            ) as app:
                app_start = time.monotonic()
                _run(ev, mock, app, budgets)
            ev.timings["app_run_s"] = round(time.monotonic() - app_start, 2)
            ev.trace = mock.records()
        files = sorted(p for p in jail.data.rglob("*") if p.is_file())
        ev.data_files = [p.relative_to(jail.data).as_posix() for p in files]
        ev.sqlite_files = [
            p.relative_to(jail.data).as_posix()
            for p in files
            if p.read_bytes()[:16] == b"SQLite format 3\x00"
        ]
    finally:
        jail.close()
    ev.timings["execution_s"] = round(time.monotonic() - started, 2)
    yield ev  # app and mock are stopped: the checks read evidence only


# -- checks -------------------------------------------------------------------------------


@suite.check(
    "app.health",
    critical=True,
    severity="dead",
    harm="dead flow: the service never starts, so nothing is synced or shown",
)
def app_health(ev: Evidence) -> Outcome:
    return graded(1.0, ev.health_detail) if ev.healthy else absent(ev.health_detail)


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
    harm="blind operations: health checks time out while a sync waits on the upstream",
)
def health_during_sync(ev: Evidence) -> Outcome:
    if not ev.killed_mid_sync:
        return absent("the sync never reached the held page, so /health was not asked then")
    got = ev.health_during_sync
    ok = got is not None and got.status == 200 and got.json() == {"status": "ok"}
    return graded(1.0 if ok else 0.0, f"GET /health mid-sync: {got.status if got else None}")


@suite.check(
    "sync.complete",
    critical=True,
    severity="data",
    root="app.health",
    harm="missing invoices: the copy silently lacks part of the upstream",
)
def sync_complete(ev: Evidence) -> Outcome:
    if ev.invoices(ev.listing) is None:
        return absent(f"GET /api/invoices gave no invoice list ({_why(ev, ev.listing)})")
    have = set(ev.ids(ev.listing))
    want = [inv.id for inv in ev.dataset.invoices]
    state = ev.status.get("state") if isinstance(ev.status, dict) else None
    return fraction(
        sum(i in have for i in want), len(want), f"expected invoices stored (state {state})"
    )


@suite.check(
    "sync.no_duplicates",
    tier="core",
    root="app.health",
    harm="double counting: an invoice listed twice inflates totals",
)
def sync_no_duplicates(ev: Evidence) -> Outcome:
    if ev.invoices(ev.listing) is None:
        return absent(f"GET /api/invoices gave no invoice list ({_why(ev, ev.listing)})")
    ids = ev.ids(ev.listing)
    dupes = sorted(i for i, n in Counter(ids).items() if n > 1)
    unique = len(set(ids)) / len(ids) if ids else 1.0
    # any duplicate double-counts money: a single one halves the grade
    return graded(
        1.0 if not dupes else 0.5 * unique,
        f"{len(set(ids))}/{len(ids)} unique entries; duplicated: {dupes[:3]}",
    )


@suite.check(
    "sync.in_order",
    tier="core",
    root="app.health",
    harm="overloaded upstream: pages requested in parallel or out of order",
)
def sync_in_order(ev: Evidence) -> Outcome:
    reqs = [r for r in ev.requests() if r["phase"] != "offline" and r.get("page") is not None]
    if not reqs:
        return absent("the upstream was never asked for a page")
    bad = []
    for phase in ("initial-sync", "after-respawn"):
        last = -1
        for r in (r for r in reqs if r["phase"] == phase):
            if r["inflight"] or r["page"] < last:
                bad.append(r["seq"])
            last = max(last, r["page"])
    return fraction(
        len(reqs) - len(bad), len(reqs), f"requests one at a time in order; bad {bad[:3]}"
    )


@suite.check(
    "sync.retries_503",
    tier="resilience",
    root="app.health",
    harm="fragile sync: one transient upstream error loses a page",
)
def sync_retries_503(ev: Evidence) -> Outcome:
    faults = ev.dataset.faults
    got = []
    for page in (faults.backoff_page, faults.retry_after_page):
        asks = ev.page_requests(page)
        failed = [r for r in asks if r["status"] == 503]
        got.append(
            bool(failed) and any(r["status"] == 200 and r["seq"] > failed[0]["seq"] for r in asks)
        )
    return fraction(sum(got), len(got), "pages answering 503 eventually fetched")


def _gaps(asks: list[dict[str, Any]]) -> list[float]:
    """Seconds between consecutive requests for one page, up to its first 200."""
    out, prev = [], None
    for r in asks:
        if prev is not None:
            out.append((r["t_ms"] - prev["t_ms"]) / 1000.0)
        if r["status"] == 200:
            break
        prev = r
    return out


@suite.check(
    "sync.backoff",
    tier="resilience",
    root="app.health",
    harm="retry storm: a struggling upstream is hammered at a constant or zero pause",
)
def sync_backoff(ev: Evidence) -> Outcome:
    page = ev.dataset.faults.backoff_page
    gaps = _gaps(ev.page_requests(page))
    if not gaps:
        return absent(f"page {page} (503 several times) was never retried")
    # Measured gaps are pauses plus request latency, which a loaded machine only makes
    # longer: every test is a lower bound, so the reference never fails by jitter.
    tests = {
        "first pause >= 0.15 s": gaps[0] >= BACKOFF_FIRST_S,
        f"last pause >= {BACKOFF_LAST_S} s": len(gaps) >= 3 and gaps[-1] >= BACKOFF_LAST_S,
        f"pauses sum >= {BACKOFF_SUM_S} s": len(gaps) >= 3 and sum(gaps) >= BACKOFF_SUM_S,
    }
    shown = ", ".join(f"{g:.2f}" for g in gaps)
    failed = [k for k, ok in tests.items() if not ok]
    return fraction(
        len(tests) - len(failed), len(tests), f"page {page}: pauses {shown} s; failed: {failed}"
    )


@suite.check(
    "sync.retry_after",
    tier="resilience",
    root="app.health",
    harm="ignored Retry-After: the client retries before the upstream asked it to",
)
def sync_retry_after(ev: Evidence) -> Outcome:
    page = ev.dataset.faults.retry_after_page
    gaps = _gaps(ev.page_requests(page))
    if not gaps:
        return absent(f"page {page} (503 with Retry-After) was never retried")
    ok = gaps[0] >= RETRY_AFTER - RETRY_AFTER_SLACK_S
    return graded(
        1.0 if ok else 0.0, f"page {page}: retried after {gaps[0]:.2f} s (asked {RETRY_AFTER} s)"
    )


@suite.check(
    "sync.waits_slow",
    tier="resilience",
    root="app.health",
    harm="fatal timeout: a slow upstream answer is abandoned or re-requested",
)
def sync_waits_slow(ev: Evidence) -> Outcome:
    page = ev.dataset.faults.slow_page
    asks = ev.page_requests(page)
    slow = next((r for r in asks if r["fault"] == "slow"), None)
    if slow is None:
        return absent(f"the slow page {page} was never requested")
    answered = slow["t_ms"] + 1000.0 * SLOW_DELAY
    early = [r["seq"] for r in asks if r["seq"] > slow["seq"] and r["t_ms"] < answered - 200]
    later = [r for r in ev.requests() if r["seq"] > slow["seq"] and r["phase"] != "offline"]
    last_page = page == len(ev.dataset.pages) - 1
    went_on = last_page or any(r.get("page") == page + 1 for r in later)
    ok = not early and went_on
    return graded(
        1.0 if ok else 0.0, f"slow page {page}: re-asked early {early}, continued: {went_on}"
    )


@suite.check(
    "sync.resumes",
    tier="resilience",
    root="app.health",
    harm="wasteful restart: a crash makes the service fetch everything again",
)
def sync_resumes(ev: Evidence) -> Outcome:
    kill = ev.dataset.faults.kill_page
    if not ev.killed_mid_sync:
        return graded(0.0, f"the sync never reached page {kill}, where it is killed")
    if ev.respawn_error:
        return graded(0.0, f"no restart after SIGKILL: {ev.respawn_error}")
    after = [r for r in ev.requests("after-respawn") if r["status"] == 200]
    if not any(r.get("page") == kill for r in after):
        return graded(0.0, f"after the restart page {kill} was never fetched")
    again = {r["page"] for r in after if r.get("page") is not None and r["page"] < kill}
    return fraction(
        kill - len(again), kill, f"pages stored before SIGKILL not fetched again ({sorted(again)})"
    )


@suite.check(
    "sync.not_repeated",
    tier="resilience",
    root="app.health",
    harm="endless re-sync: a completed sync starts over after every restart",
)
def sync_not_repeated(ev: Evidence) -> Outcome:
    if not (isinstance(ev.status, dict) and ev.status.get("state") == "done"):
        return graded(1.0, "the sync never completed: asking again after a restart is resuming")
    if ev.restore_error:
        return graded(0.0, f"no restart after the completed sync: {ev.restore_error}")
    asked = ev.requests("offline")
    return graded(0.0 if asked else 1.0, f"{len(asked)} upstream requests after a completed sync")


@suite.check(
    "status.done",
    tier="core",
    root="app.health",
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


@suite.check(
    "api.listing_exact",
    tier="core",
    root="app.health",
    harm="corrupted API: invoices altered, missing fields or not in first-received order",
)
def api_listing_exact(ev: Evidence) -> Outcome:
    items = ev.invoices(ev.listing)
    if items is None:
        return absent(f"GET /api/invoices gave no invoice list ({_why(ev, ev.listing)})")
    first: dict[str, dict[str, Any]] = {}
    for item in items:
        first.setdefault(str(item.get("id")), item)
    expected = ev.dataset.by_id
    order = [inv.id for inv in ev.dataset.invoices if inv.id in first]
    listed = list(first)
    if not listed:
        return absent("GET /api/invoices listed nothing")
    good = sum(
        1
        for i, ident in enumerate(listed)
        if ident in expected
        and first[ident] == expected[ident].as_json()
        and i < len(order)
        and order[i] == ident
    )
    return fraction(good, len(listed), "entries exact and in first-received order")


@suite.check(
    "storage.sqlite",
    tier="core",
    root="app.health",
    harm="state outside SQLite: durability and resumption cannot be relied on",
)
def storage_sqlite(ev: Evidence) -> Outcome:
    detail = f"SQLite files in --data: {ev.sqlite_files[:3]} of {ev.data_files[:5]}"
    return graded(1.0 if ev.sqlite_files else 0.0, detail)


def _rows(ev: Evidence) -> tuple[list[dict[str, Any]] | None, Outcome | None]:
    if ev.probe is None:
        return None, unavailable(f"no browser probe: {ev.probe_error}")
    if ev.probe.error:
        return None, absent(f"the page did not load: {ev.probe.error}")
    return ev.probe.rows, None


@suite.check(
    "money.exact",
    critical=True,
    severity="money",
    root="app.health",
    harm="wrong money: an amount shown with wrong decimals, sign or digits",
)
def money_exact(ev: Evidence) -> Outcome:
    rows, why = _rows(ev)
    if rows is None:
        return why  # type: ignore[return-value]
    expected = ev.dataset.by_id
    mine = [r for r in rows if r.get("id") in expected and len(r["cells"]) >= 4]
    if not mine:
        return absent("no invoice rows with 4 cells on the rendered page")
    bad = [r for r in mine if r["cells"][3] != expected[r["id"]].display_amount]
    sample = [
        f"{r['cells'][2]} {r['cells'][3]}!={expected[r['id']].display_amount}" for r in bad[:3]
    ]
    good = (len(mine) - len(bad)) / len(mine)
    # a single wrong amount is wrong money: any error halves the grade
    score = 1.0 if not bad else 0.5 * good
    return graded(score, f"{len(mine) - len(bad)}/{len(mine)} amounts right; wrong: {sample}")


@suite.check(
    "durability.after_kill",
    critical=True,
    severity="data",
    root="app.health",
    harm="lost data: invoices stored before a SIGKILL are gone after the restart",
)
def durability_after_kill(ev: Evidence) -> Outcome:
    before = set(ev.ids(ev.listing))
    if not before:
        return absent("nothing was stored to survive the SIGKILL")
    if ev.restore_error:
        return graded(0.0, f"no restart after SIGKILL: {ev.restore_error}")
    after = set(ev.ids(ev.restored))
    return fraction(
        len(before & after), len(before), "invoices served after SIGKILL with the upstream offline"
    )


@suite.check(
    "ui.rows_visible",
    critical=True,
    severity="view",
    root="app.health",
    harm="hidden invoices: stored invoices are not visible to the user (hidden or covered)",
)
def ui_rows_visible(ev: Evidence) -> Outcome:
    rows, why = _rows(ev)
    if rows is None:
        return why  # type: ignore[return-value]
    stored = set(ev.ids(ev.listing))
    if not stored:
        return absent("nothing stored, nothing to show")
    seen = {r.get("id") for r in rows if r.get("visible")}
    assert ev.probe is not None
    return fraction(
        len(stored & seen),
        len(stored),
        f"stored invoices visible on top ({ev.probe.visible_rows} of {ev.probe.total_rows} rows)",
        ev.probe.screenshot,
    )


@suite.check(
    "ui.content_type",
    tier="ui",
    root="app.health",
    harm="garbled page: GET / is not served as UTF-8 HTML",
)
def ui_content_type(ev: Evidence) -> Outcome:
    got = ev.page
    if got is None or not got.ok:
        return absent(f"GET / failed ({_why(ev, got)})")
    ctype = (ev.probe.content_type if ev.probe else None) or ""
    ok = ctype.replace(" ", "").lower() == "text/html;charset=utf-8"
    return graded(1.0 if ok else 0.0, f"Content-Type {ctype!r}")


@suite.check(
    "ui.table_rows",
    tier="ui",
    root="app.health",
    harm="misleading table: rows missing, out of order or with the wrong cells",
)
def ui_table_rows(ev: Evidence) -> Outcome:
    rows, why = _rows(ev)
    if rows is None:
        return why  # type: ignore[return-value]
    stored = set(ev.ids(ev.listing))
    if not stored:
        return absent("nothing stored, no rows to compare")
    # one row per stored invoice, in the order first received (the upstream's order);
    # repeated rows are sync.no_duplicates' harm, so only first occurrences count here
    want = [inv for inv in ev.dataset.invoices if inv.id in stored]
    seen: set[str] = set()
    firsts = []
    for row in rows:
        if row.get("id") not in seen:
            seen.add(str(row.get("id")))
            firsts.append(row)
    good = 0
    for i, inv in enumerate(want):
        row = firsts[i] if i < len(firsts) else None
        if (
            row is not None
            and row.get("id") == inv.id
            and len(row["cells"]) == 4
            and row["cells"][0] == inv.id
            and row["cells"][2] == inv.currency
        ):
            good += 1
    extra = max(0, len(firsts) - len(want))
    if not want and not extra:
        return absent("no stored invoice of the upstream to show")
    return fraction(good, len(want) + extra, "rows in order with id and currency cells")


@suite.check(
    "ui.escaped",
    tier="ui",
    root="app.health",
    harm="markup injection: customer names are interpreted as HTML instead of shown as text",
)
def ui_escaped(ev: Evidence) -> Outcome:
    rows, why = _rows(ev)
    if rows is None:
        return why  # type: ignore[return-value]
    expected = ev.dataset.by_id
    marked = [
        r for r in rows if r.get("id") in expected and expected[r["id"]].customer in MARKUP_NAMES
    ]
    if not marked:
        return absent("no row with a markup name on the page")
    ok = [r for r in marked if len(r["cells"]) >= 2 and r["cells"][1] == expected[r["id"]].customer]
    return fraction(len(ok), len(marked), "markup names shown literally")


@suite.check(
    "ui.console_clean",
    tier="ui",
    root="app.health",
    harm="broken page script: errors in the browser console",
)
def ui_console_clean(ev: Evidence) -> Outcome:
    if ev.probe is None:
        return unavailable(f"no browser probe: {ev.probe_error}")
    if ev.probe.error:
        return absent(f"the page did not load: {ev.probe.error}")
    errors = ev.probe.console_errors
    return graded(0.0 if errors else 1.0, f"{len(errors)} console errors: {errors[:2]}")


def _why(ev: Evidence, fetched: Fetched | None) -> str:
    if ev.respawn_error:
        return f"restart failed: {ev.respawn_error}"
    if fetched is None:
        return "not fetched"
    return fetched.error or f"HTTP {fetched.status}"
