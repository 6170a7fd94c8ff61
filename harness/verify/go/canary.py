"""A canary for forged ``go test`` results: one test that must fail, in every test binary.

The agent's packages are linked into the hidden tests' binary, so an ``init()`` of theirs
runs before any test and can print a passing ``go test`` stream and exit 0 (``test2json``
turns it into pass events for the suite's own names), which the names check cannot tell
from a real run. So beside every package a Go target tests, harness writes one file just
before the run: an external test package (``<name>_test``: it imports only ``testing``
and packages ``testing`` links anyway, so nothing of the tree is rebuilt for it) with a
random test name and a random failure message, added to the target's ``-run`` pattern.
A package that reported events but not its canary failing with that message did not
run its tests as written: the target is rejected. Before it fails, the canary checks
that the binary's output still leads straight to ``go test`` and, when it does not,
ends the binary without failing (``verify.go.output``): a filter that rewrites the
stream's failures is rejected the same way. A package that reported nothing is not
judged here (the pattern did not reach it; its build failure is reported as such).
Pure apart from ``write`` and ``remove``.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from harness.util import bounded
from harness.verify.go import output
from harness.verify.outcome import TestCase

PACKAGE = re.compile(r"^package\s+([A-Za-z_]\w*)", re.MULTILINE)
MODULE = re.compile(r"^module\s+\"?([^\s\"]+)\"?", re.MULTILINE)
SKIPPED_DIRS = ("testdata", "vendor")
MAX_PACKAGES = 500  # a pattern over more packages than this runs without a canary


def split_run(pattern: str) -> list[str]:
    """``-run``'s levels as ``go test`` splits them: at each ``/`` outside ``[]`` and
    ``()`` (a backslash escapes the next character)."""
    levels, depth, cls, start, i = [], 0, False, 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if cls:
            cls = c != "]"
        elif c == "[":
            cls = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth = max(0, depth - 1)
        elif c == "/" and depth == 0:
            levels.append(pattern[start:i])
            start = i + 1
        i += 1
    return [*levels, pattern[start:]]


def _package_name(folder: Path) -> str | None:
    """The external test package's name for ``folder``, from its own test files."""
    names: dict[str, int] = {}
    for f in sorted(folder.glob("*_test.go")):
        if f.is_symlink() or not f.is_file() or f.name.startswith(("_", ".")):
            continue
        with open(f, errors="replace") as fh:
            m = PACKAGE.search(fh.read(64 * 1024))
        if m:
            base = m.group(1).removesuffix("_test")
            names[base] = names.get(base, 0) + 1
    return max(sorted(names), key=lambda n: names[n]) + "_test" if names else None


def _inside(tree: Path, rel: str) -> bool:
    """Whether ``tree/rel`` is a real folder of the tree (no link on the way)."""
    real = os.path.realpath(tree)
    path = os.path.join(real, rel) if rel != "." else real
    return os.path.realpath(path) == os.path.normpath(path) and os.path.isdir(path)


def package_dirs(pattern: str, tree: Path) -> list[str]:
    """The folders (relative to ``tree``) holding test files that ``pattern`` tests:
    one folder, or every folder below one for ``/...``, as ``go test`` walks them (not
    into ``testdata``, ``vendor``, ``_``/``.`` folders, other modules or links)."""
    root, walk = pattern, False
    if root.endswith("/...") or root == "...":
        root, walk = root.removesuffix("...").rstrip("/") or ".", True
    root = os.path.normpath(root.removeprefix("./") or ".")
    if root.startswith("..") or os.path.isabs(root) or not _inside(tree, root):
        return []
    found: list[str] = []
    for here, subdirs, files in os.walk(tree / root):
        rel = os.path.relpath(here, tree)
        subdirs[:] = sorted(
            d
            for d in subdirs
            if walk
            and not d.startswith(("_", "."))
            and d not in SKIPPED_DIRS
            and not os.path.islink(os.path.join(here, d))
            and not os.path.exists(os.path.join(here, d, "go.mod"))
        )
        if any(f.endswith("_test.go") and not f.startswith(("_", ".")) for f in files):
            found.append(rel)
        if len(found) > MAX_PACKAGES:
            return []
    return found


def module_path(tree: Path) -> str | None:
    try:
        with open(tree / "go.mod", errors="replace") as fh:
            m = MODULE.search(fh.read(64 * 1024))
    except OSError:
        return None
    return m.group(1) if m else None


@dataclass(frozen=True)
class GoCanary:
    """The canary files of one Go run: the folders, the file name, test and message."""

    dirs: tuple[tuple[str, str], ...]  # (folder relative to the tree, package name)
    module: str
    file: str
    func: str
    message: str

    @classmethod
    def plan(cls, pattern: str, tree: Path) -> GoCanary | None:
        """A canary for the packages ``pattern`` tests, or None when there is none to
        give (no module path, no test folder found)."""
        module = module_path(tree)
        if module is None:
            return None
        dirs = tuple((d, n) for d in package_dirs(pattern, tree) if (n := _package_name(tree / d)))
        if not dirs:
            return None
        token = secrets.token_hex(6)
        return cls(dirs, module, f"zz{token}_test.go", f"Test_{token}", secrets.token_hex(12))

    def run_pattern(self, run: str | None) -> str | None:
        """``-run`` with the canary added to its first level (None: no filter, the
        canary runs anyway)."""
        if run is None:
            return None
        first, *rest = split_run(run)
        return "/".join([f"(?:{first})|^{self.func}$", *rest])

    def command(self, cmd: list[str]) -> list[str]:
        out = list(cmd)
        if "-run" in out[:-1]:
            i = out.index("-run") + 1
            out[i] = self.run_pattern(out[i]) or out[i]
        return out

    def source(self, package: str) -> str:
        token = self.func.removeprefix("Test")
        imports = "".join(f'\t"{p}"\n' for p in output.IMPORTS)
        return (
            f"package {package}\n\nimport (\n{imports})\n\n"
            f"func {self.func}(t *testing.T) {{\n\t{output.call(token)}\n"
            f"\tt.Fatal({json.dumps(self.message)})\n}}\n{output.source(token)}"
        )

    def write(self, tree: Path) -> None:
        """The files, written by the controller, read-only (0444) to the test user."""
        for rel, package in self.dirs:
            if not _inside(tree, rel):
                continue
            path = tree / rel / self.file
            if path.is_symlink() or path.exists():
                path.unlink()
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o444)
            with os.fdopen(fd, "w") as fh:
                fh.write(self.source(package))

    def remove(self, tree: Path) -> None:
        for rel, _ in self.dirs:
            path = tree / rel / self.file
            if _inside(tree, rel) and (path.is_symlink() or path.is_file()):
                path.unlink()

    def import_path(self, rel: str) -> str:
        return self.module if rel == "." else f"{self.module}/{Path(rel).as_posix()}"

    def is_case(self, case: TestCase) -> bool:
        return case.name == self.func or case.name.startswith(f"{self.func}/")


def judge(
    canary: GoCanary, stdout: str, cases: list[TestCase], code: int | None
) -> tuple[list[TestCase], str | None, bool]:
    """The suite's own cases; why the run is forged (None when it is not); and whether
    the canaries were its only failures (every canary package seen failed its canary
    with its message, and no case of the suite's own failed).

    With a canary planned, an honest ``go test`` never exits 0 (each canary fails), so a
    success claim (exit 0, or every case of the suite's own passed) without every
    package seen failing its canary is forged: an ``init()`` that prints a passing
    stream, or calls ``os.Exit(0)`` before any test ran (Go reports ``ok``)."""
    own = [c for c in cases if not canary.is_case(c)]
    expected = {canary.import_path(rel) for rel, _ in canary.dirs}
    seen: set[str] = set()
    outputs: dict[str, str] = {}
    verdicts: dict[str, str] = {}
    notes: dict[str, str] = {}
    for line in stdout.splitlines():
        parsed, ev = bounded.json_value(line)  # printed by the code under test, maybe
        if not parsed:
            continue
        pkg = ev.get("Package") if isinstance(ev, dict) else None
        if pkg not in expected:
            continue
        seen.add(pkg)
        if ev.get("Action") == "output" and (found := output.note(str(ev.get("Output")))):
            notes.setdefault(pkg, found)  # the canary's check ended the binary (stderr)
        if ev.get("Test") != canary.func:
            continue
        if ev.get("Action") == "output":
            outputs[pkg] = outputs.get(pkg, "") + str(ev.get("Output", ""))
        elif ev.get("Action") in {"pass", "fail", "skip"}:
            verdicts[pkg] = ev["Action"]
    unmet = sorted(
        pkg
        for pkg in seen
        if verdicts.get(pkg) != "fail" or canary.message not in outputs.get(pkg, "")
    )
    own_passed = all(c.passed for c in own)
    clean = bool(seen) and not unmet and own_passed
    claims_success = code == 0 or (bool(own) and own_passed)
    if claims_success and not clean:
        where = unmet[0] if unmet else ", ".join(sorted(expected))
        why = f" (its output check: {notes[where]})" if where in notes else ""
        return own, f"results forged: harness's failing canary did not fail in {where}{why}", False
    return own, None, clean
