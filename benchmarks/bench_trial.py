"""Trial overhead of the Docker backend: an oracle trial in Docker minus the same trial on
the host (``--sandbox local``), against the anchor, two bare ``docker run --rm IMAGE true``
(the floor for two containers: the oracle's verify phase, and the gateway's or agent's).
Interleaved per round, so that the machine's load weighs on all alike.

    python benchmarks/bench_trial.py [--rounds 3] [--scenario py/ledger-rounding]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.images import ensure_image  # noqa: E402


def timed(cmd: list[str], env: dict[str, str] | None = None) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, capture_output=True, timeout=900)
    return time.perf_counter() - t0


def trial(sandbox: str, scenario: str, tmp: Path) -> float:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "HARNESS_WORKSPACE": str(tmp / "ws"),
        "HARNESS_RESULTS": str(tmp / "res"),
        "HARNESS_SCENARIO_ROOT": str(ROOT / "scenarios"),
        "HARNESS_SKIP_REMOTE": "1",
    }
    args = ["exec", "--agent", "oracle", "--sandbox", sandbox, scenario]
    return timed([sys.executable, "-m", "harness.cli", *args], env)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scenario", default="py/ledger-rounding")
    a = ap.parse_args()
    image = ensure_image("env-python").tag
    t: dict[str, list[float]] = {"docker": [], "local": [], "bare": []}
    with tempfile.TemporaryDirectory() as tmp:
        trial("docker", a.scenario, Path(tmp) / "warm")  # images, caches
        for r in range(a.rounds):
            t["docker"].append(trial("docker", a.scenario, Path(tmp) / f"d{r}"))
            t["local"].append(trial("local", a.scenario, Path(tmp) / f"l{r}"))
            bare = [timed(["docker", "run", "--rm", image, "true"]) for _ in range(2)]
            t["bare"].append(sum(bare))
    med = {k: statistics.median(v) for k, v in t.items()}
    extra = med["docker"] - med["local"]
    print(f"{'':34}{'median s':>10}")
    for k, label in (
        ("docker", "oracle trial, docker"),
        ("local", "oracle trial, local"),
        ("bare", "two bare docker run --rm (anchor)"),
    ):
        print(f"{label:34}{med[k]:10.2f}")
    print(f"docker minus local: {extra:+.2f} s; ratio to the anchor: {extra / med['bare']:.2f}")
    print(f"({a.rounds} rounds, load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
