"""Parallel efficiency of a job of Docker trials: ``--concurrency 2`` against 1.

The same job (``oracle`` on small shipped scenarios, 12 trials, ``--sandbox docker``) runs
through ``harness run`` at concurrency 1 and 2, each time in fresh results, jobs and
workspace folders; the order alternates per round so that machine load weighs on both.
Efficiency is ``makespan(1) / (2 x makespan(2))`` (1.0: two slots halve the time).

Per concurrency it prints the makespan, the per-trial phase medians (``boot``: worker
process start, imports and workspace setup up to the trial's ``start`` event; ``agent``;
``verify``; ``after``: from the verdict to the worker's answer; ``worker``: spawn to
answer), and where the CPU went: harness's own processes on the host (the job and its
workers, from the children's rusage), the Docker daemons (``dockerd``, ``containerd``,
from ``/proc``), the containers (the engine's cgroup, cgroup v1 ``cpuacct`` or v2
``cpu.stat``: every container of the machine, so other users' too) and the machine as a
whole (``/proc/stat``: what share of its cores was busy, by anyone).

The anchor, interleaved with the jobs: the same number of bare CPU-bound containers
(``docker run --rm IMAGE python3 -c LOOP``, about a verifier's CPU each) at one and two at
a time. Its efficiency is what Docker itself gets from a second slot on this machine: on
cgroup v1 every container shares the engine's one ``docker`` cgroup, which competes
with each host process as a single task, so on a loaded machine a second container
mostly splits the share the first had.

Python writes and reuses bytecode caches as it does for a user: a
``PYTHONDONTWRITEBYTECODE`` in the environment is dropped for the jobs (every worker
process would compile harness's ~190 modules again) unless ``--keep-env`` is given.

    python benchmarks/bench_docker_job.py [--rounds 1] [--reps 6]
        [--scenarios smoke/py-fast,py/ledger-rounding]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")
PHASES = ("boot", "agent", "verify", "after", "worker")


@dataclass
class Cpu:
    """Cumulative CPU seconds at one instant."""

    harness: float  # this process's waited-for children (harness run and its workers)
    daemons: float  # dockerd + containerd
    containers: float  # the engine's cgroup (every container on the machine)
    busy: float  # the whole machine, busy core-seconds
    wall: float

    @classmethod
    def now(cls) -> Cpu:
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return cls(kids.ru_utime + kids.ru_stime, daemons(), containers(), busy(), time.time())

    def __sub__(self, other: Cpu) -> Cpu:
        return Cpu(
            self.harness - other.harness,
            self.daemons - other.daemons,
            self.containers - other.containers,
            self.busy - other.busy,
            self.wall - other.wall,
        )


def daemons() -> float:
    total = 0.0
    for name in ("dockerd", "containerd"):
        found = subprocess.run(["pidof", name], capture_output=True, text=True).stdout.split()
        for pid in found:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / TICK  # utime, stime
    return total


def containers() -> float:
    v1 = Path("/sys/fs/cgroup/cpuacct/docker/cpuacct.usage")
    if v1.is_file():
        return int(v1.read_text()) / 1e9
    for v2 in (Path("/sys/fs/cgroup/system.slice"), Path("/sys/fs/cgroup/docker")):
        stat = v2 / "cpu.stat"
        if stat.is_file():
            usage = dict(line.split() for line in stat.read_text().splitlines())
            return int(usage.get("usage_usec", 0)) / 1e6
    return float("nan")


def busy() -> float:
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / TICK


@dataclass
class Job:
    concurrency: int
    makespan: float
    cpu: Cpu
    phases: dict[str, list[float]] = field(default_factory=dict)
    outcomes: list[str] = field(default_factory=list)


def stamp(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def phases_of(out: Path) -> tuple[dict[str, list[float]], list[str]]:
    """Per-trial phase durations from each run's trial.log and the job's trial files."""
    found: dict[str, list[float]] = {p: [] for p in PHASES}
    outcomes: list[str] = []
    runs = {}
    for log in (out / "results").rglob("trial.log"):
        events = {}
        for line in log.read_text().splitlines():
            event = json.loads(line)
            events.setdefault(event["event"], stamp(event["at"]))
            if event["event"] == "end":
                outcomes.append(event["outcome"])
        runs[log.parent.resolve()] = events
    for answer in (out / "jobs").rglob("trials/*.out.json"):
        spec = answer.with_name(answer.name.replace(".out.json", ".spec.json"))
        data = json.loads(answer.read_text())
        events = runs.get(Path(data.get("run_dir") or "/").resolve())
        if events is None or not {"start", "agent-start", "verdict"} <= events.keys():
            continue
        spawned, answered = spec.stat().st_mtime, answer.stat().st_mtime
        found["boot"].append(events["start"] - spawned)
        found["agent"].append(
            events.get("agent-end", events["verify-start"]) - events["agent-start"]
        )
        found["verify"].append(events["verdict"] - events["verify-start"])
        found["after"].append(answered - events["verdict"])
        found["worker"].append(answered - spawned)
    return found, outcomes


def run_job(args: argparse.Namespace, concurrency: int, out: Path, env: dict[str, str]) -> Job:
    shutil.rmtree(out, ignore_errors=True)
    full = {
        **env,
        "HARNESS_RESULTS": str(out / "results"),
        "HARNESS_JOBS": str(out / "jobs"),
        "HARNESS_WORKSPACE": str(out / "workspace"),
    }
    cmd = [
        sys.executable, "-m", "harness.cli", "run", "--agents", args.agent,
        "--scenarios", args.scenarios, "--reps", str(args.reps), "--sandbox", "docker",
        "--concurrency", str(concurrency), "--job", f"bench-c{concurrency}",
    ]  # fmt: skip
    before = Cpu.now()
    done = subprocess.run(cmd, cwd=ROOT, env=full, capture_output=True, text=True, check=False)
    cpu = Cpu.now() - before
    if done.returncode != 0:
        raise SystemExit(f"job failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr}")
    phases, outcomes = phases_of(out)
    return Job(concurrency, cpu.wall, cpu, phases, outcomes)


def bare_containers(image: str, n: int, concurrency: int, loop: int) -> float:
    """Makespan of ``n`` CPU-bound bare containers, ``concurrency`` at a time."""
    code = f"sum(range({loop}))"
    cmd = ["docker", "run", "--rm", "--network", "none", image, "python3", "-c", code]
    began = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        for done in pool.map(lambda _: subprocess.run(cmd, capture_output=True), range(n)):
            if done.returncode != 0:
                raise SystemExit(f"bare container failed: {done.stderr.decode()[-500:]}")
    return time.perf_counter() - began


def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--reps", type=int, default=6, help="repetitions of each scenario")
    ap.add_argument("--scenarios", default="smoke/py-fast,py/ledger-rounding")
    ap.add_argument("--agent", default="oracle")
    ap.add_argument("--loop", type=int, default=150_000_000, help="the anchor's sum(range(N))")
    ap.add_argument("--keep-env", action="store_true", help="keep PYTHONDONTWRITEBYTECODE")
    args = ap.parse_args()
    trials = args.reps * len(args.scenarios.split(","))
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_")}
    if not args.keep_env:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["HARNESS_SCENARIO_ROOT"] = str(ROOT / "scenarios")
    env["HARNESS_SKIP_REMOTE"] = "1"
    loads = [os.getloadavg()[0]]
    jobs: dict[int, list[Job]] = {1: [], 2: []}
    bare: dict[int, list[float]] = {1: [], 2: []}
    sys.path.insert(0, str(ROOT))
    from harness.images import ensure_image

    image = ensure_image("scorer").tag
    tmp = Path(tempfile.mkdtemp(prefix="bench-docker-job-"))
    try:
        for r in range(args.rounds):
            for c in (1, 2) if r % 2 == 0 else (2, 1):
                job = run_job(args, c, tmp / f"r{r}c{c}", env)
                jobs[c].append(job)
                loads.append(os.getloadavg()[0])
                print(
                    f"round {r + 1}, concurrency {c}: {job.makespan:.1f} s (load {loads[-1]:.1f})",
                    flush=True,
                )
                bare[c].append(bare_containers(image, trials, c, args.loop))
                print(f"  anchor, {trials} bare containers {c} at a time: {bare[c][-1]:.1f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    span = {c: med([j.makespan for j in js]) for c, js in jobs.items()}
    print(f"\n{trials} {args.agent} trials ({args.scenarios}), docker, {args.rounds} round(s)")
    print(f"{'':16}{'makespan':>9}" + "".join(f"{p:>8}" for p in PHASES) + "   CPU s/trial:"
          f"{'harness':>8}{'daemons':>8}{'ctrs*':>7}{'busy%':>7}")  # fmt: skip
    for c, js in jobs.items():
        ph = {p: med([v for j in js for v in j.phases.get(p, [])]) for p in PHASES}
        cpu = {
            k: med([getattr(j.cpu, k) / trials for j in js])
            for k in ("harness", "daemons", "containers")
        }
        share = med([100 * j.cpu.busy / (j.cpu.wall * (os.cpu_count() or 1)) for j in js])
        print(
            f"concurrency {c:<4}{span[c]:9.1f}"
            + "".join(f"{ph[p]:8.2f}" for p in PHASES)
            + f"{'':14}{cpu['harness']:8.2f}{cpu['daemons']:8.2f}{cpu['containers']:7.2f}"
            + f"{share:7.0f}"
        )
        bad = [o for j in js for o in j.outcomes if o != "success"]
        if bad:
            print(f"  not success: {bad}")
    anchor = {c: med(v) for c, v in bare.items()}
    print(
        f"efficiency: {span[1] / (2 * span[2]):.2f} (goal >= 0.85); anchor, bare CPU-bound "
        f"containers: {anchor[1] / (2 * anchor[2]):.2f} ({anchor[1]:.1f} s at 1, "
        f"{anchor[2]:.1f} s at 2)"
    )
    print(f"load {min(loads):.1f}-{max(loads):.1f}; * every container of the machine")


if __name__ == "__main__":
    main()
