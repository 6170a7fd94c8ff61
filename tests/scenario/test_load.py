"""Loading a scenario by name: its folder's hash (evidence files, the calibration ledger
among them, left out), the version from the folder's suffix, the files it names checked,
drafts refused, scenarios listed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.scenario.load import folder_hash, list_scenarios, load_scenario, refuse_draft
from harness.scenario.model import DRAFT_INSTRUCTIONS
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit

PY_FAST = REPO_ROOT / "scenarios" / "smoke" / "py-fast"


def _copy(root: Path, name: str) -> Path:
    folder = root / name
    shutil.copytree(PY_FAST, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def test_the_hash_covers_every_file_but_the_evidence(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "smoke/x")
    before = folder_hash(folder)
    (folder / "calibration.jsonl").write_text("{}\n")  # evidence: no new version
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "m.pyc").write_bytes(b"\0")
    for cache in (".mypy_cache", ".ruff_cache", ".pytest_cache"):  # tools run in the folder
        (folder / "suite" / cache / "3.11").mkdir(parents=True)
        (folder / "suite" / cache / "3.11" / "data.json").write_text("{}")
    assert folder_hash(folder) == before
    (folder / "notes.txt").write_text("x")
    noted = folder_hash(folder)
    assert noted != before
    (folder / "notes.txt").rename(folder / "notes2.txt")  # a name is content too
    renamed = folder_hash(folder)
    assert renamed not in (before, noted)
    assert load_scenario("smoke/x", tmp_path).sha256 == renamed


def test_the_folder_suffix_is_the_version_and_must_agree(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "smoke/x-1.2")
    text = (folder / "scenario.yml").read_text()
    lines = [ln for ln in text.splitlines() if not ln.startswith("version:")]
    (folder / "scenario.yml").write_text("\n".join(lines) + "\n")
    loaded = load_scenario("smoke/x-1.2", tmp_path)
    assert loaded.scenario.version == "1.2" and loaded.name == "smoke/x-1.2"
    (folder / "scenario.yml").write_text("\n".join(lines) + '\nversion: "1.2.0"\n')
    assert load_scenario("smoke/x-1.2", tmp_path).scenario.version == "1.2.0"  # 1.2 == 1.2.0
    (folder / "scenario.yml").write_text("\n".join(lines) + '\nversion: "1.3.0"\n')
    with pytest.raises(UserError, match=r"disagrees with the folder suffix -1\.2") as info:
        load_scenario("smoke/x-1.2", tmp_path)
    assert info.value.field == "version"


def test_a_missing_scenario_or_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no scenario named 'smoke/none'") as info:
        load_scenario("smoke/none", tmp_path)
    assert info.value.field == "SCENARIO"
    folder = _copy(tmp_path, "smoke/x")
    text = (folder / "scenario.yml").read_text()
    (folder / "scenario.yml").write_text(text + "spec: SPEC.md\n")
    with pytest.raises(UserError) as info:
        load_scenario("smoke/x", tmp_path)
    assert info.value.field == "spec"


def test_scenarios_are_listed_sorted_without_hidden_folders(tmp_path: Path) -> None:
    for name in ("go/b", "go/a", ".trash/c", "py/.old/d"):
        _copy(tmp_path, name)
    assert list_scenarios(tmp_path) == ["go/a", "go/b"]
    assert list_scenarios(tmp_path / "none") == []


def test_a_mined_draft_is_refused(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "smoke/x")
    refuse_draft(load_scenario("smoke/x", tmp_path))
    text = (folder / "scenario.yml").read_text()
    (folder / "scenario.yml").write_text(
        text.replace("  instructions: |\n", f"  instructions: |\n    {DRAFT_INSTRUCTIONS}\n")
    )
    with pytest.raises(UserError, match="placeholder of a mined draft") as info:
        refuse_draft(load_scenario("smoke/x", tmp_path))
    assert info.value.field == "agent.instructions"


def test_a_locked_folder_keeps_its_hash_when_the_calibration_ledger_grows(
    tmp_path: Path,
) -> None:
    """The ledger is evidence of scorings (a Docker controls run adds lines after the
    lock); any other file, the thresholds among them, is content."""
    from harness.grader.calibration_ledger import LEDGER
    from harness.scenario.load import EVIDENCE_FILES, folder_hash

    assert LEDGER in EVIDENCE_FILES
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "thresholds.yml").write_text("calibrated: true\n")
    before = folder_hash(tmp_path)
    (tmp_path / "suite" / LEDGER).write_text('{"tree": "reference"}\n')
    assert folder_hash(tmp_path) == before
    (tmp_path / "suite" / "thresholds.yml").write_text("calibrated: false\n")
    assert folder_hash(tmp_path) != before
