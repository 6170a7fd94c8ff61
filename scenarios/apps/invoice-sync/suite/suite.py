"""Scorer of apps/invoice-sync: execute the built app against the seeded mock upstream.

``context()`` runs the whole scenario once and collects evidence; the checks only read
it. The run: start the mock and the app; SIGKILL the app while it waits on the held
(slow) page; respawn it and let it finish; read its API and page (HTTP and a real
browser); SIGKILL again, take the upstream offline, respawn, and read what survived.
"""


import contextlib
import signal
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.scoring import Outcome, Suite, absent, fraction, graded, unavailable
from harness.scoring.appkit.browser import BrowserUnavailable, PageProbe, probe_page
from harness.scoring.appkit.fetch import Fetched, TableRow, get, poll, tbody_rows
from harness.scoring.appkit.fixtures import Dataset
from harness.scoring.appkit.mockdep import MockUpstream
from harness.scoring.appkit.procs import AppNotHealthy, AppProcess

HERE = Path(__file__).resolve().parent
START_BUDGET = 10.0  # seconds for the app to answer /health
SYNC_BUDGET = 20.0  # seconds for a sync to reach its slow page / to finish
RESTORE_BUDGET = 5.0  # seconds for a respawned app to serve what it had

suite = Suite(
    name="invoice-sync",
    version="1.0.0",
    tier_weights={"core": 0.6, "resilience": 0.3, "ui": 0.1},
    class_floors={"dead": 0.0, "money": 0.2, "data": 0.3},
    severity_ranking=("dead", "money", "data", "core", "resilience", "ui"),
    thresholds=HERE / "thresholds.yml",
)


@dataclass
class Evidence:
    """Everything one execution of the app produced, for the checks to grade."""

    dataset: Dataset
    evidence_dir: Path
    healthy: bool = False
    health_detail: str = ""
    killed_mid_sync: bool = False
    respawn_error: str | None = None
    sync_state: str | None = None
    listing: Fetched | None = None
    page: Fetched | None = None
    probe: PageProbe | None = None
    probe_error: str | None = None
    restore_error: str | None = None
    restored: Fetched | None = None
    trace: list[dict[str, Any]] = field(default_factory=list)

    def invoices(self, fetched: Fetched | None) -> list[dict[str, Any]] | None:
        """The JSON invoice list of a fetch, or None when it is not one."""
        data = fetched.json() if fetched is not None and fetched.ok else None
        if not isinstance(data, list) or not all(isinstance(i, dict) for i in data):
            return None
        return data

    def ids(self, fetched: Fetched | None) -> list[str]:
        return [str(i.get("id")) for i in self.invoices(fetched) or []]

    def table(self) -> list[TableRow]:
        return tbody_rows(self.page.text) if self.page is not None and self.page.ok else []

    def requests(self, phase: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.trace if "method" in r and (phase is None or r["phase"] == phase)]


def _state(app: AppProcess) -> str | None:
    answer = get(app.url("/api/status"), timeout=5.0).json()
    return answer.get("state") if isinstance(answer, dict) else None


def _run(ev: Evidence, mock: MockUpstream, app: AppProcess, browser: bool) -> None:
    """The scripted execution; fills ``ev`` step by step and stops at the first dead end."""
    try:
        app.start()
    except AppNotHealthy as exc:
        ev.health_detail = f"{exc}; stderr: {exc.log_tail[-300:]}"
        return
    ev.healthy, ev.health_detail = True, f"GET /health answered on port {app.port}"
    if mock.slow_started.wait(SYNC_BUDGET):
        app.kill_group(signal.SIGKILL)
        ev.killed_mid_sync = True
    mock.release_slow()
    mock.mark_phase("after-respawn")
    try:
        if ev.killed_mid_sync:
            app.respawn()
    except AppNotHealthy as exc:
        ev.respawn_error = str(exc)
        return
    poll(lambda: _state(app) in ("done", "failed"), SYNC_BUDGET)
    ev.sync_state = _state(app)
    ev.listing = get(app.url("/api/invoices"))
    ev.page = get(app.url("/"))
    if browser:
        try:
            ev.probe = probe_page(app.url("/"), ev.evidence_dir, name="invoices")
        except BrowserUnavailable as exc:
            ev.probe_error = str(exc)
    else:
        ev.probe_error = "browser probe not requested"
    mock.mark_phase("offline")
    mock.set_offline(True)
    try:
        app.respawn()
    except AppNotHealthy as exc:
        ev.restore_error = str(exc)
        return
    before = len(ev.ids(ev.listing))
    poll(lambda: len(ev.ids(get(app.url("/api/invoices")))) >= before, RESTORE_BUDGET)
    ev.restored = get(app.url("/api/invoices"))


@contextlib.contextmanager
def context(tree: Path, seed: str, evidence_dir: Path, *, browser: bool = True
            ) -> Iterator[Evidence]:
    """Execute the app in ``tree`` once against the mock seeded by ``seed``."""
    evidence_dir = Path(evidence_dir)
    evidence_dir.mkdir(parents=True, exist_ok=True)
    with MockUpstream(seed, evidence_dir / "trace.jsonl") as mock:
        argv = [sys.executable, "-m", "invoicesync", "--port", "{port}",
                "--data", str(evidence_dir / "data"), "--upstream", mock.url]
        ev = Evidence(dataset=mock.dataset, evidence_dir=evidence_dir)
        with AppProcess(argv, cwd=Path(tree), logs=evidence_dir / "logs", budget=START_BUDGET,
                        env={"PYTHONDONTWRITEBYTECODE": "1"}, name="invoicesync") as app:
            _run(ev, mock, app, browser)
        ev.trace = mock.records()
    yield ev  # app and mock are stopped: the checks read evidence only


# -- checks -------------------------------------------------------------------------------

@suite.check("app.health", critical=True, severity="dead",
             harm="dead flow: the service never starts, so nothing is synced or shown")
def app_health(ev: Evidence) -> Outcome:
    return graded(1.0, ev.health_detail) if ev.healthy else absent(ev.health_detail)


@suite.check("sync.complete", tier="core", root="app.health",
             harm="missing invoices: the copy silently lacks part of the upstream")
def sync_complete(ev: Evidence) -> Outcome:
    if ev.invoices(ev.listing) is None:
        return absent(f"GET /api/invoices gave no invoice list ({_why(ev, ev.listing)})")
    have = set(ev.ids(ev.listing))
    want = [inv.id for inv in ev.dataset.invoices]
    return fraction(sum(i in have for i in want), len(want),
                    f"expected invoices stored (sync state {ev.sync_state})")


@suite.check("sync.no_duplicates", tier="core", root="app.health",
             harm="double counting: an invoice listed twice inflates totals")
def sync_no_duplicates(ev: Evidence) -> Outcome:
    ids = ev.ids(ev.listing)
    if ev.invoices(ev.listing) is None:
        return absent(f"GET /api/invoices gave no invoice list ({_why(ev, ev.listing)})")
    dupes = sorted(i for i, n in Counter(ids).items() if n > 1)
    return fraction(len(set(ids)), len(ids), f"unique entries; duplicated: {dupes[:3]}")


@suite.check("sync.retries_503", tier="resilience", root="app.health",
             harm="fragile sync: one transient upstream error loses a page")
def sync_retries_503(ev: Evidence) -> Outcome:
    page = ev.dataset.faults.unavailable_page
    asks = [r for r in ev.requests() if r.get("page") == page and r["phase"] != "offline"]
    failed = [r for r in asks if r["status"] == 503]
    if not failed:
        return graded(0.0, f"page {page} (which answers 503 once) was never requested")
    retried = any(r["status"] == 200 and r["seq"] > failed[0]["seq"] for r in asks)
    return graded(1.0 if retried else 0.0,
                  f"page {page}: 503 at seq {failed[0]['seq']}, retried: {retried}")


@suite.check("sync.resumes", tier="resilience", root="app.health",
             harm="wasteful restart: a crash makes the service fetch everything again")
def sync_resumes(ev: Evidence) -> Outcome:
    slow = ev.dataset.faults.slow_page
    if not ev.killed_mid_sync:
        return graded(0.0, f"the sync never reached page {slow}, where it is killed")
    if ev.respawn_error:
        return graded(0.0, f"no restart after SIGKILL: {ev.respawn_error}")
    after = [r for r in ev.requests("after-respawn") if r["status"] == 200]
    if not any(r.get("page") == slow for r in after):
        return graded(0.0, f"after the restart page {slow} was never fetched")
    again = {r["page"] for r in after if r.get("page") is not None and r["page"] < slow}
    return fraction(slow - len(again), slow,
                    f"pages stored before SIGKILL not fetched again (again: {sorted(again)})")


@suite.check("money.exponent", critical=True, severity="money", root="app.health",
             harm="wrong money: amounts shown with the wrong number of decimals")
def money_exponent(ev: Evidence) -> Outcome:
    expected = ev.dataset.by_id
    rows = [r for r in ev.table() if r.data_id in expected and len(r.cells) >= 4]
    if not rows:
        return absent(f"no invoice rows with 4 cells in GET / ({_why(ev, ev.page)})")
    bad = [r for r in rows if r.cells[3] != expected[str(r.data_id)].display_amount]
    sample = [f"{r.cells[2]} {r.cells[3]}!={expected[str(r.data_id)].display_amount}"
              for r in bad[:3]]
    return fraction(len(rows) - len(bad), len(rows), f"amounts rendered right; wrong: {sample}")


@suite.check("durability.after_kill", critical=True, severity="data", root="app.health",
             harm="lost data: invoices stored before a SIGKILL are gone after the restart")
def durability_after_kill(ev: Evidence) -> Outcome:
    before = set(ev.ids(ev.listing))
    if not before:
        return unavailable("nothing was stored before the SIGKILL")
    if ev.restore_error:
        return graded(0.0, f"no restart after SIGKILL: {ev.restore_error}")
    after = set(ev.ids(ev.restored))
    return fraction(len(before & after), len(before),
                    "invoices still served after SIGKILL with the upstream offline")


@suite.check("ui.rows_visible", tier="ui", root="app.health",
             harm="hidden invoices: the page does not show every stored invoice")
def ui_rows_visible(ev: Evidence) -> Outcome:
    if ev.probe is None:
        return unavailable(f"no browser probe: {ev.probe_error}")
    if ev.probe.error:
        return absent(f"the page did not load: {ev.probe.error}")
    stored = set(ev.ids(ev.listing))
    seen = {r.get("id") for r in ev.probe.rows}
    return fraction(len(stored & seen), len(stored),
                    f"stored invoices visible ({ev.probe.visible_rows} of "
                    f"{ev.probe.total_rows} rows visible)", ev.probe.screenshot)


@suite.check("ui.console_clean", tier="ui", root="app.health",
             harm="broken page script: errors in the browser console")
def ui_console_clean(ev: Evidence) -> Outcome:
    if ev.probe is None:
        return unavailable(f"no browser probe: {ev.probe_error}")
    if ev.probe.error:
        return absent(f"the page did not load: {ev.probe.error}")
    errors = ev.probe.console_errors
    return graded(1.0 / (1 + len(errors)), f"{len(errors)} console errors: {errors[:2]}")


def _why(ev: Evidence, fetched: Fetched | None) -> str:
    if ev.respawn_error:
        return f"restart failed: {ev.respawn_error}"
    if fetched is None:
        return "not fetched"
    return fetched.error or f"HTTP {fetched.status}"
