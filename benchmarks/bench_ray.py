"""Ray's scheduling overhead per trial against the local executor, on 20 smoke trials.

Both executors run the same job (``nop`` on ``smoke/py-fast``, ``--reps 20``, sandbox
``local``, two trials at a time) through ``harness run``. The Ray side runs on a local
cluster started for the purpose (``ray start`` head + one worker, each 1 CPU and
``{"docker": 1}``: two slots, like ``--concurrency 2`` locally, loopback only), so the
difference is what Ray adds: driver connect, shipping the project, task dispatch, a
worker process per node, packing each result folder and unpacking it on the driver. The
cluster's own start-up is reported apart and not counted. Jobs alternate (local, ray,
local, ray...) so machine load hits both alike; prints medians, the overhead per trial
and the ratio ray/local.

Ray's floor is measured beside them (``anchor``): a bare driver that does only what any
Ray job of this project must, joining the cluster with the same shipped project, running
one task per slot that imports what a trial task imports, and shutting down. What the
ray job costs over the local one beyond that floor is what harness itself adds.

    python benchmarks/bench_ray.py [--trials 20] [--rounds 1]

Needs the ray extra (``pip install -e '.[ray]'``); run from the project root.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.raycluster import local_cluster  # noqa: E402


def job(executor: list[str], trials: int, out: Path, env: dict[str, str]) -> float:
    shutil.rmtree(out, ignore_errors=True)
    full = {
        **env,
        "HARNESS_RESULTS": str(out / "results"),
        "HARNESS_JOBS": str(out / "jobs"),
        "HARNESS_WORKSPACE": str(out / "workspace"),
    }
    cmd = [
        sys.executable, "-m", "harness.cli", "run", "--agents", "nop",
        "--scenarios", "smoke/py-fast", "--reps", str(trials), "--sandbox", "local",
        "--concurrency", "2", "--job", "bench", *executor,
    ]  # fmt: skip
    began = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=full, capture_output=True, text=True, check=False)
    took = time.perf_counter() - began
    if done.returncode != 0 or f"failed {trials}" not in done.stdout:
        raise SystemExit(f"job failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr}")
    return took


ANCHOR = """
import sys, time
import ray
from harness.job.executors.ray import RESOURCE, SHIP_EXCLUDES

def task():
    import harness.job.executors.ray  # what run_on_node's worker imports
    return 0

began = time.perf_counter()
ray.init(address=sys.argv[1], log_to_driver=False, logging_level="ERROR",
         runtime_env={"working_dir": sys.argv[2], "excludes": SHIP_EXCLUDES})
remote = ray.remote(task)
ray.get([remote.options(num_cpus=0, resources={RESOURCE: 1}).remote() for _ in range(2)])
ray.shutdown()
print(f"{time.perf_counter() - began:.3f}")
"""


def anchor(address: str, env: dict[str, str]) -> float:
    """Ray's own fixed cost of a job of this project (see the module docstring)."""
    done = subprocess.run(
        [sys.executable, "-c", ANCHOR, address, str(ROOT)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"anchor failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HARNESS_", "RAY_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    tmp = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    local_s: list[float] = []
    ray_s: list[float] = []
    floor_s: list[float] = []
    try:
        began = time.perf_counter()
        with local_cluster(env, workers=1) as cluster:
            up = time.perf_counter() - began
            print(f"cluster up (head + 1 worker, not counted): {up:.1f}s", flush=True)
            for i in range(args.rounds):
                local_s.append(job([], args.trials, tmp / f"local{i}", env))
                ray_s.append(
                    job(
                        ["--executor", "ray", "--address", cluster.address],
                        args.trials,
                        tmp / f"ray{i}",
                        env,
                    )
                )
                floor_s.append(anchor(cluster.address, env))
                print(
                    f"round {i + 1}: local {local_s[-1]:.1f}s, ray {ray_s[-1]:.1f}s, "
                    f"Ray's floor {floor_s[-1]:.2f}s",
                    flush=True,
                )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    loc, ray = statistics.median(local_s), statistics.median(ray_s)
    n = args.trials
    print(f"{n} smoke trials, 2 at a time, median of {args.rounds} round(s):")
    print(f"  local executor  {loc:6.1f}s  ({loc / n:.2f}s per trial)")
    print(f"  ray executor    {ray:6.1f}s  ({ray / n:.2f}s per trial)")
    floor = statistics.median(floor_s)
    print(f"  ray overhead    {(ray - loc) / n:+.2f}s per trial; ratio ray/local {ray / loc:.2f}x")
    print(
        f"  Ray's floor     {floor:6.2f}s a job (connect, ship the project, a task per slot); "
        f"ratio at that floor {(loc + floor) / loc:.2f}x; harness adds {ray - loc - floor:+.2f}s"
    )


if __name__ == "__main__":
    main()
