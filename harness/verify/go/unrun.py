"""Every test of the hidden suite that a Go target selects must be reported.

The canary (``verify.go.canary``) proves that the test binary ran the canary as written,
not that it ran the rest: code of the agent's that runs before the tests (an ``init()``)
can rewrite ``os.Args`` so that ``-test.run`` selects the canary alone, or the canary
and the tests it found passing in a run of its own. ``go test`` then reports only the
canary failing, which is what an honest run of correct code looks like. So the tests
the hidden files declare in the target's packages, filtered by the target's ``-run``
(its first level, as ``go test`` applies it to top-level tests), must each appear in the
event stream as passed, failed or skipped; a missing one means the suite was not run as
written. A declaration harness cannot be sure Go compiles here (a file with a build
constraint, a platform suffix or cgo) is not required. Pure over text and the tree.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from harness.util import bounded
from harness.verify.go.canary import GoCanary, split_run
from harness.verify.outcome import TestCase

#: ``func TestXxx(t *testing.T)`` as ``go test`` finds tests (Xxx not lower-case)
DECLARED = re.compile(r"^func\s+(Test(?:[^\Wa-z]\w*)?)\s*\(\s*\w+\s+\*testing\.T\s*\)", re.M)
CONSTRAINED = re.compile(r"^//(?:go:build|\s*\+build)\s", re.M)
CGO = re.compile(r'^import\s+(?:\(\s*)?"C"', re.M)
_OS = "aix android darwin dragonfly freebsd hurd illumos ios js linux nacl netbsd openbsd plan9"
_MORE_OS = "solaris wasip1 windows zos"
_ARCH = "386 amd64 arm arm64 loong64 mips mipsle mips64 mips64le ppc64 ppc64le riscv64 s390x wasm"
PLATFORMS = frozenset(f"{_OS} {_MORE_OS} {_ARCH} sparc64".split())
MAX_SOURCE = 4 * 1024 * 1024


def _sure(name: str, text: str) -> bool:
    """Whether Go compiles this test file on any machine: no build constraint, no
    ``_GOOS``/``_GOARCH`` suffix, no cgo."""
    stem = name.removesuffix("_test.go")
    if stem.rsplit("_", 1)[-1] in PLATFORMS and "_" in stem:
        return False
    return not CONSTRAINED.search(text) and not CGO.search(text)


def _files(tree: Path, hidden: Iterable[str]) -> Iterable[str]:
    """The hidden ``_test.go`` files, relative to ``tree`` (a copied folder walked)."""
    for rel in hidden:
        path = tree / rel
        if path.is_dir() and not path.is_symlink():
            for here, _, files in os.walk(path):
                for f in sorted(files):
                    yield Path(here, f).relative_to(tree).as_posix()
        else:
            yield rel


def declared(tree: Path, canary: GoCanary, hidden: Sequence[str], run: str | None) -> set[str]:
    """``<import path>.<Test>`` for each test the hidden files declare in the canary's
    packages that ``run`` selects (empty when its first level is no Python regex)."""
    try:
        selects = re.compile(split_run(run)[0]) if run else None
    except re.error:
        return set()
    packages = {rel: canary.import_path(rel) for rel, _ in canary.dirs}
    out: set[str] = set()
    for rel in _files(tree, hidden):
        folder, name = os.path.split(rel)
        package = packages.get(folder or ".")
        if package is None or not name.endswith("_test.go") or name.startswith(("_", ".")):
            continue
        path = tree / rel
        if path.is_symlink() or not path.is_file():
            continue
        with open(path, errors="replace") as fh:
            text = fh.read(MAX_SOURCE)
        if not _sure(name, text):
            continue
        for test in DECLARED.findall(text):
            if test != "TestMain" and (selects is None or selects.search(test)):
                out.add(f"{package}.{test}")
    return out


def reported(stdout: str) -> set[str]:
    """``<package>.<Test>`` for each top-level test the event stream ends."""
    out: set[str] = set()
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue
        parsed, ev = bounded.json_value(line)  # printed by the code under test, maybe
        if not parsed:
            continue
        if not isinstance(ev, dict) or ev.get("Action") not in {"pass", "fail", "skip"}:
            continue
        test = ev.get("Test")
        if isinstance(test, str) and test and "/" not in test:
            out.add(f"{ev.get('Package', '')}.{test}")
    return out


def unrun(
    tree: Path, canary: GoCanary, hidden: Sequence[str], run: str | None, stdout: str
) -> str | None:
    """Why the run left out tests of the hidden suite (None: every one was reported)."""
    missing = sorted(declared(tree, canary, hidden, run) - reported(stdout))
    if not missing:
        return None
    more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
    return f"results forged: {missing[0]} of the hidden suite did not run{more}"


def unselected(cases: Iterable[TestCase], run: str | None) -> str | None:
    """Why the run passed a test its ``-run`` does not select (None: it passed none):
    code under test printed a ``--- PASS`` line for it, which go 1.19's test2json takes
    for a result (no judgement when the first level is no Python regex)."""
    try:
        selects = re.compile(split_run(run)[0]) if run else None
    except re.error:
        return None
    for case in cases:
        top = case.name.split("/", 1)[0]
        if selects is not None and case.passed and not case.synthetic and not selects.search(top):
            return f"results forged: {top} passed, but the target's -run does not select it"
    return None
