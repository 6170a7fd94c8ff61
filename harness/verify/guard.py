"""Before each test target: the tree as the hidden suite expects it; after: a check.

``TestGuard`` ties the pieces of a verdict the code under test cannot reach: runner-steering
files back to the baseline (``restore``), no link on the way to the hidden tests, the
hidden tests copied (again, before every target: an earlier target's code may have
changed them), the tree handed to the test user (``isolation.test_user``), and, once a target ran,
its result refused when it names tests the suite does not hold (``isolation.held_names``).
"""

from __future__ import annotations

import contextlib
import os
import shlex
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from harness.config.settings import Settings
from harness.provision.toolchain import expand
from harness.util.deeptree import walk
from harness.util.fs import copy_destinations, hidden_paths
from harness.verify.isolation.held_names import held_names, reject, rejected_for, rejection
from harness.verify.isolation.restore import (
    Restored,
    apply,
    baseline_blobs,
    blob_id,
    restore_runner_files,
)
from harness.verify.isolation.test_root import make_root
from harness.verify.isolation.test_user import (
    TestUser,
    effective_user,
    hand_over,
    statement,
    take_back,
)
from harness.verify.outcome import TargetResult
from harness.verify.request import VerifyRequest


def target_scopes(runner: str, target: str, tree: Path) -> list[str]:
    """The tree folders a target collects tests from ("." = everywhere)."""
    tokens = shlex.split(target)
    if runner == "go":
        pattern = tokens[0] if tokens else "."
        if pattern.endswith(".go") or any(c in pattern for c in "*?["):
            return [PurePosixPath(pattern).parent.as_posix()]
        pattern = pattern.removeprefix("./").rstrip("/")
        if pattern.endswith("..."):
            return [pattern.removesuffix("...").rstrip("/") or "."]
        return [pattern or "."]
    out: list[str] = []
    for tok in tokens:
        path = tok.split("::", 1)[0]
        if tok.startswith("-") or not path or not (tree / path).exists():
            continue
        rel = PurePosixPath(path.removeprefix("./"))
        out.append(rel.as_posix() if (tree / path).is_dir() else rel.parent.as_posix())
    return out


def _project_folders() -> list[Path]:
    """The results, workspaces and scenarios of this host (never inside a test root)."""
    with contextlib.suppress(Exception):  # no settings: the request's own paths still count
        s = Settings.from_env()
        return [s.results, s.workspace, s.scenario_root]
    return []


def test_user_for(request: VerifyRequest) -> TestUser | None:
    """Who the hidden tests run as, and (where namespaces can be made) the allow-list
    root they see (``isolation.test_root``): the request's interpreter, toolchain and
    dependency folders; never the scenario, its solution, suite or evidence."""
    if request.test_uid is None or os.geteuid() != 0:
        return effective_user(request.test_uid, request.test_reads_all)
    protected = [
        request.hidden_root,
        request.tests_from_root,
        request.suite_dir,
        request.solution_file,
        request.spec_file,
        request.evidence_dir,
        *_project_folders(),
    ]
    env = expand(request.env, dict(os.environ))
    root = make_root(request.python, request.env, env, protected)
    return effective_user(request.test_uid, request.test_reads_all, root)


HELD_CAP = 16 * 1024 * 1024
HELD_ENTRIES = 400_000  # entries listed per tested folder (a tree is refused over 200,000)


class TestGuard:
    """One verification's guard over ``tree`` (a copy of the agent's workspace)."""

    __test__ = False  # not a pytest class

    def __init__(
        self, tree: Path, request: VerifyRequest, copy_hidden: Callable[[], list[str]]
    ) -> None:
        self.tree = tree
        self.request = request
        self.copy_hidden = copy_hidden
        self.user = test_user_for(request)
        self.uid = self.user.uid if self.user else None
        self.blobs = baseline_blobs(tree, request.baseline)
        dests = self._destinations()
        self.hidden = [d.relative_to(tree.resolve()).as_posix() for d in dests]
        self.scopes = sorted(
            {PurePosixPath(h).parent.as_posix() for h in self.hidden}
            | {
                s
                for t in [*request.tests, *request.partial_tests]
                for s in target_scopes(request.runner, t, tree)
            }
        )
        self.restored: dict[str, Restored] = {}
        self.rejected: list[str] = []
        self.held: set[str] | None = None

    def _destinations(self) -> list[Path]:
        out: list[Path] = []
        root = Path(self.request.hidden_root)
        for step in self.request.copy_:
            self._clear_way(step.to)
            try:
                out += [d for _, d in copy_destinations(root / step.from_, step.to, self.tree)]
            except ValueError:
                continue  # refused by copy_hidden itself, as before
        if self.request.tests_from_root:  # the fix commit's tests (verify.tests-from)
            for _, rel in hidden_paths(Path(self.request.tests_from_root), self.request.tests_from):
                self._clear_way(PurePosixPath(rel).parent.as_posix())
                out.append(self.tree / rel)
        return out

    def _clear_way(self, to: str) -> None:
        """No link (nor a file where a folder goes) stands on the hidden tests' way."""
        parts = [p for p in PurePosixPath(to).parts if p not in ("", ".")]
        here = self.tree
        for i, part in enumerate(parts):
            here = here / part
            last = i == len(parts) - 1
            if here.is_symlink() or (not last and here.exists() and not here.is_dir()):
                rel = here.relative_to(self.tree).as_posix()
                action = "restored" if rel in self.blobs else "removed"
                item = Restored(rel, "link on the way to the hidden tests", action)
                apply(self.tree, self.request.baseline, self.blobs, [item])
                self.restored.setdefault(rel, item)
                return

    def prepare(self) -> list[str]:
        """Restore runner files, copy the hidden tests, hand the tree to the test user;
        returns the hidden files written."""
        req = self.request
        for item in restore_runner_files(
            self.tree, req.baseline, req.runner, self.scopes, req.runner_files
        ):
            if item.path not in self.hidden:
                self.restored.setdefault(item.path, item)
        for rel in self.hidden:  # a link planted at a hidden file's place is not written through
            dest = self.tree / rel
            if dest.is_symlink():
                dest.unlink()
        written = self.copy_hidden()
        hand_over(self.tree, self.uid, [self.tree / h for h in self.hidden])
        if self.held is None:
            self.held = self._held_names()
        return written

    def _held_names(self) -> set[str]:
        """Names declared by the test sources in the tested folders that are the
        baseline's or the hidden suite's (never by a file the agent wrote)."""
        suffix = "_test.go" if self.request.runner == "go" else ".py"
        texts: list[str] = []
        for scope in self.scopes:
            base = self.tree / scope if scope != "." else self.tree
            if not base.is_dir():
                continue
            found = [
                Path(folder) / name
                for folder, _dirs, files in walk(base, max_entries=HELD_ENTRIES)
                for name in files
                if name.endswith(suffix)
            ]
            for path in sorted(found):
                if ".git" in path.relative_to(self.tree).parts or path.is_symlink():
                    continue
                rel = path.relative_to(self.tree).as_posix()
                if not path.is_file() or path.stat().st_size > HELD_CAP:
                    continue  # a special or huge file declares nothing the suite holds
                data = path.read_bytes()
                if rel in self.hidden or self.blobs.get(rel) == blob_id(data):
                    texts.append(data.decode(errors="replace"))
        return held_names(texts, self.request.runner)

    def check(self, result: TargetResult) -> TargetResult:
        """``result`` as parsed, or rejected when the suite cannot have produced it."""
        why = rejected_for(result)  # refused by its runner (the canary): recorded as such
        if why is not None:
            self.rejected.append(f"{result.target}: {why}")
            return result
        why = rejection(result, self.held or set(), self.request.runner)
        if why is None:
            return result
        self.rejected.append(f"{result.target}: {why}")
        return reject(result, why)

    def finish(self) -> None:
        if self.uid is not None:
            take_back(self.tree)

    def fields(self, forged: list[str] | None = None) -> dict[str, object]:
        """The outcome's record of what the guard did (and the twins' ``forged`` lines)."""
        return {
            "restored": [r.line() for r in self.restored.values()],
            "rejected": [*self.rejected, *(forged or [])],
            "test_user": statement(self.user),
        }
