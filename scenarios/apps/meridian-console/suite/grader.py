"""The suite object of apps/meridian-console, its tiers and gates, and ``ck``, the decorator
every check module registers its checks with."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harness.scoring import Suite
from harness.scoring.suite import CheckFn

HERE = Path(__file__).resolve().parent
#: every module of the suite: its era's fingerprint covers them all (the checks' own
#: modules are found by the framework; the vendor, relays, run and readers are not), by
#: listing the folder, so a new module cannot be left out
MODULES = tuple(sorted(p.name for p in HERE.glob("*.py")))

TIERS = {
    "boot": 0.04,  # A
    "wire": 0.09,  # B
    "sync": 0.09,  # C
    "validation": 0.06,  # D
    "journeys": 0.12,  # J
    "rendered": 0.06,  # V
    "performance": 0.08,  # P
    "transactions": 0.14,  # T
    "consistency": 0.16,  # X
    "resilience": 0.16,  # R
}
EXCELLENCE = 0.12
assert abs(sum(TIERS.values()) - 1.0) < 1e-9
assert TIERS["transactions"] + TIERS["consistency"] + TIERS["resilience"] >= 0.46
assert EXCELLENCE >= 0.10
GATES = (  # the named perfection conditions that unlock the excellence slice
    "boot >= 1",
    "wire >= 1",
    "sync >= 1",
    "validation >= 1",
    "journeys >= 1",
    "rendered >= 1",
    "transactions >= 1",
    "consistency >= 1",
    "resilience >= 1",
    "perf.requests >= 1",
    "perf.latency >= 1",
    "perf.first_paint >= 1",
    "field.pixels >= 1",
    "field.pick >= 1",
    "note.partition_catchup >= 1",
    "fe.budget >= 1",
)
#: root -> the checks a failed root blocks (they are excused, not charged twice)
ROOT_BLOCKS: dict[str, str] = {}

suite = Suite(
    name="meridian-console",
    version="1.0.0",
    tier_weights=TIERS,
    excellence_weight=EXCELLENCE,
    gates=GATES,
    critical_floor=0.6,
    class_floors={"dead": 0.0},
    thresholds=HERE / "thresholds.yml",
    # the scorer container stages suite/ only: a byte-identical copy travels with it
    spec=HERE.parent / "SPEC.md" if (HERE.parent / "SPEC.md").is_file() else HERE / "SPEC.md",
    sources=[HERE / name for name in MODULES],
)


def ck(
    name: str,
    tier: str | None,
    harm: str,
    musts: tuple[str, ...] = (),
    *,
    critical: bool = False,
    severity: str | None = None,
    root: str | None = "app.boots",
) -> Callable[[CheckFn], CheckFn]:
    if root:
        ROOT_BLOCKS[name] = root
    return suite.check(
        name, tier=tier, harm=harm, musts=musts, critical=critical, severity=severity, root=root
    )
