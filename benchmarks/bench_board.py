"""`harness board` and the resume of a complete job at scale, each against its anchor.

Writes N synthetic finished runs (default 100,000: 40 scenarios, 10 entrants), all
trials of one complete job (its ledger: one entry and one lock file per trial), then,
each step in a child process (wall time, and peak RSS from ``getrusage`` in the child):

- ``index``: the first read of the root (the run index built);
- ``board cold``: the first board (no board folder yet);
- ``board warm`` (nothing changed) interleaved with its anchor ``board full``, the board
  as it was built before (every page rendered again: its page record removed first),
  and with ``board serial``, a full rebuild with every run page rendered in this one
  process (the anchor of the forked page workers);
- ``board +job``: after adding one job of N/100 runs;
- ``resume 1st``: ``JobRunner.prepare()`` of the complete job the first time (its ledger
  cache not written yet: every ledger file read once);
- ``resume`` (``prepare()`` again: the complete job's signature holds, no trial looked
  at), interleaved with ``resume full`` (its signature removed first: every trial
  classified through the run index and the ledger cache) and its anchor ``resume old``,
  an older ``prepare()`` kept here (every trial's lock and ledger file, whole index records).

``--no-board`` runs the index and resume steps only.

With ``--small M`` (default N/10) it does the same at M runs first and prints the time
exponent log(t_N / t_M) / log(N / M) of each step (1.0: linear).

    python benchmarks/bench_board.py [--runs 100000] [--small 10000] [--rounds 2]
        [--dir /dev/shm] [--no-board]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.job.plan import Trial  # noqa: E402
from harness.job.resume_signature import RECORD_FILE  # noqa: E402

SCENARIOS = 40
ENTRANTS = 10
JOB = "bench-job"


def trial_of(i: int) -> Trial:
    agent = f"agent{(i // SCENARIOS) % ENTRANTS}"
    return Trial(f"py/s{i % SCENARIOS:02d}", agent, "m", "1", i // (SCENARIOS * ENTRANTS))


def write_runs(results: Path, jobs: Path, first: int, n: int, job: str) -> None:
    """Runs ``first`` .. ``first + n - 1``: result folders and a complete job ledger."""
    trials = jobs / job / "trials"
    trials.mkdir(parents=True, exist_ok=True)
    (jobs / job / "job.json").write_text(json.dumps({"name": job}))
    for i in range(first, first + n):
        trial = trial_of(i)
        run_id = f"2030{i:08d}-{trial.agent}"
        run = results / trial.scenario / run_id
        (run / "verify").mkdir(parents=True)
        meta = {
            "run_id": run_id,
            "scenario": trial.scenario,
            "scenario_sha": f"sha-{trial.scenario}",
            "agent": trial.agent,
            "agent_version": "1.0",
            "model": trial.model,
            "job": job,
            "trial_key": trial.key,
            "seed": trial.seed,
            "started_at": f"2030-01-01T00:{(i // 60) % 60:02d}:{i % 60:02d}",
        }
        (run / "run.json").write_text(json.dumps(meta))
        phases = [{"name": "agent", "duration_s": 3.0}, {"name": "verify", "duration_s": 1.0}]
        progress = {"phases": phases, "usage": {"prompt_tokens": 1000 + i % 7, "calls": 3}}
        (run / "progress.json").write_text(json.dumps(progress))
        score = ((i * 7919) % 100) / 100
        outcome = "success" if score > 0.5 else "failed"
        report = {
            "run_id": run_id,
            "scenario": trial.scenario,
            "agent": trial.agent,
            "agent_version": "1.0",
            "model": trial.model,
            "outcome": outcome,
            "success": score > 0.5,
            "score": score,
            "partial_score": score,
            "era": "tests@1.0.0",
            "tests": [{"name": f"t{j}", "passed": j > 0, "output": "ok " * 40} for j in range(8)],
        }
        (run / "verify" / "report.json").write_text(json.dumps(report))
        (run / "workspace.diff").write_text(f"--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+{i}\n")
        entry = {
            "key": trial.key,
            "scenario": trial.scenario,
            "agent": trial.agent,
            "model": trial.model,
            "seed": trial.seed,
            "repetition": trial.repetition,
            "status": "done",
            "attempts": 1,
            "infra_errors": 0,
            "outcome": outcome,
            "score": score,
            "run_dir": str(run),
            "detail": "",
            "updated_at": "2030-01-01T00:00:00Z",
        }
        (trials / f"{trial.slug}.json").write_text(json.dumps(entry))
        (trials / f"{trial.slug}.lock").touch()


# -- child steps: each prints one JSON line {"s": seconds, "rss_mb": peak} -------------


def _settings(base: Path) -> Any:
    from harness.config.settings import Settings

    return Settings(
        project_root=base, workspace=base / "ws", results=base / "results",
        scenario_root=base / "scenarios", jobs=base / "jobs",
    )  # fmt: skip


def _old_scan(results: Path, job: str) -> dict[str, list[Any]]:
    """The previous ``ledger.scan_results``: whole index records parsed in Python."""
    from harness.job.ledger import RunRecord
    from harness.results.index import indexed_runs

    found: dict[str, list[Any]] = {}
    for row in indexed_runs(results, job, unfinished=True) or []:
        key = row.meta.get("trial_key")
        if row.meta.get("job") != job or not key:
            continue
        outcome = None if row.report is None else str(row.report["outcome"])
        score = None if row.report is None else row.report.get("score")
        found.setdefault(str(key), []).append(RunRecord(row.run_dir, outcome, score))
    for records in found.values():
        records.sort(key=lambda r: r.run_dir.name)
    return found


def _old_classify(entry: Any, records: list[Any], max_interruptions: int) -> Any:
    """The previous ``runner.classify``: a copy of every entry."""
    from harness.job.runner import COMPLETE_OUTCOMES

    entry = entry.model_copy()
    finished = [r for r in records if r.outcome in COMPLETE_OUTCOMES]
    errors = sum(1 for r in records if r.outcome == "error")
    entry.infra_errors = max(entry.infra_errors, errors)
    if finished:
        first = finished[0]
        entry.status, entry.outcome, entry.score = "done", first.outcome, first.score
        entry.run_dir = str(first.run_dir)
    elif entry.infra_errors > max_interruptions:
        entry.status, entry.outcome = "error", "error"
    elif entry.status in {"running", "done"}:
        entry.status = "interrupted"
    return entry


def _old_prepare(runner: Any) -> tuple[list[Trial], list[Any]]:
    """The previous ``JobRunner.prepare`` (the anchor): every trial's lock waited for
    and its ledger file read, the job's index records parsed in Python."""
    from harness.job.ledger import wait_trial_lock

    runner.job.trials_dir.mkdir(parents=True, exist_ok=True)
    for trial in runner.trials:
        wait_trial_lock(runner.job.trial_lock_path(trial))
    found = _old_scan(runner.settings.results, runner.job.name)
    todo, entries = [], []
    for trial in runner.trials:
        before = runner.job.read_entry(trial)
        entry = _old_classify(before, found.get(trial.key, []), runner.max_interruptions)
        if entry != before:
            runner.job.write_entry(trial, entry)
        entries.append(entry)
        if entry.status not in {"done", "error"}:
            todo.append(trial)
    return todo, entries


def child(step: str, base: Path, n: int) -> None:
    import resource

    began = time.perf_counter()
    if step == "index":
        from harness.report.collect import collect

        count = len(collect(base / "results"))
    elif step.startswith("board"):
        from harness.report.board.incremental import MANIFEST
        from harness.report.board.site import build_board
        from harness.report.collect import collect

        if step in {"board full", "board serial"}:
            (base / "board" / MANIFEST).unlink(missing_ok=True)
        if step == "board serial":
            import harness.report.board.site as site

            site.PARALLEL_FROM = sys.maxsize
        runs = collect(base / "results")
        build_board(runs, base / "board")
        count = len(runs)
    else:
        from harness.job.ledger import JobDir
        from harness.job.progress import LiveProgress, Tally
        from harness.job.runner import JobRunner

        trials = [trial_of(i) for i in range(n)]
        progress = LiveProgress(Tally(total=n))
        runner = JobRunner(
            JobDir(base / "jobs" / JOB), None, trials, _settings(base),  # type: ignore[arg-type]
            concurrency=1, max_interruptions=0, progress=progress,
        )  # fmt: skip
        began = time.perf_counter()  # the plan (trials) is not the resume's cost
        if step == "resume old":
            todo, entries = _old_prepare(runner)
            assert all(e.status == "done" for e in entries), "the job is complete"
        else:
            if step == "resume full":  # no job signature: every trial classified
                (runner.job.path / RECORD_FILE).unlink(missing_ok=True)
            todo, entries = runner.prepare()  # the CLI looks at no entry
        assert not todo and len(entries) == n, "the job is complete"
        count = len(entries)
    seconds = time.perf_counter() - began
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"s": seconds, "rss_mb": rss, "count": count}))


def run_child(step: str, base: Path, n: int) -> dict[str, float]:
    began = time.perf_counter()
    out = subprocess.run(
        [sys.executable, __file__, "--child", step, "--base", str(base), "--runs", str(n)],
        check=True, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    doc: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    doc["wall"] = time.perf_counter() - began
    return doc


def measure(
    where: Path | None, n: int, rounds: int, board: bool = True
) -> dict[str, dict[str, float]]:
    """Every step at ``n`` runs; medians of ``rounds`` for the interleaved pairs."""
    base = Path(tempfile.mkdtemp(prefix="bench-board-", dir=where))
    out: dict[str, dict[str, float]] = {}
    try:
        began = time.perf_counter()
        write_runs(base / "results", base / "jobs", 0, n, JOB)
        print(f"\n{n:,} runs written in {time.perf_counter() - began:.1f} s under {base}")
        out["index"] = run_child("index", base, n)
        if board:
            out["board cold"] = run_child("board cold", base, n)
        out["resume 1st"] = run_child("resume 1st", base, n)  # no ledger cache yet
        resume = ("resume", "resume full", "resume old")
        pairs = (("board warm", "board full", "board serial"), resume) if board else (resume,)
        seen: dict[str, list[dict[str, float]]] = {s: [] for p in pairs for s in p}
        for r in range(rounds):  # interleaved, alternating which goes first
            for steps in pairs:
                for step in steps if r % 2 == 0 else reversed(steps):
                    seen[step].append(run_child(step, base, n))
        for step, docs in seen.items():
            out[step] = {k: statistics.median(d[k] for d in docs) for k in docs[0]}
        if board:
            extra = max(1, n // 100)
            write_runs(base / "results", base / "jobs", n, extra, "bench-job-2")
            out["board +job"] = run_child("board +job", base, n + extra)
        for step, doc in out.items():
            print(
                f"{step:12s} {doc['s']:8.2f} s  (child wall {doc['wall']:6.2f} s)  "
                f"peak RSS {doc['rss_mb']:6.0f} MB  {int(doc['count']):,}"
            )
        if board:
            full, warm = out["board full"], out["board warm"]
            print(f"ratio board warm / full rebuild (anchor): {warm['s'] / full['s']:.3f}")
            serial = out["board serial"]["s"]
            print(f"ratio full rebuild / one process (anchor): {full['s'] / serial:.3f}")
        ratio = out["resume"]["s"] / out["resume old"]["s"]
        print(f"ratio resume / previous prepare (anchor): {ratio:.3f}")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=100_000)
    ap.add_argument("--small", type=int, default=None, help="second size (runs/10; 0: none)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--dir", type=Path, default=None, help="where to write (e.g. /dev/shm)")
    ap.add_argument("--no-board", action="store_true", help="the resume steps only")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--base", type=Path, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child, a.base, a.runs)
        return
    print(f"load average {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f}")
    small = a.runs // 10 if a.small is None else a.small
    low = measure(a.dir, small, a.rounds, not a.no_board) if small else None
    high = measure(a.dir, a.runs, a.rounds, not a.no_board)
    if low:
        print(f"\ntime exponent from {small:,} to {a.runs:,} runs (1.0: linear):")
        for step in high:
            if step in low and low[step]["s"] > 0:
                x = math.log(high[step]["s"] / low[step]["s"]) / math.log(a.runs / small)
                print(f"  {step:12s} {x:5.2f}")
    print(f"load average {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f}")


if __name__ == "__main__":
    main()
