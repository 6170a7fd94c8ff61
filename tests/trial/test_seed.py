"""A trial's secret seed: fresh each time, kept outside the workspace, tied to its baseline."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import UserError
from harness.trial import seed as trialseed

pytestmark = pytest.mark.unit


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
