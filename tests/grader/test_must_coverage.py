"""`harness coverage SCENARIO`: every SPEC MUST of invoice-sync is verified and violated
alone; a MUST left without its exact defect is refused (exit 1), naming it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli import app

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def _run(monkeypatch: pytest.MonkeyPatch, root: Path, results: Path) -> tuple[int, str]:
    monkeypatch.setenv("HARNESS_SCENARIO_ROOT", str(root))
    monkeypatch.setenv("HARNESS_RESULTS", str(results))
    got = CliRunner().invoke(app, ["coverage", "apps/invoice-sync"])
    return got.exit_code, got.stdout


def test_invoice_sync_covers_every_must(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    code, out = _run(monkeypatch, ROOT / "scenarios", tmp_path)
    assert code == 0, out
    assert "COVERED: 23 MUSTs" in out and "M-SYNC-3" in out and "first-backoff-0.16" in out


def test_a_must_without_its_exact_defect_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = tmp_path / "scenarios"
    shutil.copytree(ROOT / "scenarios" / "apps" / "invoice-sync", root / "apps" / "invoice-sync")
    for ext in ("patch", "yml"):
        (root / "apps" / "invoice-sync" / "defects" / f"newest-first-page.{ext}").unlink()
    code, out = _run(monkeypatch, root, tmp_path / "results")
    assert code == 1
    assert "M-UI-2" in out and "NO DEFECT" in out and "NOT COVERED: M-UI-2" in out
