"""What the containment control finds left on the host: an entry in a world-writable
folder named with the attack's token, or owned by a uid the tree's code runs as (but
for harness's and test runners' own temporary folders, which other trials make)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.grader.containment.control import TREE_UIDS, left_on_host, writable_folders

pytestmark = pytest.mark.unit


def test_world_writable_folders_are_found_and_own_temp_folders_skipped(tmp_path: Path) -> None:
    shared = tmp_path / "run" / "lock"
    shared.mkdir(parents=True)
    shared.chmod(0o1777)
    inner = tmp_path / "harness-verify-x" / "tree"  # a trial's own: not descended into
    inner.mkdir(parents=True)
    inner.chmod(0o777)
    found = writable_folders(tmp_path, depth=3)
    assert shared in found and inner not in found


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another uid needs root")
def test_left_by_token_or_by_a_tree_uid(tmp_path: Path) -> None:
    token = "harness-token-abc"
    (tmp_path / f"x-{token}").write_text("")
    theirs = tmp_path / "lockfile"
    theirs.write_text("")
    os.chown(theirs, min(TREE_UIDS), min(TREE_UIDS))
    own = tmp_path / "harness-testhome-1"  # another trial's home: its owner proves nothing
    own.mkdir()
    os.chown(own, min(TREE_UIDS), min(TREE_UIDS))
    (tmp_path / "mine").write_text("")  # root's
    left = left_on_host(token, [tmp_path])
    assert left == sorted([str(tmp_path / f"x-{token}"), str(theirs)])
