"""The suite object every check module registers its checks on."""

from pathlib import Path

from harness.scoring import Suite

HERE = Path(__file__).resolve().parent
#: every module of the suite: its era's fingerprint covers them all (the checks' own
#: modules are found by the framework; the schedule, mock, watches and run are not)
MODULES = (
    "suite.py",
    "grader.py",
    "schedule.py",
    "evidence.py",
    "upstream.py",
    "watches.py",
    "listeners.py",
    "user_view.py",
    "execution.py",
    "status.py",
    "sync_faults.py",
    "durability.py",
    "api.py",
    "money.py",
    "console.py",
)


suite = Suite(
    name="invoice-sync",
    version="4.2.0",
    tier_weights={"core": 0.45, "resilience": 0.4, "ui": 0.15},
    class_floors={"dead": 0.0, "money": 0.2, "data": 0.3, "view": 0.5},
    severity_ranking=("dead", "money", "data", "view", "core", "resilience", "ui"),
    thresholds=HERE / "thresholds.yml",
    spec=HERE.parent / "SPEC.md",
    sources=tuple(HERE / name for name in MODULES),
    thresholds_pin="f403f6d0aa7a5eefdaa85820dda335595cad316e525ea449a3e2b323f6731cf3",
)
