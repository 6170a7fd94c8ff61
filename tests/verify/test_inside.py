"""The scorer container's verifier copies its read-only staged folder into /verify itself
(``harness.verify.inside --stage``): the tree, hidden files and suite arrive by a mount,
not an archive, and are the verifier's own once copied."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.verify.inside import unstage


@pytest.mark.unit
def test_unstage_copies_every_entry_and_keeps_links_as_links(tmp_path: Path) -> None:
    staged = tmp_path / "stage"
    (staged / "tree" / "pkg").mkdir(parents=True)
    (staged / "tree" / "pkg" / "mod.py").write_text("X = 1\n")
    (staged / "tree" / "run.sh").write_text("#!/bin/sh\n")
    (staged / "tree" / "run.sh").chmod(0o755)
    (staged / "tree" / "outside").symlink_to("/etc/passwd")  # never followed
    (staged / "hidden").mkdir()
    (staged / "request.json").write_text("{}")
    for path in [staged, *staged.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode & ~0o222)  # a read-only mount's view
    root = tmp_path / "verify"
    root.mkdir()
    try:
        unstage(staged, root)
    finally:
        for path in [staged, *staged.rglob("*")]:
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | 0o200)
    assert sorted(p.name for p in root.iterdir()) == ["hidden", "request.json", "tree"]
    assert (root / "tree" / "pkg" / "mod.py").read_text() == "X = 1\n"
    assert os.access(root / "tree" / "run.sh", os.X_OK)
    link = root / "tree" / "outside"
    assert link.is_symlink() and os.readlink(link) == "/etc/passwd"
    assert (root / "request.json").stat().st_uid == os.geteuid()
    assert not (root / "stage").exists()  # its entries, not the folder itself
