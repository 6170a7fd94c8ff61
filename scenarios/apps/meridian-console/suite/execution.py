"""The one execution of apps/meridian-console: ``context()`` starts the seeded vendor, the
two relays and both services (confined), runs ``script.run`` and collects the evidence."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.appkit.jail import Jail
from harness.appkit.procs import AppProcess
from harness.scoring.era import load_thresholds

from . import script
from .drive import Evidence
from .grader import HERE
from .relay import Relay
from .vendor import Vendor

SQLITE_SIDECARS = ("-journal", "-wal", "-shm")  # files SQLite itself keeps beside a database


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
        with Vendor(seed, evidence_dir / "trace.jsonl") as vendor:
            ledger_box: list[AppProcess] = []
            notifier_box: list[AppProcess] = []

            def target(box: list[AppProcess]) -> Any:
                return lambda: box[0].url() if box and box[0].port else None

            with (
                Relay(
                    "notifier->ledger", target(ledger_box), evidence_dir / "relay-n2l.jsonl"
                ) as n2l,
                Relay(
                    "ledger->notifier", target(notifier_box), evidence_dir / "relay-l2n.jsonl"
                ) as l2n,
            ):
                tokens = jail.home / "tokens.json"
                tokens.write_text(json.dumps(vendor.dataset.tokens), encoding="utf-8")
                tokens.chmod(0o644)
                ev = Evidence(dataset=vendor.dataset, evidence_dir=evidence_dir)
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
                    script.run(ev, vendor, n2l, l2n, ledger, notifier, budgets)
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
