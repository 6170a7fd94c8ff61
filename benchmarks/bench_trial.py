"""Trial overhead of the Docker backend: an oracle trial in Docker minus the same trial on
the host (``--sandbox local``), against the anchor, two bare ``docker run --rm IMAGE true``
(the floor for two containers; the oracle needs one, its verifier, as it applies the
solution on the host). Interleaved per round, so that the machine's load weighs on all
alike. Beside the wall times: the verify phase of each trial (from its ``trial.log``) and
harness's own CPU time on the host (the trial process and its children, rusage).

    python benchmarks/bench_trial.py [--rounds 3] [--scenario py/ledger-rounding]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.images import ensure_image  # noqa: E402


def timed(cmd: list[str], env: dict[str, str] | None = None) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, capture_output=True, timeout=900)
    return time.perf_counter() - t0


def cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def verify_phase(results: Path) -> float:
    """Seconds from ``verify-start`` to ``verdict`` in the one run's trial.log."""
    (log,) = results.rglob("trial.log")
    at = {}
    for line in log.read_text().splitlines():
        event = json.loads(line)
        at.setdefault(event["event"], datetime.fromisoformat(event["at"]).timestamp())
    return at["verdict"] - at["verify-start"]


def trial(sandbox: str, scenario: str, tmp: Path) -> tuple[float, float, float]:
    """(wall, verify phase, host CPU) of one oracle trial."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "HARNESS_WORKSPACE": str(tmp / "ws"),
        "HARNESS_RESULTS": str(tmp / "res"),
        "HARNESS_SCENARIO_ROOT": str(ROOT / "scenarios"),
        "HARNESS_SKIP_REMOTE": "1",
    }
    args = ["exec", "--agent", "oracle", "--sandbox", sandbox, scenario]
    before = cpu()
    wall = timed([sys.executable, "-m", "harness.cli", *args], env)
    return wall, verify_phase(tmp / "res"), cpu() - before


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scenario", default="py/ledger-rounding")
    a = ap.parse_args()
    image = ensure_image("env-python").tag
    t: dict[str, list[float]] = {k: [] for k in ("docker", "local", "bare", "bare1")}
    phase: dict[str, list[float]] = {"docker": [], "local": []}
    host: dict[str, list[float]] = {"docker": [], "local": []}
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        trial("docker", a.scenario, Path(tmp) / "warm")  # images, caches
        for r in range(a.rounds):
            for side in ("docker", "local") if r % 2 == 0 else ("local", "docker"):
                wall, verify, used = trial(side, a.scenario, Path(tmp) / f"{side}{r}")
                t[side].append(wall)
                phase[side].append(verify)
                host[side].append(used)
            bare = [timed(["docker", "run", "--rm", image, "true"]) for _ in range(2)]
            t["bare"].append(sum(bare))
            t["bare1"].append(min(bare))
            loads.append(os.getloadavg()[0])
    med = {k: statistics.median(v) for k, v in t.items()}
    extra = med["docker"] - med["local"]
    print(f"{'':36}{'median s':>10}{'verify s':>10}{'host CPU s':>12}")
    for k, label in (("docker", "oracle trial, docker"), ("local", "oracle trial, local")):
        verify, used = statistics.median(phase[k]), statistics.median(host[k])
        print(f"{label:36}{med[k]:10.2f}{verify:10.2f}{used:12.2f}")
    print(f"{'two bare docker run --rm (anchor)':36}{med['bare']:10.2f}")
    print(f"{'one bare docker run --rm (faster)':36}{med['bare1']:10.2f}")
    print(
        f"docker minus local: {extra:+.2f} s; beyond the anchor: {extra - med['bare']:+.2f} s; "
        f"ratio to the anchor: {extra / med['bare']:.2f}"
    )
    print(f"({a.rounds} rounds, load {min(loads):.1f}-{max(loads):.1f})")


if __name__ == "__main__":
    main()
