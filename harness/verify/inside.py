"""Entry point of the verifier inside the scorer container.

``python -m harness.verify.inside [--stage STAGE] REQUEST.json TREE OUT`` grades TREE
and writes ``OUT/outcome.json``. Run with networking disabled; it sees only the copied
tree, the hidden material and the suite. ``--stage``: a read-only folder holding the
request, tree, hidden files and suite, first copied into REQUEST's folder (as this
process's user; symbolic links copied as links, never followed).
"""

from __future__ import annotations

import os
import shutil
import sys
import traceback
from pathlib import Path

import harness
from harness.errors import HarnessError
from harness.util.fs import write_json
from harness.verify.flow import verify_tree
from harness.verify.request import VerifyRequest


def main(argv: list[str]) -> int:
    staged = None
    if argv[:1] == ["--stage"]:
        staged, argv = Path(argv[1]), argv[2:]
    request_path, tree, out = Path(argv[0]), Path(argv[1]), Path(argv[2])
    # whatever this process creates is its own: nobody else may write it (no umask(0))
    os.umask(0o022)
    if staged is not None:
        unstage(staged, request_path.parent)
    out.mkdir(parents=True, exist_ok=True)
    request = VerifyRequest.model_validate_json(request_path.read_text())
    _lock_down(request_path.parent)
    try:
        outcome = verify_tree(tree, request)
    except HarnessError as exc:
        write_json(out / "outcome.json", {"fatal": exc.one_line(), "kind": type(exc).__name__})
        return 2
    except Exception:  # reported to the host as an infrastructure error, with the trace
        write_json(out / "outcome.json", {"fatal": traceback.format_exc(), "kind": "crash"})
        return 3
    write_json(out / "outcome.json", outcome.model_dump(mode="json"))
    return 0


def unstage(staged: Path, root: Path) -> None:
    """Copy the staged verification folder's entries into ``root`` (owned by this user)."""
    root.mkdir(parents=True, exist_ok=True)
    for entry in sorted(staged.iterdir()):
        target = root / entry.name
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, target, symlinks=True, dirs_exist_ok=True)
        else:
            shutil.copy2(entry, target, follow_symlinks=False)


def _lock_down(root: Path) -> None:
    """Make the verification folder and the harness source unreachable for other users.

    The hidden tests (``verify.isolation.test_user``) and an app under test (``appkit.jail``) run as
    unprivileged users of their own; here, in the scorer container, they must not reach
    the request, the suite, the hidden material, the outcome, the trace or the fixture
    code. ``root`` stays traversable (the tests work in ``root/tree``), not listable.
    """

    source = Path(harness.__file__).resolve().parent.parent
    if source != Path("/") and source.is_dir() and source.stat().st_uid == os.geteuid():
        source.chmod(0o700)
    if root == Path("/") or not root.is_dir() or root.stat().st_uid != os.geteuid():
        return
    root.chmod(0o711)
    for child in root.iterdir():
        if child.name != "tree" and not child.is_symlink():
            child.chmod(0o700 if child.is_dir() else 0o600)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
