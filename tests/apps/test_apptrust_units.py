"""Executed-app trust, the fast parts: secret seeds, the scorer slot, controls with teeth."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from harness.errors import UserError
from harness.scoring import (
    NOT_TRUSTED,
    TRUSTED,
    DefectOutcome,
    Score,
    Status,
    Suite,
    Thresholds,
    compose,
    evaluate_controls,
    graded,
    mark_vacuous,
)
from harness.scoring.appkit.fixtures import BIG_AMOUNTS, CURRENCIES, MARKUP_NAMES, build_dataset
from harness.scoring.appkit.slot import scoring_slot
from harness.trial import seed as trialseed
from harness.trial.slot_log import take_slot
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit

T = Thresholds(calibrated=True, high=0.95, low=0.2, success_bar=0.9)


def _suite() -> Suite:
    suite = Suite(name="app", version="1.0.0", tier_weights={"core": 0.7, "ui": 0.3})
    ok = lambda c: graded(1)  # noqa: E731
    suite.add("boot", ok, tier="core", harm="dead app")
    suite.add("list", ok, tier="core", harm="lost rows", root="boot")
    suite.add("total", ok, harm="wrong money", critical=True, severity="money")
    suite.add("layout", ok, tier="ui", harm="misaligned")
    suite.add("idle", ok, tier="ui", harm="never moved by anything")
    return suite


SUITE = _suite()


def _score(**changes: float | Status) -> Score:
    rows = []
    for chk in SUITE.checks:
        c = changes.get(chk.name, 1.0)
        rows.append(chk.row_of(0.0, c) if isinstance(c, Status) else chk.row_of(c))
    return compose(mark_vacuous(rows), SUITE)


def _controls(defects: list[DefectOutcome], low: Score | None = None) -> object:
    high = _score()
    low = low or _score(boot=Status.ABSENT, total=0.0, layout=0.0)
    return evaluate_controls(
        high,
        low,
        defects,
        (high.vector(), high.vector()),
        T,
        failing_determinism=(low.vector(), low.vector()),
    )


def test_critical_defect_at_or_above_the_bar_is_not_trusted() -> None:
    # the defect breaks only what it declares (isolation passes) but its final stays
    # above the success bar: a critical defect that counts as success
    mild = DefectOutcome(
        name="mild-money", declared=["total"], score=_score(total=0.97), critical=True
    )
    report = _controls([mild])
    assert report.verdict == NOT_TRUSTED  # type: ignore[attr-defined]
    crit = next(c for c in report.controls if c.control == "CRITICAL")  # type: ignore[attr-defined]
    assert not crit.passed and "mild-money" in crit.detail
    assert report.defects[0].final == pytest.approx(_score(total=0.97).final)  # type: ignore[attr-defined]
    assert report.defects[0].success  # type: ignore[attr-defined]


def test_critical_defect_below_the_bar_is_trusted_and_every_score_is_kept() -> None:
    hard = DefectOutcome(name="money", declared=["total"], score=_score(total=0.0), critical=True)
    soft = DefectOutcome(name="ugly", declared=["layout"], score=_score(layout=0.0))
    report = _controls([hard, soft])
    assert report.verdict == TRUSTED, report.text()  # type: ignore[attr-defined]
    assert [d.final for d in report.defects] == [hard.score.final, soft.score.final]  # type: ignore[attr-defined]


def test_low_tree_above_the_bar_fails_low() -> None:
    report = _controls([], low=_score(layout=0.5))
    low = next(c for c in report.controls if c.control == "LOW")  # type: ignore[attr-defined]
    assert not low.passed and report.verdict == NOT_TRUSTED  # type: ignore[attr-defined]


def test_determinism_is_checked_on_the_failing_tree_too() -> None:
    high, low = _score(), _score(boot=Status.ABSENT, total=0.0, layout=0.0)
    report = evaluate_controls(
        high,
        low,
        [],
        (high.vector(), high.vector()),
        T,
        failing_determinism=(low.vector(), _score(boot=Status.ABSENT, total=0.5).vector()),
    )
    det = [c for c in report.controls if c.control == "DETERMINISM"]
    assert len(det) == 2 and det[0].passed and not det[1].passed
    assert "failing tree" in det[1].detail and report.verdict == NOT_TRUSTED


def test_a_check_nothing_moves_is_reported_untested() -> None:
    soft = DefectOutcome(name="ugly", declared=["layout"], score=_score(layout=0.0))
    report = _controls([soft])
    assert any("idle" in w for w in report.warnings)  # type: ignore[attr-defined]
    assert not any("layout" in w for w in report.warnings)  # type: ignore[attr-defined]


def test_secret_seeds_differ_and_are_kept_outside_the_workspace(tmp_path: Path) -> None:
    seeds = {trialseed.new_seed() for _ in range(50)}
    assert len(seeds) == 50 and all(len(s) == 16 for s in seeds)
    ws_root = tmp_path / "workspace"
    path = trialseed.store(ws_root, "apps/x", "00000000000000aa", "base1")
    assert (ws_root / "apps" / "x") not in path.parents
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
    assert trialseed.load(ws_root, "apps/x", "base1") == "00000000000000aa"
    with pytest.raises(UserError, match="no seed"):
        trialseed.load(ws_root, "apps/x", "another-baseline")


def test_app_scorers_take_turns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_SCORER_LOCK", str(tmp_path / "lock"))
    inside: list[int] = []
    peak: list[int] = []

    def score() -> None:
        with scoring_slot(True) as info:
            inside.append(1)
            peak.append(len(inside))
            time.sleep(0.05)
            inside.pop()
        assert "one at a time" in info["policy"] and "waited_s" in info

    threads = [threading.Thread(target=score) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert max(peak) == 1
    with scoring_slot(False) as info:
        assert "no lock" in info["policy"]


def test_slot_holds_are_logged_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_SCORER_LOCK", str(tmp_path / "lock"))
    log = tmp_path / "slot.jsonl"
    with take_slot(True):
        time.sleep(0.05)
    assert not log.exists()  # not asked: nothing written
    monkeypatch.setenv("HARNESS_SLOT_LOG", str(log))
    for _ in range(2):
        with take_slot(True):
            time.sleep(0.05)
    with take_slot(False):  # no executed app: no hold, no line
        pass
    with scoring_slot(True):  # the app kit's lock alone is grading code: it logs nothing
        pass
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert len(lines) == 2 and all(x["held_s"] >= 0.04 and x["waited_s"] >= 0 for x in lines)
    assert lines[0]["began"] + lines[0]["held_s"] <= lines[1]["began"] + 0.01  # one after another


def test_fixtures_are_adversarial_on_every_seed_and_move_with_it() -> None:
    a, b = build_dataset("00000000000000a1"), build_dataset("00000000000000b2")
    for data in (a, b):
        names = {i.customer for i in data.invoices}
        amounts = [i.amount_minor for i in data.invoices]
        assert set(MARKUP_NAMES) <= names and set(BIG_AMOUNTS) <= set(amounts)
        # three credit notes, one big negative, and one below one unit per decimal currency
        assert sum(1 for x in amounts if x < 0) == 3 + 1 + 6
        for code, exp in CURRENCIES:
            tiny = [
                i for i in data.invoices if i.currency == code and -(10**exp) < i.amount_minor < 0
            ]
            assert bool(tiny) == bool(exp), code
        f = data.faults
        assert f.kill_page < min(f.backoff_page, f.retry_after_page) < f.slow_page
        assert len(set(f.duplicate_pages)) == 3
        listed = [i.id for page in data.pages for i in page]
        assert len(listed) == len(data.invoices) + 3
    assert a.faults != b.faults or a.invoices != b.invoices


def test_an_unprivileged_scorer_says_confinement_is_not_enforced(tmp_path: Path) -> None:
    from harness.scoring.appkit.jail import Jail, protecting, reachable_by_others

    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "a.py").write_text("x = 1\n")
    secret = tmp_path / "secret"
    secret.mkdir(mode=0o700)
    assert not reachable_by_others(secret)
    with protecting([secret]):
        jail = Jail(tree, mode="none")
    try:
        assert "NOT enforced" in jail.statement()
        assert (jail.tree / "pkg" / "a.py").is_file() and jail.data.is_dir()
        assert secret.resolve() in jail.hidden
        env = jail.env()
        assert "HARNESS_SEED" not in env and "PYTHONPATH" not in env
        assert jail.wrap(["python3", "-V"]) == ["python3", "-V"]
    finally:
        jail.close()
    assert not jail.home.exists()


def test_report_publish_refuses_uncalibrated_eras() -> None:
    from harness.report.publish import refuse_uncalibrated
    from harness.report.summary import EraTable

    refuse_uncalibrated([EraTable("tests@1.0.0", [])])
    with pytest.raises(UserError, match="uncalibrated") as info:
        refuse_uncalibrated([EraTable("invoice-sync@2.0.0-rc", [])])
    assert info.value.field == "--publish"


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
    import json

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
    suite_py = suite_dir / "suite.py"
    code = re.sub(r"\n\s*thresholds_pin=\"[0-9a-f]+\",", "", suite_py.read_text())
    suite_py.write_text(code)
    text, proposal = cal.calibrate(loaded, settings, "local", 2)
    assert proposal.bar is not None and f"pinned in {PIN_FILE}" in text
    assert suite_py.read_text() == code  # the code, and so its fingerprint, untouched
    pin = (suite_dir / PIN_FILE).read_text().strip()
    assert pin == sha256_file(suite_dir / "thresholds.yml")
