"""The suite object every check module registers its checks on."""

from pathlib import Path

from harness.scoring import Suite

HERE = Path(__file__).resolve().parent
#: every module of the suite: its era's fingerprint covers them all (the checks' own
#: modules are found by the framework; the schedule, mock, watches and run are not), by
#: listing the folder, so a new module cannot be left out (4.2's listeners.py once was)
MODULES = tuple(sorted(p.name for p in HERE.glob("*.py")))


suite = Suite(
    name="invoice-sync",
    version="4.2.0",
    tier_weights={"core": 0.45, "resilience": 0.4, "ui": 0.15},
    class_floors={"dead": 0.0, "money": 0.2, "data": 0.3, "view": 0.5},
    severity_ranking=("dead", "money", "data", "view", "core", "resilience", "ui"),
    thresholds=HERE / "thresholds.yml",
    spec=HERE.parent / "SPEC.md",
    sources=tuple(HERE / name for name in MODULES),
    thresholds_pin="fd57c9ef00f55c269f1805c240de52c7752bab618eb671fb91fe77e4356930ef",
)
