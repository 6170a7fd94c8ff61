"""The suite object every check module registers its checks on: its tiers, floors,
thresholds and pin (``HERE``: this folder, where the thresholds live)."""

from __future__ import annotations

from pathlib import Path

from harness.scoring import Suite

HERE = Path(__file__).resolve().parent
#: every module of the suite, so the era's fingerprint covers the run and the vendor too
MODULES = tuple(sorted(p.name for p in HERE.glob("*.py")))
suite = Suite(
    name="meridian-ledger",
    version="2.1.2",
    tier_weights={
        "boot": 0.08,
        "wire": 0.17,
        "sync": 0.12,
        "validation": 0.08,
        "journeys": 0.10,
        "rendered": 0.10,
        "performance": 0.07,
        "consistency": 0.14,
        "resilience": 0.14,
    },
    excellence_weight=0.05,
    critical_floor=0.6,
    class_floors={"dead": 0.0},
    thresholds=HERE / "thresholds.yml",
    thresholds_pin="0efd44ac162e3cb7197d716803ac1cf5d83836d8d45d72f5bf1aa7397fcfafcc",
    spec=HERE.parent / "SPEC.md",
    sources=tuple(HERE / name for name in MODULES),
)
