"""Executed-app scoring time: apps/invoice-sync per trial, against the app's own run time.

For the reference tree and the do-nothing (nop) tree, runs the real verification path
(``--sandbox local``: a copy of the workspace, the suite, the confined app, chromium;
``--docker``: the scorer container as well) once per seed and prints, per trial, the
total scoring wall time beside the time the app itself had to run in that same run
(from its first start to its last stop, the waits the scenario imposes: held page,
backoff, Retry-After, slow page, respawns) and the browser probe. The budget is 90 s per
trial on 2 cores.

    python benchmarks/bench_app_scoring.py [--seeds 2] [--docker] [--json out.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.agents.builtin import OracleAgent  # noqa: E402
from harness.appkit.slot import scoring_slot  # noqa: E402
from harness.config.settings import Settings  # noqa: E402
from harness.scenario.load import load_scenario  # noqa: E402
from harness.trial.workspace import read_state, setup  # noqa: E402
from harness.verify.request import make_request  # noqa: E402

BUDGET_S = 90.0
NAME = "apps/invoice-sync"
_TIMING = re.compile(
    r"execution ([\d.]+) s, of which the app ran ([\d.]+) s \(browser probe ([\d.None]+)"
)


def _trial(tree: str, seed: str, docker: bool, tmp: Path) -> dict[str, object]:
    settings = dataclasses.replace(
        Settings.from_env(tmp),
        scenario_root=ROOT / "scenarios",
        results=tmp / "results",
        workspace=tmp / f"ws-{tree}-{seed}",
    )
    loaded = load_scenario(NAME, settings.scenario_root)
    ws = setup(loaded, settings, seed)
    if tree == "reference":
        OracleAgent.apply(loaded, ws)
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
    rows = {r["check"]: r for r in (outcome.score or {}).get("rows", [])}
    found = _TIMING.search(rows.get("run.timing", {}).get("detail", ""))
    app_s = float(found[2]) if found else None
    browser = found[3] if found else None
    return {
        "tree": tree,
        "seed": seed,
        "sandbox": "docker" if docker else "local",
        "scoring_s": round(total, 2),
        "app_run_s": app_s,
        "browser_s": None if browser in (None, "None") else float(browser),
        "overhead_s": None if app_s is None else round(total - app_s, 2),
        "final": (outcome.score or {}).get("final"),
        "error": outcome.error,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--docker", action="store_true", help="also through the scorer container")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    seeds = [f"{0xBE0C000000000000 + i:016x}" for i in range(args.seeds)]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-app-") as tmp:
        for docker in [False, True] if args.docker else [False]:
            for tree in ("reference", "nop"):
                for seed in seeds:
                    row = _trial(tree, seed, docker, Path(tmp))
                    rows.append(row)
                    over = "" if row["scoring_s"] <= BUDGET_S else "  OVER BUDGET"  # type: ignore[operator]
                    print(
                        f"{row['sandbox']:<6} {tree:<9} seed {seed}"
                        f"  scoring {row['scoring_s']:>6} s"
                        f"  app ran {row['app_run_s']} s  browser {row['browser_s']} s"
                        f"  overhead {row['overhead_s']} s  final {row['final']}{over}",
                        flush=True,
                    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0 if all(r["scoring_s"] <= BUDGET_S for r in rows) else 1  # type: ignore[operator]


if __name__ == "__main__":
    sys.exit(main())
