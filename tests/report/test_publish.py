"""``report --publish``: only calibrated eras, a dated summary folder, a marked block rewritten."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.report.publish import (
    BEGIN,
    END,
    check_markers,
    refuse_uncalibrated,
    update_markdown,
    write_summary_folder,
)
from harness.report.summary import EraTable

pytestmark = pytest.mark.unit


def test_report_publish_refuses_uncalibrated_eras() -> None:
    refuse_uncalibrated([EraTable("tests@1.0.0", [])])
    with pytest.raises(UserError, match="uncalibrated") as info:
        refuse_uncalibrated([EraTable("invoice-sync@2.0.0-rc", [])])
    assert info.value.field == "--publish"


def _tables() -> list[EraTable]:
    return [EraTable("tests@1.0.0", [])]


def test_the_summary_folder_is_named_by_its_utc_time_and_holds_three_files(
    tmp_path: Path,
) -> None:
    now = datetime(2030, 1, 2, 3, 4, 5, tzinfo=UTC)
    folder = write_summary_folder(_tables(), tmp_path, now)
    assert folder == tmp_path / "summary_20300102-030405"
    assert sorted(p.name for p in folder.iterdir()) == ["summary.csv", "summary.json", "summary.md"]
    assert json.loads((folder / "summary.json").read_text())["generated_at"] == now.isoformat()
    assert (folder / "summary.md").read_text().startswith("# Results (2030-01-02T03:04:05+00:00)")


def test_only_the_marked_block_is_rewritten(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{BEGIN}\nold table\n{END}\noutro\n")
    update_markdown(_tables(), readme, tmp_path / "summary_x")
    text = readme.read_text()
    assert text.startswith(f"intro\n{BEGIN}\n**era `tests@1.0.0`**") and text.endswith(
        f"{END}\noutro\n"
    )
    assert "old table" not in text and "_Generated into `summary_x`._" in text
    update_markdown(_tables(), readme)
    assert readme.read_text().count(BEGIN) == 1 and "_Generated" not in readme.read_text()


def test_a_target_without_markers_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    for text in ("no markers\n", f"{END}\n{BEGIN}\n"):
        readme.write_text(text)
        with pytest.raises(UserError, match="markers are missing") as info:
            check_markers(readme)
        assert info.value.field == BEGIN and readme.read_text() == text
    with pytest.raises(UserError, match="file not found"):
        check_markers(tmp_path / "absent.md")
    with pytest.raises(UserError, match="file not found"):
        update_markdown(_tables(), tmp_path / "absent.md")
