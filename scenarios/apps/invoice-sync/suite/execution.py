"""The scripted execution: four lives of the app against the mock, and ``context()``."""

import contextlib
import os
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from harness.appkit.fetch import get, poll
from harness.appkit.jail import Jail
from harness.appkit.mockdep import RESOURCE
from harness.appkit.procs import AppNotHealthy, AppProcess
from harness.scoring.era import load_thresholds

from .evidence import Evidence
from .gate import WriteGate
from .grader import HERE
from .listeners import listen_addresses
from .schedule import startup_kill_points, write_kill_page
from .upstream import Upstream
from .watches import (
    HEALTH_AFTER_S,
    HEALTH_PROMPT_S,
    HealthWatch,
    PageWatch,
    StatusWatch,
    WriteTrap,
)

EMPTY_LOOK_WAIT_S = 4.0  # the longest the run waits for the browser's look at the empty page


BROWSER_UP_S = 30.0  # the longest the run waits for the browser before it starts the app


SETTLE_S = 1.0  # after the offline restart: time a re-syncing app gets to show itself


STARTUP_WRITES_S = 1.0  # after a start answers /health: writes still count as start-up


DATA_DIR = "nested/deeper/invoicesync"  # --data under {data}: no parent exists yet


class Stall:
    """The waits for the sync's progress. One that runs its whole budget while the app
    asks the upstream nothing leaves the sync stalled: an app silent for a whole sync
    budget is not syncing, so each later wait for its progress looks once and ends (an
    app that never syncs cost three full budgets before, four minutes a scoring)."""

    def __init__(self, mock: Upstream) -> None:
        self.mock = mock
        self.since: str | None = None  # where the stall was seen

    def asks(self) -> int:
        return sum(1 for r in self.mock.records() if "method" in r)

    def wait(self, until: Callable[[float], bool], budget: float, where: str) -> bool:
        """``until(budget)``'s answer (``until(0)``'s once stalled)."""
        if self.since is not None:
            return until(0.0)
        asks = self.asks()
        if until(budget):
            return True
        if self.asks() == asks:
            self.since = f"{where}: no upstream request in {budget:g} s"
        return False


def _resume_from(up: Upstream) -> tuple[int, ...]:
    """Where a right restart continues, judged at the SIGKILL.

    Normally the app dies waiting on the held page, which it must fetch first. When the
    hold ended before the kill (a boot poll that waited on the hold), the app went on: it
    continues from the last page it asked for, or, when that page was answered, possibly
    from the next (it may have stored it before the kill, or not).
    """
    if up.held_until is None:
        return (up.dataset.faults.kill_page,)
    asked = [r for r in up.records() if r.get("path") == RESOURCE and r.get("page") is not None]
    if not asked:
        return (up.dataset.faults.kill_page,)
    last = asked[-1]
    if last["status"] == 200 and last["page"] + 1 < len(up.dataset.pages):
        return (last["page"], last["page"] + 1)
    return (last["page"],)


def state_of(app: AppProcess) -> Any:
    answer = get(app.url("/api/status"), timeout=5.0).json()
    return answer if isinstance(answer, dict) else None


def _start(mock: Upstream, app: AppProcess, look: Callable[[], None] | None = None) -> None:
    """Start the app (``look`` given: its first start) or restart it, its first page ask
    held at the mock's gate until the start is seen (/health answered), then until
    ``look`` (the browser at the still empty page) is done."""
    served, looked = mock.gate()
    try:
        if look is not None:
            app.start()
        else:
            app.respawn()
        served.set()
        if look is not None:
            look()
    finally:
        served.set()
        looked.set()


def _first_life(
    ev: Evidence,
    mock: Upstream,
    app: AppProcess,
    budgets: dict[str, float],
    look: Callable[[], None],
    stall: Stall,
) -> bool:
    """Start the app (its first page held until it serves and the browser saw the empty
    page), ask /health while the kill page is held, SIGKILL it there; False when the app
    never became healthy."""
    with HealthWatch(mock, app, budgets["start"] + budgets["sync"]) as watch:
        try:
            _start(mock, app, look)
        except AppNotHealthy as exc:
            ev.health_detail = f"{exc}; stderr: {exc.log_tail[-300:]}"
            return False
        ev.healthy, ev.health_detail = True, f"GET /health answered on port {app.port}"
        ev.listeners.append(listen_addresses(app.port))
        if stall.wait(mock.kill_point.wait, budgets["sync"], "first life"):
            if mock.held_until is None:  # the sync has been waiting on the upstream a while
                time.sleep(HEALTH_AFTER_S)
                ev.health_during_sync = get(app.url("/health"), timeout=HEALTH_PROMPT_S)
            # else the hold is over already (the boot poll waited on it): kill at once
            ev.health_watch = watch.stop()
            app.kill_group(signal.SIGKILL)
            ev.killed_mid_sync = True
            ev.resume_from = _resume_from(mock)
    return True


def _write_kill(
    ev: Evidence, mock: Upstream, app: AppProcess, trap: WriteTrap, budget: float, stall: Stall
) -> None:
    """Second life: SIGKILL at the first write after the drawn page's answer, then
    restart with the upstream down and read what survived."""

    def past() -> bool:  # the trap fired, or the app went on without writing a file
        later = [r for r in mock.records() if r.get("phase") == "after-respawn"]
        return trap.fired.is_set() or any((r.get("page") or 0) > ev.write_kill_page for r in later)

    stall.wait(partial(poll, past), budget, "second life")
    if not trap.fired.wait(0.5):
        ev.write_kill_detail = f"no file write after page {ev.write_kill_page} was answered"
        return
    app.kill_group(signal.SIGKILL)  # reap the group the trap killed
    ev.write_killed, ev.write_kill_detail = True, trap.detail
    mock.mark_phase("write-kill-down")
    mock.set_offline(True)
    app.respawn()
    ev.survived_write_kill = get(app.url("/api/invoices"))
    mock.set_offline(False)
    mock.mark_phase("after-write-kill")


def _run(
    ev: Evidence,
    mock: Upstream,
    app: AppProcess,
    data: Path,
    budgets: dict[str, float],
    seed: str,
) -> None:
    """The scripted execution; fills ``ev`` step by step and stops at the first dead end."""
    with (
        PageWatch(app, ev.evidence_dir) as page_watch,
        StatusWatch(mock, app) as status,
        WriteTrap(data, app) as trap,
    ):

        def arm(page: int, phase: str) -> None:
            if page == ev.write_kill_page and phase == "after-respawn":
                trap.arm()

        def look(page: int, failed: int) -> None:
            if failed == mock.ui_at:
                page_watch.sample()

        mock.on_answer, mock.on_503 = arm, look
        stall = Stall(mock)
        try:
            # the browser up before the app starts: its look at the empty page is quick
            page_watch.ready.wait(BROWSER_UP_S)
            empty_look = partial(page_watch.look_empty, EMPTY_LOOK_WAIT_S)
            if not _first_life(ev, mock, app, budgets, empty_look, stall):
                return
            status.life += 1
            mock.release()
            mock.mark_phase("after-respawn")
            if ev.killed_mid_sync:
                _start(mock, app)
            status.life += 1
            _write_kill(ev, mock, app, trap, budgets["sync"], stall)
            status.life += 1
        except AppNotHealthy as exc:
            ev.respawn_error = str(exc)
            return
        finally:
            mock.on_answer = None
        page_watch.go()

        def finished() -> bool:
            state = state_of(app)
            return bool(state) and state.get("state") in ("done", "failed")

        stall.wait(partial(poll, finished), budgets["sync"], "after the write kill")
        ev.stalled = stall.since
        ev.status = state_of(app)
        ev.listing = get(app.url("/api/invoices"))
        ev.page = get(app.url("/"))
        page_watch.finish()
        ev.probe, ev.probe_error = page_watch.probe, page_watch.error
        ev.empty_look = page_watch.empty_looked
        ev.ui_during_sync = page_watch.during
        ev.shown, ev.shapes = page_watch.shown.values, page_watch.shown.shapes
        ev.structure = page_watch.structure
        ev.timings["browser_s"] = page_watch.seconds
        status.life += 1
        mock.mark_phase("offline")
        mock.set_offline(True)
        try:
            app.respawn()
        except AppNotHealthy as exc:
            ev.restore_error = str(exc)
            return
        finally:
            ev.samples, ev.health_samples = status.samples, status.health
        ev.status_after_restart = state_of(app)
        before = len(ev.ids(ev.listing))
        poll(
            lambda: len(ev.ids(get(app.url("/api/invoices")))) >= before,
            budgets["restore"],
        )
        ev.restored = get(app.url("/api/invoices"))
        ev.listeners.append(listen_addresses(app.port))
        time.sleep(SETTLE_S)
        status.life += 1
        _startup_kill(ev, mock, app, data, budgets["restore"], seed)
        status.life += 1
        _fresh_dir(ev, mock, app, data)
    ev.samples, ev.health_samples = status.samples, status.health


def _startup_kill(
    ev: Evidence, mock: Upstream, app: AppProcess, data: Path, budget: float, seed: str
) -> None:
    """SIGKILLs while the app starts (the sync complete, the upstream down), each exactly
    after one of the start's file writes, each followed by a plain restart that must
    serve every invoice, in order, and still read "done". Whatever a start does to its
    files (a migration, a rewrite, a repair, a flag cleared and set again) must survive a
    kill between any two of its writes. A first start only counts its writes; the kills
    fall after the first few and after one drawn in each slice of the rest (``schedule``),
    and stop at the first start that does not reach its write."""
    mock.mark_phase("startup-kill")
    want = len(ev.ids(ev.restored))
    counted = _gated_start(app, data, 0)
    points = startup_kill_points(seed, counted.writes)
    how = "" if counted.gated else f"; kills asynchronous ({counted.reason})"
    ev.startup_kill_detail = f"a start made {counted.writes} file writes{how}"
    for nth in points:
        gate = _gated_start(app, data, nth)
        if not gate.fired.is_set():
            ev.startup_kill_detail += f"; a start made fewer than {nth}: no more kills"
            return
        try:
            app.respawn()
        except AppNotHealthy as exc:
            ev.startup_kill_error = f"no restart after a kill after start-up write {nth}: {exc}"
            return
        poll(lambda: len(ev.ids(get(app.url("/api/invoices")))) >= want, budget)
        ev.startup_kills.append((f"write {nth} ({gate.detail})", get(app.url("/api/invoices"))))
        ev.startup_kill_states.append(state_of(app))


def _gated_start(app: AppProcess, data: Path, nth: int) -> WriteGate:
    """A start whose file writes wait on the scorer (``gate``): killed right after its
    ``nth`` write, or (``nth`` 0 or not reached) STARTUP_WRITES_S after it answers."""
    jail = app.jail
    if jail is None:
        raise RuntimeError("the app runs unconfined: no gate to put between it and its files")
    plain = jail.wrap

    def kill() -> None:
        with contextlib.suppress(ProcessLookupError):
            if app.pid:
                os.killpg(app.pid, signal.SIGKILL)

    app.kill_group(signal.SIGKILL)
    with (
        tempfile.TemporaryDirectory(prefix="harness-gate-") as tmp,
        WriteGate(data, Path(tmp) / "gate", kill, nth) as gate,
    ):
        # this start only: the kit has no per-start wrapper yet, so the jail's is shadowed
        jail.wrap = lambda argv: gate.wrap(plain(argv))  # type: ignore[method-assign]
        try:
            with contextlib.suppress(AppNotHealthy):  # killed while starting: expected
                app.respawn()
        finally:
            del jail.wrap
        gate.fired.wait(STARTUP_WRITES_S)
        app.kill_group(signal.SIGKILL)  # the gate ends with this start
    return gate


def _fresh_dir(ev: Evidence, mock: Upstream, app: AppProcess, data: Path) -> None:
    """Last life: --data moved away and the app restarted (same arguments, upstream still
    down), so that it finds an empty folder: nothing durable lives anywhere else, so it
    must not say the sync is done (a flag kept outside --data says so)."""
    mock.mark_phase("fresh-dir")
    app.kill_group(signal.SIGKILL)
    folder = data / DATA_DIR
    try:
        folder.rename(folder.with_name(folder.name + ".before"))
    except OSError as exc:
        ev.fresh_dir_error = f"could not move --data away: {exc}"
        return
    try:
        app.respawn()
    except AppNotHealthy as exc:
        ev.fresh_dir_error = f"no restart on an empty --data: {exc}"
        return
    ev.fresh_dir_status = state_of(app)


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
        mock = Upstream(seed, evidence_dir / "trace.jsonl")
        with mock:
            argv = [
                jail.python,
                "-m",
                "invoicesync",
                "--port",
                "{port}",
                "--data",
                "{data}/" + DATA_DIR,  # not there yet, nor its parents: the app creates it
                "--upstream",
                mock.base_url,  # with a drawn path: the SPEC's GET {URL}/v1/invoices
            ]
            ev = Evidence(dataset=mock.dataset, evidence_dir=evidence_dir)
            ev.backoff_run, ev.retry_afters = mock.run, mock.retry_afters
            ev.slow_s, ev.slow_503_s = mock.slow_delay, mock.slow_503_s
            ev.write_kill_page = write_kill_page(seed, mock.dataset.faults)
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
                _run(ev, mock, app, jail.data, budgets, seed)
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
