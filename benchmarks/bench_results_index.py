"""Reading results at scale: the run index against reading every folder.

Writes N synthetic finished runs (default 100,000: 40 scenarios, 10 entrants, 100 jobs)
with the three files a report reads, then measures, interleaved over several rounds:

- ``scan``: the old path, ``collect(root, use_index=False)`` (rglob + three JSON files
  per run), for everything and for one job;
- ``scan resume``: the job ledger's old ``scan_folders`` (every run.json) against
  ``scan_results`` through the index (the job's rows only);
- ``index``: ``collect(root)`` through ``<results>/.runs-index.sqlite`` once it exists
  (each read still brings it in step: one stat per scenario folder, three per run shown);
- the one-time cold build of the index.

Prints medians and the ratio old / index for the whole root and for ``--job``.

    python benchmarks/bench_results_index.py [--runs 100000] [--rounds 3] [--dir /dev/shm]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from harness.job.ledger import scan_folders, scan_results
from harness.report.collect import Filters, collect
from harness.results.index import INDEX_FILE

SCENARIOS = 40
ENTRANTS = 10
JOBS = 100


def write_runs(root: Path, n: int) -> None:
    """``n`` finished runs under ``root`` spread over scenarios, entrants and jobs."""
    for i in range(n):
        scenario = f"py/s{i % SCENARIOS:02d}"
        agent = f"agent{(i // SCENARIOS) % ENTRANTS}"
        run_id = f"2030{i:08d}-{agent}"
        run = root / scenario / run_id
        (run / "verify").mkdir(parents=True)
        meta = {
            "run_id": run_id,
            "scenario": scenario,
            "scenario_sha": f"sha-{scenario}",
            "agent": agent,
            "agent_version": "1.0",
            "model": "m",
            "job": f"job-{i % JOBS:03d}",
            "trial_key": f"k{i}",
            "started_at": f"2030-01-01T00:{(i // 60) % 60:02d}:{i % 60:02d}",
        }
        (run / "run.json").write_text(json.dumps(meta))
        phases = [{"name": "agent", "duration_s": 3.0}, {"name": "verify", "duration_s": 1.0}]
        progress = {"phases": phases, "usage": {"prompt_tokens": 1000 + i % 7}}
        (run / "progress.json").write_text(json.dumps(progress))
        score = ((i * 7919) % 100) / 100
        report = {
            "run_id": run_id,
            "scenario": scenario,
            "agent": agent,
            "agent_version": "1.0",
            "model": "m",
            "outcome": "success" if score > 0.5 else "failed",
            "success": score > 0.5,
            "score": score,
            "partial_score": score,
            "era": "tests@1.0.0",
            "tests": [{"name": f"t{j}", "passed": True, "output": "ok " * 40} for j in range(8)],
        }
        (run / "verify" / "report.json").write_text(json.dumps(report))


def timed(fn: Callable[[], int]) -> tuple[float, int]:
    began = time.perf_counter()
    count = fn()
    return time.perf_counter() - began, count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=None, help="where to write (e.g. /dev/shm)")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-index-", dir=args.dir))
    root = base / "results"
    try:
        began = time.perf_counter()
        write_runs(root, args.runs)
        print(f"wrote {args.runs:,} runs in {time.perf_counter() - began:.1f} s under {root}")
        build, count = timed(lambda: len(collect(root)))
        assert count == args.runs, count
        size = (root / INDEX_FILE).stat().st_size / 1e6
        print(f"cold index build (with the first read): {build:.2f} s, index {size:.1f} MB")
        job = Filters(job="job-007")
        cases: dict[str, Callable[[], int]] = {
            "scan all": lambda: len(collect(root, use_index=False)),
            "index all": lambda: len(collect(root)),
            "scan --job": lambda: len(collect(root, job, use_index=False)),
            "index --job": lambda: len(collect(root, job)),
            "scan resume": lambda: sum(map(len, scan_folders(root, "job-007").values())),
            "index resume": lambda: sum(map(len, scan_results(root, "job-007").values())),
        }
        times: dict[str, list[float]] = {k: [] for k in cases}
        counts: dict[str, int] = {}
        for _ in range(args.rounds):  # interleaved: load changes hit both paths alike
            for name, fn in cases.items():
                seconds, counts[name] = timed(fn)
                times[name].append(seconds)
        assert counts["scan all"] == counts["index all"] == args.runs
        assert counts["scan --job"] == counts["index --job"] == args.runs // JOBS
        assert counts["scan resume"] == counts["index resume"] == args.runs // JOBS
        med = {k: statistics.median(v) for k, v in times.items()}
        for name, value in med.items():
            print(f"{name:12s} median {value:8.3f} s  ({counts[name]:,} runs)")
        print(f"ratio scan/index, whole root: {med['scan all'] / med['index all']:.1f}x")
        print(f"ratio scan/index, --job:      {med['scan --job'] / med['index --job']:.1f}x")
        print(f"ratio scan/index, resume:     {med['scan resume'] / med['index resume']:.1f}x")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
