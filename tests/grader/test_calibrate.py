"""Calibration: the bar between reference and broken trees, its progress lines, its ledger."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.scoring import Score
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit


def test_calibration_puts_the_bar_between_reference_and_broken_trees() -> None:
    from harness.grader.calibrate import Spread, propose

    ref = Spread("reference", [1.0, 0.995, 1.0])
    broken = [Spread("no-dedupe", [0.961, 0.96, 0.962]), Spread("LOW", [0.003, 0.004])]
    got = propose(ref, broken)
    assert got.bar is not None and 0.962 < got.bar <= 0.995
    assert got.broken_worst == "no-dedupe"
    assert propose(Spread("reference", [0.95]), broken).bar is None


def test_a_defect_failing_by_its_musts_does_not_hold_the_bar_down() -> None:
    """One check of a hundred lost: the defect may out-score a reference that lost graded
    points elsewhere; it fails by the SPEC, so the bar only has to let the reference in."""
    from harness.grader.calibrate import Spread, propose

    ref = Spread("reference", [0.954, 0.993, 0.984], [True] * 3, spec_failed=[False] * 3)
    by_spec = Spread("status-once", [0.981, 0.979, 0.98], [False] * 3, spec_failed=[True] * 3)
    low = Spread("LOW", [0.008, 0.01], [False] * 2, spec_failed=[True] * 2)
    got = propose(ref, [by_spec, low], margin=0.01)
    assert got.bar == 0.944 and got.broken_worst == "status-once" and got.broken_max == 0.981
    # met the SPEC on one seed: its graded score constrains the bar again
    once = Spread(
        "retry-10s", [0.962, 0.99, 0.96], [False, True, False], spec_failed=[True, False, True]
    )
    assert propose(ref, [by_spec, once, low]).bar is None
    lower = Spread("retry-10s", [0.90, 0.91], [False] * 2, spec_failed=[True, False])
    got = propose(ref, [by_spec, lower, low])
    assert got.bar is not None and 0.91 < got.bar <= 0.954


def test_calibration_says_each_scoring_as_it_ends() -> None:
    from harness.grader.calibrate import _progress_text
    from harness.grader.calibration_ledger import Entry
    from harness.grader.scoring_progress import Progress

    def entry(final: float, met: bool, unmet: list[str]) -> Entry:
        return Entry(
            tree="t", seed="s", sandbox="local", digest="d", scorer="fp", final=final,
            measurable=True, spec_met=met, unmet=unmet,
        )  # fmt: skip

    failed = entry(0.5842, False, ["M-B", "M-A"])
    steps = Progress(128)
    steps.done = 2
    line = steps.step(_progress_text("ab12", "float-money", failed, 0.9), 64, scored=True)
    assert line.startswith("[3/128] seed ab12 float-money: final 0.5842 failed unmet M-A,M-B (")
    met = entry(0.987, True, [])
    assert _progress_text("ab12", "reference", met, 0.9).endswith("final 0.9870 success")


def _fake_calibration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, Any, list[Any], Path]:
    """invoice-sync's scenario calibrated with a runner that scores nothing for real: the
    reference meets its MUSTs, every other tree fails; each tree's digest is its name."""
    import dataclasses
    import shutil

    from harness.config.settings import Settings
    from harness.grader import calibrate as cal
    from harness.scenario.load import load_scenario
    from harness.scoring import Score

    root = tmp_path / "scenarios"
    shutil.copytree(
        REPO_ROOT / "scenarios" / "apps" / "invoice-sync", root / "apps" / "invoice-sync"
    )
    (root / "apps" / "invoice-sync" / "suite" / "calibration.jsonl").unlink(missing_ok=True)
    loaded = load_scenario("apps/invoice-sync", root)
    made: list[Any] = []

    class Runner:
        def __init__(self, *args: Any, reuse: bool = False) -> None:
            self.reuse, self.reused, self.scored = reuse, [], []
            made.append(self)

        def fresh(self, name: str) -> str:
            return name

        def patched(self, base: str, patch: Path, name: str, what: str) -> str:
            return name

        def score(self, tree: str, seed: str) -> Score:
            self.scored.append((tree, seed))
            good = tree == "reference"
            return Score.model_construct(
                final=0.99 if good else 0.5,
                measurable=True,
                spec_met=good,
                unmet=[] if good else ["M-X"],
                scorer="fp",
                rows=[],
            )

        def close(self) -> None:
            pass

    monkeypatch.setattr(cal, "ControlRunner", Runner)
    monkeypatch.setattr(cal, "code_fingerprint", lambda suite: "fp")
    monkeypatch.setattr(cal, "tree_digest", lambda tree: f"digest-{tree}")
    monkeypatch.setattr(cal.OracleAgent, "apply", staticmethod(lambda loaded, ws: None))
    monkeypatch.setattr(cal, "must_failures", lambda spreads, violates: [])
    settings = dataclasses.replace(Settings.from_env(tmp_path), scenario_root=root)
    return cal, (loaded, settings), made, root / "apps" / "invoice-sync" / "suite"


def test_calibration_resumes_from_its_ledger_on_another_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each scoring is a ledger line in the suite folder as it ends; a later ``--reuse``
    (a new machine: no kept scorings) scores only what the ledger lacks, and a line
    written by another scorer, or for a tree that changed since, counts for nothing."""

    cal, (loaded, settings), made, suite_dir = _fake_calibration(tmp_path, monkeypatch)
    trees = 2 + len(list((suite_dir.parent / "defects").glob("*.yml")))
    text, proposal = cal.calibrate(loaded, settings, "local", 2, reuse=True)
    assert made[0].reuse is True and proposal.bar is not None
    assert len(made[0].scored) == 2 * trees
    ledger = suite_dir / "calibration.jsonl"
    lines = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert len(lines) == 2 * trees and {line["scorer"] for line in lines} == {"fp"}

    # the next machine: an interrupted run left every line but the LOW tree's on one seed,
    # plus a line by another scorer and one for a tree whose files have changed since
    kept = [line for line in lines if line["tree"] != "LOW"] + [
        line for line in lines if line["tree"] == "LOW"
    ][1:]
    stale = dict(kept[0], scorer="another", final=0.1)
    moved = dict(next(x for x in kept if x["tree"] == "reference"), digest="old")
    ledger.write_text("".join(json.dumps(x) + "\n" for x in [*kept, stale, moved]) + "torn{\n")
    text, again = cal.calibrate(loaded, settings, "local", 2, reuse=True)
    assert len(made[1].scored) == 1 and made[1].scored[0][0] == "low"  # its workspace
    assert f"0 of {2 * trees} scorings read from kept ones and {2 * trees - 1} from" in text
    assert again == proposal
    after = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert len(after) == 2 * trees + 1  # the moved tree's old line stays: same scorer
    assert "another" not in {line["scorer"] for line in after}

    # without --reuse every tree is scored again, and the ledger keeps the new lines
    cal.calibrate(loaded, settings, "local", 2, reuse=False)
    assert len(made[2].scored) == 2 * trees


def test_a_calibration_pins_a_suite_without_a_pin_argument_beside_its_thresholds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Adding ``thresholds_pin=`` to the suite's code would change the scorer fingerprint
    that the ledger's lines and the thresholds' stamp hold: the pin goes to a file."""
    import re

    from harness.scoring.era import PIN_FILE, sha256_file

    cal, (loaded, settings), _, suite_dir = _fake_calibration(tmp_path, monkeypatch)
    codes = {}
    for module in sorted(suite_dir.glob("*.py")):
        codes[module] = re.sub(r"\n\s*thresholds_pin=\"[0-9a-f]+\",", "", module.read_text())
        module.write_text(codes[module])
    text, proposal = cal.calibrate(loaded, settings, "local", 2)
    assert proposal.bar is not None and f"pinned in {PIN_FILE}" in text
    for module, code in codes.items():  # the code, and so its fingerprint, untouched
        assert module.read_text() == code
    pin = (suite_dir / PIN_FILE).read_text().strip()
    assert pin == sha256_file(suite_dir / "thresholds.yml")


def test_a_suite_package_is_pinned_in_the_module_that_builds_its_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """invoice-sync's suite is a package: ``suite.py`` imports the ``Suite`` that a sibling
    module builds with ``thresholds_pin=``; the calibration rewrites that pin, and the
    suite then scores (a pin file beside it would lose to the stale argument)."""
    from harness.scoring.era import PIN_FILE, check_pin, sha256_file
    from harness.verify.scoring_bridge import load_suite_module

    cal, (loaded, settings), _, suite_dir = _fake_calibration(tmp_path, monkeypatch)
    holders = [m for m in suite_dir.glob("*.py") if "thresholds_pin=" in m.read_text()]
    assert [m.name for m in holders] != ["suite.py"] and len(holders) == 1
    text, proposal = cal.calibrate(loaded, settings, "local", 2)
    assert proposal.bar is not None and f"pinned in {holders[0].name}" in text
    assert not (suite_dir / PIN_FILE).exists()
    pin = sha256_file(suite_dir / "thresholds.yml")
    assert f'thresholds_pin="{pin}"' in holders[0].read_text()
    # the suite as the next process loads it (this one keeps the package's old modules)
    for name in [n for n in sys.modules if n.startswith("harness_suite_")]:
        monkeypatch.delitem(sys.modules, name)
    assert check_pin(load_suite_module(suite_dir).suite) is not None
