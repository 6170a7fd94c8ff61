"""Executed-app scoring time: apps/meridian-ledger per trial, against the app's own run time.

For the reference tree and the LOW tree (reference + ``low.patch``: boots, never syncs),
runs the real verification path (``--sandbox local``: a copy of the workspace, the
suite, the confined app, the vendor mock, chromium; ``--docker``: the scorer container as
well) once per seed and prints, per trial, the total scoring wall time beside the time
the app itself ran in that same run (first start to last stop: held page, retries,
Retry-After, slow page, three SIGKILLs and respawns, browser journeys). Budget: 240 s
per trial on 2 cores (aim: 60-90 s).

    python benchmarks/bench_meridian_scoring.py [--seeds 1] [--docker] [--json out.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.agents.builtin import OracleAgent  # noqa: E402
from harness.appkit.slot import scoring_slot  # noqa: E402
from harness.config.settings import Settings  # noqa: E402
from harness.scenario.load import load_scenario  # noqa: E402
from harness.trial.workspace import read_state, setup  # noqa: E402
from harness.util.git import apply_patch  # noqa: E402
from harness.verify.request import make_request  # noqa: E402

BUDGET_S = 240.0
NAME = "apps/meridian-ledger"
_TIMING = re.compile(
    r"execution ([\d.]+) s, of which the app ran ([\d.]+) s .*browser ([\d.None]+) s"
)


def ledger_timings(detail: str) -> tuple[float | None, object]:
    """(app run seconds, browser seconds) from meridian-ledger's ``run.timing`` detail."""
    found = _TIMING.search(detail)
    return (float(found[2]), found[3]) if found else (None, None)


Timings = Callable[[str], tuple[float | None, object]]


def _trial(
    tree: str, seed: str, docker: bool, tmp: Path, name: str, timings: Timings
) -> dict[str, object]:
    settings = dataclasses.replace(
        Settings.from_env(tmp),
        scenario_root=ROOT / "scenarios",
        results=tmp / "results",
        workspace=tmp / f"ws-{tree}-{seed}-{int(docker)}",
    )
    loaded = load_scenario(name, settings.scenario_root)
    ws = setup(loaded, settings, seed)
    OracleAgent.apply(loaded, ws)
    if tree == "low":
        low = loaded.directory / "low.patch"
        apply_patch(low, ws, "low patch", file=low, field="(patch)", fix="regenerate it")
    request = make_request(loaded, ws, read_state(ws, loaded).baseline, seed)
    start = time.monotonic()
    with scoring_slot(True):
        if docker:
            from harness.backends.docker.verify import verify_in_docker

            outcome, _ = verify_in_docker(ws, request, labels={"harness.phase": "bench"})
        else:
            from harness.backends.local.verify import verify_local

            request = request.model_copy(update={"evidence_dir": str(tmp / f"ev-{tree}-{seed}")})
            outcome = verify_local(ws, request)
    total = time.monotonic() - start
    shutil.rmtree(ws, ignore_errors=True)
    rows = {r["check"]: r for r in (outcome.score or {}).get("rows", [])}
    app_s, browser = timings(rows.get("run.timing", {}).get("detail", "") or "")
    return {
        "tree": tree,
        "seed": seed,
        "sandbox": "docker" if docker else "local",
        "scoring_s": round(total, 2),
        "app_run_s": app_s,
        "browser_s": None if browser in (None, "None") else float(browser),
        "overhead_s": None if app_s is None else round(total - app_s, 2),
        "final": (outcome.score or {}).get("final"),
        "success": outcome.success,
        "error": outcome.error,
    }


def main(
    name: str = NAME,
    seed_base: int = 0x3E71000000000000,
    timings: Timings = ledger_timings,
    doc: str | None = __doc__,
) -> int:
    """Score the reference and LOW trees of ``name`` once per seed and print each run."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--docker", action="store_true", help="also through the scorer container")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    seeds = [f"{seed_base + i:016x}" for i in range(args.seeds)]
    rows = []
    prefix = "bench-" + name.rsplit("/", 1)[-1] + "-"
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        for docker in [False, True] if args.docker else [False]:
            for tree in ("reference", "low"):
                for seed in seeds:
                    row = _trial(tree, seed, docker, Path(tmp), name, timings)
                    rows.append(row)
                    over = "" if row["scoring_s"] <= BUDGET_S else "  OVER BUDGET"  # type: ignore[operator]
                    print(
                        f"{row['sandbox']:<6} {tree:<9} seed {seed}"
                        f"  scoring {row['scoring_s']:>6} s"
                        f"  app ran {row['app_run_s']} s  browser {row['browser_s']} s"
                        f"  overhead {row['overhead_s']} s  final {row['final']}"
                        f"  success {row['success']}{over}",
                        flush=True,
                    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0 if all(r["scoring_s"] <= BUDGET_S for r in rows) else 1  # type: ignore[operator]


if __name__ == "__main__":
    sys.exit(main())
