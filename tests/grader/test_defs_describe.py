"""Describing one tree's suite in a process of its own (grader/defs_describe.py): the entry
point loads a suite folder as the harness does and prints one JSON object (roots, nodes,
effects, modules imported and loaded); old module names ``--moved`` are imported as their
new homes and spelled as them (what the graph holds: tests/grader/test_defs_graph.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit

SUITE = '''\
"""A tiny suite."""
import contextlib
from pathlib import Path

from harness.scoring import Suite, graded
from KIT import fetch

HERE = Path(__file__).resolve().parent
suite = Suite(name="tiny", version="1.0.0", tier_weights={"core": 1.0},
              thresholds=HERE / "thresholds.yml")


@contextlib.contextmanager
def context(tree, seed, evidence_dir):
    yield fetch.get


@suite.check("one", tier="core", harm="nothing seen")
def one(ev):
    return graded(1.0)
'''


def run(tmp_path: Path, kit: str, moves: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The entry point on a suite folder whose suite imports the app kit as ``kit``."""
    suite_dir = tmp_path / "scenario" / "suite"
    suite_dir.mkdir(parents=True, exist_ok=True)
    (suite_dir / "suite.py").write_text(SUITE.replace("KIT", kit))
    (suite_dir / "thresholds.yml").write_text("calibrated: false\nhigh: 0.9\nlow: 0.1\n")
    (suite_dir / "unused.py").write_text("X = 1\n")
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(tmp_path / "pyc")}
    return subprocess.run(
        [sys.executable, "-m", "harness.grader.defs_describe", str(suite_dir), json.dumps(moves)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def said(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.strip().splitlines()  # one JSON object, on a line of its own
    got = json.loads(line)
    assert isinstance(got, dict)
    return got


def test_a_suite_folder_is_printed_as_one_json_object(tmp_path: Path) -> None:
    got = said(run(tmp_path, "harness.appkit", {}))
    assert set(got) == {"roots", "nodes", "effects", "imported", "modules", "problems"}
    assert got["modules"] == ["suite.py"] and got["problems"] == []
    suite, context = got["nodes"][got["roots"]["suite"]["ref"]], got["roots"]["context"]
    assert suite["type"] == {"ext": "harness.scoring.suite:Suite", "cells": 0}
    assert ["version", {"str": "1.0.0"}] in suite["state"]
    assert "thresholds" in json.dumps(suite["state"]) and "<tree>" in json.dumps(suite["state"])
    # the two decorated definitions are the load's effects; the rest is inert
    assert sorted(e[0] for e in got["effects"]) == ["def", "def"]
    assert ["def", context] in got["effects"]


def test_an_old_module_name_moved_is_imported_as_its_new_home(tmp_path: Path) -> None:
    old = "harness.scoring.appkit"
    refused = run(tmp_path, old, {})
    assert refused.returncode != 0 and "ModuleNotFoundError" in refused.stderr
    got = said(run(tmp_path, old, {old: "harness.appkit"}))
    text = json.dumps(got)
    assert '"ext": "harness.appkit.fetch:get"' in text and old not in text
    assert got == said(run(tmp_path, "harness.appkit", {}))  # the same as the new spelling
