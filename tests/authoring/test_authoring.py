"""Authoring without snags: check's summary to paste, a clone error naming the repository
cache, a locked folder's hash unmoved by its calibration ledger."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.support.authoring import PY_FAST, cli, draft


@pytest.mark.integration
def test_check_prints_a_summary_to_paste(project: Path) -> None:
    shutil.copytree(PY_FAST, project / "scenarios" / "smoke" / "py-fast")
    done = cli(project, "check", "smoke/py-fast", "--sandbox", "local")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "### harness check: smoke/py-fast v1.0.0" in out and "**READY**" in out
    assert re.search(r"\| validate[^|]* \| ok \|", out)
    assert "| controls | ok | GRADER TRUSTED" in out
    assert "| entrant oracle | ok | success" in out and "| entrant nop | ok | failed" in out
    assert "| lock | ok | draft" in out and "| placeholders | ok |" in out


@pytest.mark.integration
def test_clone_error_names_the_repo_cache(project: Path, tmp_path: Path) -> None:
    folder = draft(project)
    yml = folder / "scenario.yml"
    missing = (tmp_path / "nowhere" / "acme.git").as_uri()
    yml.write_text(yml.read_text().replace("repo: repo.bundle", f"repo: {missing}"))
    done = cli(project, "validate", "t/clamp")
    assert done.returncode == 2 and "cannot clone" in done.stderr
    assert "HARNESS_REPO_CACHE" in done.stderr


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
