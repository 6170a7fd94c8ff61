"""scripts/slot_chain.py: the app-scoring slot's chain as .ci/run prints it."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO_ROOT
from tests.support.modules import load_file


def _module() -> ModuleType:
    return load_file(REPO_ROOT / "scripts" / "slot_chain.py")


def test_chain_span_idle_and_holders() -> None:
    rows = [
        {"who": "tests/b.py::t (call)", "began": 1010.0, "waited_s": 5.0, "held_s": 20.0},
        {"who": "tests/a.py::t (setup)", "began": 1000.0, "waited_s": 0.0, "held_s": 10.0},
        {"who": "tests/b.py::t (call)", "began": 1040.0, "waited_s": 0.0, "held_s": 10.0},
    ]
    lines = _module().summarize(rows, t0=990.0)
    assert lines[0] == "::: app-scoring slot: 3 holds, 40s held in a row, 5s waited"
    # 1000 to 1050: 50 s of span, 40 held, 10 idle (between 1030 and 1040)
    assert lines[1] == "::: chain span 50s (+10s to +60s of the tests), slot idle 10s in it"
    assert lines[2] == ":::   idle    10s at +40s: after tests/b.py::t, before tests/b.py::t"
    assert lines[3:] == [":::       30s  tests/b.py::t", ":::       10s  tests/a.py::t"]


def test_gaps_longest_first_short_ones_left_out_overlaps_are_not_gaps() -> None:
    rows = [
        {"who": "a (call)", "began": 1000.0, "waited_s": 0.0, "held_s": 10.0},
        {"who": "b (call)", "began": 1005.0, "waited_s": 0.0, "held_s": 20.0},  # overlaps a
        {"who": "c (call)", "began": 1030.0, "waited_s": 0.0, "held_s": 5.0},  # 5 s after b
        {"who": "d (call)", "began": 1060.0, "waited_s": 0.0, "held_s": 5.0},  # 25 s after c
        {"who": "e (call)", "began": 1080.0, "waited_s": 0.0, "held_s": 5.0},  # 15 s after d
    ]  # no T0: offsets from the first hold
    idle = [x for x in _module().summarize(rows) if "idle " in x and "span" not in x]
    assert idle == [
        ":::   idle    25s at +35s: after c, before d",
        ":::   idle    15s at +65s: after d, before e",
    ]


def test_old_logs_without_start_and_an_empty_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mod = _module()
    assert mod.summarize([]) == ["::: app-scoring slot: no holds logged"]
    log = tmp_path / "slot.jsonl"
    log.write_text(json.dumps({"who": "x", "waited_s": 1.0, "held_s": 2.0}) + "\n\n")
    assert mod.main([str(log)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["::: app-scoring slot: 1 holds, 2s held in a row, 1s waited", ":::        2s  x"]
