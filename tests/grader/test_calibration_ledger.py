"""A ledger line composes its Score again, and the controls take a first scoring from it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel

from harness.grader import controls
from harness.grader.calibration_ledger import Entry, Ledger, add_lines, rebuilt
from harness.scoring import Score, Status, Suite, graded
from harness.scoring.scorer import Scorer

pytestmark = pytest.mark.unit


def _suite() -> Suite:
    suite = Suite(name="app", version="1.0.0", tier_weights={"core": 0.7, "ui": 0.3})
    ok = lambda c: graded(1)  # noqa: E731
    suite.add("boot", ok, tier="core", harm="dead app: nothing starts")
    suite.add("list", ok, tier="core", harm="lost rows", root="boot")
    suite.add("total", ok, harm="wrong money", critical=True, severity="money")
    suite.add("layout", ok, tier="ui", harm="misaligned")
    suite.add("probe", ok, tier="ui", harm="the browser could not look")
    return suite


def _scored(scorer: Scorer, **changes: float | Status) -> Score:
    rows = []
    for chk in scorer.suite.checks:
        c = changes.get(chk.name, 1.0)
        rows.append(chk.row_of(0.0, c) if isinstance(c, Status) else chk.row_of(c))
    return scorer.score_rows(rows)


def _line(entry: Entry) -> Entry:
    """The entry as the next machine reads it: one JSON line."""
    return Entry.model_validate(json.loads(entry.model_dump_json()))


def test_a_line_composes_the_same_score_again() -> None:
    scorer = Scorer(_suite())
    score = _scored(scorer, list=Status.VACUOUS, total=0.25, probe=Status.UNAVAILABLE)
    entry = _line(Entry.of("defect", "s0", "local", "d1", score))
    assert entry.rows is not None and entry.rows["list"] == (0.0, "vacuous")
    assert entry.rows["layout"] == 1.0  # an ok row is its score alone
    again = rebuilt(entry, scorer)
    assert again is not None
    assert again.final == score.final and again.vector() == score.vector()
    assert [r.status for r in again.rows] == [r.status for r in score.rows]
    assert (again.era, again.scorer, again.unmet) == (score.era, score.scorer, score.unmet)


def test_a_line_that_does_not_compose_to_its_verdict_is_not_evidence() -> None:
    scorer = Scorer(_suite())
    entry = _line(Entry.of("reference", "s0", "local", "d1", _scored(scorer, layout=0.5)))
    assert rebuilt(entry, scorer) is not None
    assert rebuilt(entry.model_copy(update={"final": entry.final + 0.01}), scorer) is None
    assert rebuilt(entry.model_copy(update={"rows": None}), scorer) is None  # an older line
    assert entry.rows is not None
    unknown = {**entry.rows, "gone": 1.0}
    assert rebuilt(entry.model_copy(update={"rows": unknown}), scorer) is None
    other = entry.model_copy(update={"scorer": "another"})
    assert rebuilt(other, scorer) is None


def test_a_scoring_by_another_scorer_is_refused_and_said(tmp_path: Path) -> None:
    scorer = Scorer(_suite())
    score = _scored(scorer)
    ledger = Ledger(tmp_path / "calibration.jsonl", scorer.stamp.scorer)
    assert ledger.add(Entry.of("reference", "s0", "local", "d1", score)) is True
    foreign = Entry.of("LOW", "s0", "local", "d2", score).model_copy(update={"scorer": "x"})
    assert ledger.add(foreign) is False
    lines = (tmp_path / "calibration.jsonl").read_text().splitlines()
    assert [json.loads(x)["tree"] for x in lines] == ["reference"]
    assert ledger.find("s0", "local", "d1") is not None  # whatever the tree was called
    assert ledger.find("s0", "docker", "d1") is None and ledger.find("s1", "local", "d1") is None


def _runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ledger: Ledger, reuse: bool = True
) -> tuple[controls.ControlRunner, list[str], Score]:
    """A runner over the ledger whose backend scores every tree as a dead app, with the
    trees ``ref``, ``low`` and ``new`` (each tree's digest is ``digest-NAME``)."""
    scorer = Scorer(_suite())
    low = _scored(scorer, boot=Status.ABSENT, list=Status.VACUOUS, total=0.0)
    verified: list[str] = []

    class Backend:
        on_host = True

        def verify(self, spec: Any) -> tuple[Any, str]:
            verified.append(spec.name)
            return SimpleNamespace(error=None, score=low.model_dump(mode="json")), "image"

    monkeypatch.setattr(controls, "get_backend", lambda sandbox: Backend())
    monkeypatch.setattr(controls, "read_state", lambda ws, loaded: SimpleNamespace(baseline="b"))
    monkeypatch.setattr(controls, "make_request", lambda *a, **k: SimpleNamespace(suite_dir=None))
    monkeypatch.setattr(controls, "VerifySpec", lambda loaded, ws, request, labels: ws)
    monkeypatch.setattr(controls.memo, "tree_digest", lambda tree: f"digest-{tree.name}")
    loaded = SimpleNamespace(name="app", directory=tmp_path / "scenario")
    settings = SimpleNamespace(results=tmp_path / "results")
    for name in ("ref", "low", "new"):
        (tmp_path / name).mkdir()
    runner = controls.ControlRunner(
        loaded,  # type: ignore[arg-type]
        settings,  # type: ignore[arg-type]
        "local",
        reuse=reuse,
        ledger=(ledger, scorer),
    )
    return runner, verified, low


def test_the_controls_take_first_scorings_from_the_ledger_and_score_repeats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first scoring whose seed, sandbox and files match a line is read from it; a
    repeat (DETERMINISM) and a tree the ledger lacks are scored for real."""
    scorer = Scorer(_suite())
    ledger = Ledger(tmp_path / "calibration.jsonl", scorer.stamp.scorer)
    runner, verified, low = _runner(tmp_path, monkeypatch, ledger)
    ledger.add(Entry.of("reference", "seed", "local", "digest-ref", _scored(scorer)))
    ledger.add(Entry.of("LOW", "seed", "local", "digest-low", low))
    try:
        assert runner.score(tmp_path / "ref", "seed").final == _scored(scorer).final
        assert runner.score(tmp_path / "low", "seed").final == low.final
        assert verified == []
        runner.score(tmp_path / "ref", "seed", "again")
        runner.score(tmp_path / "new", "seed")
        runner.score(tmp_path / "low", "other-seed")
        assert verified == ["ref", "new", "low"]
        assert runner.reused == ["ref:ledger", "low:ledger"]
    finally:
        runner.close()


def _lines(path: Path) -> list[tuple[str, str, str]]:
    return [
        (e["tree"], e["seed"], e["digest"]) for e in map(json.loads, path.read_text().splitlines())
    ]


def test_a_first_scoring_with_reuse_becomes_a_ledger_line_and_a_repeat_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """So a controls run's scorings outlive the next commit: its kept scorings' keys hold
    the harness's code, a line only the scorer's."""
    scorer = Scorer(_suite())
    path = tmp_path / "calibration.jsonl"
    ledger = Ledger(path, scorer.stamp.scorer)
    ledger.add(Entry.of("reference", "seed", "local", "digest-ref", _scored(scorer)))
    runner, verified, low = _runner(tmp_path, monkeypatch, ledger)
    try:
        runner.score(tmp_path / "new", "seed")
        runner.score(tmp_path / "low", "seed")
        runner.score(tmp_path / "low", "seed", "again")
    finally:
        runner.close()
    assert verified == ["new", "low", "low"]
    assert _lines(path) == [
        ("LOW", "seed", "digest-low"),
        ("new", "seed", "digest-new"),
        ("reference", "seed", "digest-ref"),
    ]
    again = Ledger(path, scorer.stamp.scorer).find("seed", "local", "digest-new")
    assert again is not None and again.final == low.final


@pytest.mark.parametrize("has_file", [True, False])
def test_no_line_is_written_without_reuse_or_without_a_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, has_file: bool
) -> None:
    scorer = Scorer(_suite())
    path = tmp_path / "calibration.jsonl"
    ledger = Ledger(path, scorer.stamp.scorer)
    if has_file:
        ledger.add(Entry.of("reference", "seed", "local", "digest-ref", _scored(scorer)))
    runner, verified, _ = _runner(tmp_path, monkeypatch, ledger, reuse=not has_file)
    try:
        runner.score(tmp_path / "new", "seed")
    finally:
        runner.close()
    assert verified == ["new"]
    if has_file:  # without --reuse a controls run leaves the scenario's files alone
        assert _lines(path) == [("reference", "seed", "digest-ref")]
    else:  # and a scenario never calibrated gets no ledger from a controls run
        assert not path.exists()


_WRITER = """
import sys
from pathlib import Path
from pydantic import BaseModel
from harness.grader.calibration_ledger import add_lines

class L(BaseModel):
    k: str
    v: int

path, who = Path(sys.argv[1]), sys.argv[2]
for i in range(40):
    add_lines(path, L, lambda line: line.k, [L(k=f"{who}-{i:02d}", v=i)])
"""


def test_writers_in_separate_processes_lose_none_of_each_others_lines(tmp_path: Path) -> None:
    """Two calibrations (or mutant runs) writing one ledger at once: each write merges
    into what is on disk under the ledger's lock, so every line of both survives."""
    path = tmp_path / "ledger.jsonl"
    path.write_text('{"k": "old-kept", "v": 0}\n{"k": "old-dropped", "v": -1}\n')
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path), who]) for who in ("a", "b", "c")
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    keys = [json.loads(line)["k"] for line in path.read_text().splitlines()]
    expected = {f"{who}-{i:02d}" for who in "abc" for i in range(40)} | {"old-kept", "old-dropped"}
    assert set(keys) == expected and len(keys) == len(expected)
    assert keys == sorted(keys)  # sorted: a ledger's diffs stay small


def test_lines_a_writer_does_not_keep_are_dropped_and_a_key_is_replaced(tmp_path: Path) -> None:
    class L(BaseModel):
        k: str
        v: int

    path = tmp_path / "ledger.jsonl"
    path.write_text('{"k": "a", "v": 1}\n{"k": "b", "v": -1}\nnot json\n')
    merged = add_lines(
        path, L, lambda x: x.k, [L(k="a", v=2), L(k="c", v=3)], keep=lambda x: x.v >= 0
    )
    assert [(x.k, x.v) for x in merged] == [("a", 2), ("c", 3)]
    assert path.read_text().splitlines() == ['{"k":"a","v":2}', '{"k":"c","v":3}']
