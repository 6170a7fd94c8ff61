"""The agent phase's watch counts entries as it counts bytes (unit, real files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.sandbox import limits
from harness.sandbox.limits import LimitWatch, tree_usage

pytestmark = pytest.mark.unit


def test_too_many_entries_is_a_disk_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "many").mkdir()
    for i in range(60):
        (tmp_path / "many" / str(i)).touch()
    assert tree_usage(tmp_path, 10)[1] == 11  # stops counting once over the cap
    assert tree_usage(tmp_path)[1] == 61
    monkeypatch.setattr(limits, "MAX_FILES", 50)
    watch = LimitWatch(container_id="none", workspace=tmp_path, workspace_cap=10**9)
    found = watch.check()
    assert found is not None and found[0] == "disk" and "entries" in found[1]
    monkeypatch.setattr(limits, "MAX_FILES", 100)
    watch = LimitWatch(container_id="none", workspace=tmp_path, workspace_cap=10**9)
    assert watch.check() is None  # empty files under the cap: no limit
