"""The verdict's walls that the code under test cannot reach: parity and twins.

``Walls`` wraps one verification's targets:

1. before any target of the candidate runs, the reference tree's outcome is measured
   (``verify.reference``): per target, the tests it passes and, for the negative twins
   (``verify.twin``; Python: ``verify.pytwin``), the twin tests it fails;
2. each candidate target's result is held to the reference (``verify.parity``): a test
   the reference passes counts only if the candidate passes it, and a target where
   nothing passed fails;
3. where the reference fails twin tests, the candidate's twin runs in a fresh copy of
   the tree taken before any of its code ran (so nothing a target run left behind tells
   a twin run from a target run), with the test user's files in the shared temporary
   folders removed between runs; a test passed in both is forged.

All three are comparisons made by the controller after every process of a run is dead.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from harness.util.deeptree import remove_tree
from harness.util.fs import copy_destinations, hidden_paths
from harness.verify import pytwin, twin
from harness.verify.isolation.held_names import reject
from harness.verify.isolation.test_user import hand_over
from harness.verify.outcome import TargetResult
from harness.verify.parity import hold_to
from harness.verify.reference import Reference, measure
from harness.verify.request import VerifyRequest

RunOne = Callable[[str, str, Path], TargetResult]
SHARED_TMP = ("/tmp", "/var/tmp", "/dev/shm")
WIPE_CAP = 100_000  # entries looked at per folder


def twin_sources(request: VerifyRequest, tree: Path) -> dict[str, bytes]:
    """Tree-relative hidden test file -> its twin's bytes (Python hidden tests only),
    read from the trusted hidden sources, never from the tree."""
    if request.runner == "go":
        return {}
    pairs: list[tuple[Path, Path]] = []
    root = Path(request.hidden_root)
    for step in request.copy_:
        with contextlib.suppress(ValueError, OSError):
            pairs += copy_destinations(root / step.from_, step.to, tree)
    if request.tests_from_root:
        held = hidden_paths(Path(request.tests_from_root), request.tests_from)
        pairs += [(s, tree / r) for s, r in held]
    out: dict[str, bytes] = {}
    base = tree.resolve()
    for src, dest in pairs:
        if dest.suffix != ".py" or not src.is_file():
            continue
        made = pytwin.twin_source(src.read_bytes())
        if made is not None:
            out[dest.resolve().relative_to(base).as_posix()] = made
    return out


def write_twins(tree: Path, twins: dict[str, bytes]) -> bool:
    """Put the twins at the hidden tests' places in ``tree``; True when any was written."""
    for rel, data in twins.items():
        path = tree / rel
        if path.is_symlink():
            path.unlink()
        if path.exists():
            path.chmod(0o644)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(0o444)
    return bool(twins)


def wipe_user_files(uid: int | None, *, alone: bool) -> None:
    """Remove what ``uid`` (the test user, never the controller) left in the shared
    temporary folders: no state carries from one test run into the next. ``alone``: the
    verifier is alone on its machine (the scorer container); on a host other
    verifications' test homes (``harness-*``, the same test uid) are left alone, and so
    is a forger's file named like one (a speed bump there, a wall in Docker)."""
    if uid is None or uid == os.geteuid():
        return
    for folder in SHARED_TMP:
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for n, entry in enumerate(entries):
                if n >= WIPE_CAP:
                    break
                if not alone and entry.name.startswith("harness-"):
                    continue
                try:
                    if entry.stat(follow_symlinks=False).st_uid != uid:
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        remove_tree(entry.path)
                    else:
                        os.unlink(entry.path)
                except OSError:
                    continue


class Walls:
    """Parity and twins for one verification of ``tree``."""

    def __init__(
        self, tree: Path, request: VerifyRequest, uid: int | None, hidden: list[str]
    ) -> None:
        self.tree = tree
        self.request = request
        self.uid = uid
        self.hidden = hidden
        self.twins = twin_sources(request, tree)
        self.reference = Reference()
        self.pristine: Path | None = None
        self.forged: list[str] = []

    def measure(
        self, targets: list[tuple[str, str]], run: RunOne, copy_hidden: Callable[[Path], list[str]]
    ) -> Reference:
        """The reference's outcome; then a copy of the tree before any candidate run."""
        self.reference = measure(
            self.tree,
            self.request,
            targets,
            run,
            copy_hidden,
            self.uid,
            twins=(lambda t: write_twins(t, self.twins)) if self.twins else None,
        )
        if any(self.reference.twin_failed.values()):
            tmp = Path(tempfile.mkdtemp(prefix="harness-twin-"))
            shutil.copytree(self.tree, tmp / "tree", symlinks=True)
            self.pristine = tmp / "tree"
        return self.reference

    def judge(self, result: TargetResult, run: RunOne) -> TargetResult:
        """``result`` held to the reference; rejected when it passes its twin too."""
        wipe_user_files(self.uid, alone=not self.request.test_reads_all)
        held = hold_to(result, self.reference.expected(result.target))
        failing = self.reference.twin_failed.get(result.target) or []
        if not failing or self.pristine is None or held.passed == 0:
            return held
        work = self.pristine.parent / "run"
        remove_tree(work)
        shutil.copytree(self.pristine, work, symlinks=True)
        try:
            write_twins(work, self.twins)
            hand_over(work, self.uid, [work / h for h in self.hidden])
            ran = run(result.target, result.kind, work)
        finally:
            remove_tree(work)
            wipe_user_files(self.uid, alone=not self.request.test_reads_all)
        why = twin.judgement(twin.forged_names(held, ran, failing))
        if why is None:
            return held
        self.forged.append(f"{result.target}: {why}")
        return reject(held, why)

    def close(self) -> None:
        if self.pristine is not None:
            remove_tree(self.pristine.parent)
            self.pristine = None
