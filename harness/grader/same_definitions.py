"""Whether two trees' suites are the same definitions, however their modules are laid out.

The file-level compare (``same_code``) holds a suite to its files; a suite split into a
package of modules, with annotations added and loader helpers turned into relative
imports, has other files and the same grading. This compare proves that instead, or
refuses with one line naming the definition that differs:

1. each tree's suite is loaded as the harness loads it, in a process of its own (so the
   two never share ``sys.modules``), by the work tree's harness (the old tree's old module
   names ``--moved`` imported as their new homes: ``defs_describe``), which prints the
   suite as a graph: the ``suite`` object and ``context`` the harness reads, and every
   definition and mutable value reachable from them, deep (``defs_ast`` says what of a
   definition's code is left out, and why that cannot change what it does);
2. the two graphs are walked together from those roots and from the modules' load-time
   effects (``defs_toplevel``), pairing each node of the commit's with one of the work
   tree's, one to one (so two equal values one side keeps apart are not one on the other);
   every pair must have the same content, references paired alike;
3. the modules outside the suite that loading it imports first must be the same, and so
   must every file of the suite folder that is not Python (but the calibration ledger and
   the pin, which a carry writes, and a README nobody grades with), byte for byte; a
   Python file the load does not run must be byte-equal too, unless it is a package's
   ``__init__.py`` holding nothing but a docstring and imports (a linter's marker).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.grader.calibration_ledger import LEDGER
from harness.grader.defs_folders import scenario_files_differ, suite_folder_differs
from harness.grader.same_code import SUITE, canonical, moved_name, reach_modules
from harness.scoring.era import PIN_FILE
from harness.util.fs import in_tool_cache

#: Files of the suite folder a carry may see differ: the ledger and pin (it writes them) and
#: a README (a reader's page, left out of every fingerprint).
MAY_DIFFER = frozenset({LEDGER, PIN_FILE, "README.md"})


def describe(
    harness_root: Path, suites: list[tuple[Path, Mapping[str, str]]]
) -> list[dict[str, Any]]:
    """Each suite (its folder, the moves its tree needs) as a graph (``defs_graph``),
    loaded by the harness at ``harness_root`` in a process of its own, all at once (no
    bytecode written into either tree)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with tempfile.TemporaryDirectory(prefix="harness-defs-pyc-") as pyc:
        runs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "harness.grader.defs_describe",
                    str(suite_dir),
                    json.dumps(dict(moves)),
                ],
                cwd=harness_root,
                env={**env, "PYTHONPYCACHEPREFIX": pyc},
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for suite_dir, moves in suites
        ]
        answers = [(*run.communicate(timeout=900), run.returncode) for run in runs]
    out: list[dict[str, Any]] = []
    for (suite_dir, _), (stdout, stderr, code) in zip(suites, answers, strict=True):
        try:
            said = json.loads(stdout.strip().splitlines()[-1]) if code == 0 else None
        except (ValueError, IndexError):
            said = None
        if not isinstance(said, dict):
            tail = (stderr.strip().splitlines() or ["no answer"])[-1]
            raise ValueError(f"the suite {suite_dir} cannot be described: {tail}")
        out.append(said)
    return out


def same_definitions(
    harness_root: Path, old_suite: Path, new_suite: Path, moves: Mapping[str, str]
) -> list[str]:
    """Why the suite at ``old_suite`` (the commit's) and at ``new_suite`` (the work
    tree's) are not the same definitions; empty: proved the same."""
    problems = files_differ(old_suite, new_suite)
    if problems:
        return problems
    old, new = describe(harness_root, [(old_suite, moves), (new_suite, {})])
    return compare_graphs(old, new) + unloaded_differ(old_suite, new_suite, old, new)


def suite_files_same(
    old: Mapping[str, Path], new: Mapping[str, Path], moves: Mapping[str, str]
) -> bool:
    """Whether the suite folder holds the same Python files, each the same code once the
    moves are applied: then they are compared file by file, else by definitions."""
    mine = sorted(k for k in old if k.startswith(SUITE))
    if mine != sorted(k for k in new if k.startswith(SUITE)):
        return False
    try:
        return all(
            old[k].read_bytes() == new[k].read_bytes()
            or canonical(old[k].read_bytes(), moves, old, k)
            == canonical(new[k].read_bytes(), {}, (), k)
            for k in mine
        )
    except ValueError:
        return False


def each_other_s(
    old_root: Path,
    repo: Path,
    old: Mapping[str, Path],
    new: Mapping[str, Path],
    moves: Mapping[str, str],
) -> tuple[dict[str, Path], dict[str, Path]]:
    """The harness modules either suite reaches, in each tree, the suites' own files left
    out (their definitions are compared instead): a split suite may import a harness
    module the old one did not (a type for an annotation), which must be the same code."""
    back = {after: before for before, after in moves.items()}
    then = {k: p for k, p in old.items() if not k.startswith(SUITE)}
    now = {k: p for k, p in new.items() if not k.startswith(SUITE)}
    then |= reach_modules(old_root, [moved_name(k, back) for k in now if k not in then])
    now |= reach_modules(repo, [moved_name(k, moves) for k in then])
    return then, now


def files_differ(old_dir: Path, new_dir: Path) -> list[str]:
    """Everything but the suite's Python, the same on both sides (``defs_folders``): the
    suite folder's other entries (``MAY_DIFFER`` aside) and the scenario's files that
    grade outside it."""
    return suite_folder_differs(old_dir, new_dir, MAY_DIFFER) + scenario_files_differ(
        old_dir, new_dir
    )


def unloaded_differ(
    old_dir: Path, new_dir: Path, old: dict[str, Any], new: dict[str, Any]
) -> list[str]:
    """Python files of a suite folder its load does not run: byte-equal on both sides, or
    an ``__init__.py`` of a docstring and imports (a marker for linters and type checkers)."""
    out: list[str] = []
    for root, said, other in ((old_dir, old, new_dir), (new_dir, new, old_dir)):
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if in_tool_cache(path, root) or rel in said["modules"]:
                continue
            twin = other / rel
            if twin.is_file() and twin.read_bytes() == path.read_bytes():
                continue
            if path.name == "__init__.py" and _marker(path):
                continue
            out.append(f"suite/{rel}: not run by the load, and not the same on both sides")
    return sorted(set(out))


def _marker(path: Path) -> bool:
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        return False
    return all(
        isinstance(s, ast.Import | ast.ImportFrom)
        or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        for s in tree.body
    )


class _Walk:
    """Two graphs walked together from their roots, nodes paired one to one."""

    def __init__(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        self.old, self.new = old["nodes"], new["nodes"]
        self.pairs: dict[str, str] = {}
        self.back: dict[str, str] = {}
        self.todo: list[tuple[str, str]] = []

    def same(self, a: Any, b: Any, where: str) -> str | None:
        """Where ``a`` and ``b`` first differ (None: the same, their references paired)."""
        if isinstance(a, dict) and isinstance(b, dict):
            for key in ("ref", "module"):
                if key in a or key in b:
                    if key not in a or key not in b:
                        return f"{where}: {_what(a, self.old)} is not {_what(b, self.new)}"
                    return self.pair(a[key], b[key], where)
            if sorted(a) != sorted(b):
                return f"{where}: {_short(a)} is not {_short(b)}"
            for key in sorted(a):
                why = self.same(a[key], b[key], where)
                if why:
                    return why
            return None
        if isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                return f"{where}: {_short(a)} is not {_short(b)}"
            for x, y in zip(a, b, strict=True):
                why = self.same(x, y, where)
                if why:
                    return why
            return None
        return None if a == b else f"{where}: {_short(a)} is not {_short(b)}"

    def pair(self, a: str, b: str, where: str) -> str | None:
        if self.pairs.get(a, b) != b or self.back.get(b, a) != a:
            then = self.old[a]["name"]
            return f"{where}: {then} is one object at the commit, two (or another) now"
        if a not in self.pairs:
            self.pairs[a], self.back[b] = b, a
            self.todo.append((a, b))
        return None

    def drain(self) -> str | None:
        while self.todo:
            a, b = self.todo.pop()
            before, after = self.old[a], self.new[b]
            if "refused" in before:
                return f"{before['name']} (at the commit): {before['refused']}"
            if "refused" in after:
                return f"{after['name']}: {after['refused']}"
            content = {k: v for k, v in before.items() if k != "name"}
            other = {k: v for k, v in after.items() if k != "name"}
            why = self.same(content, other, f"{before['name']} (now {after['name']})")
            if why:
                return why
        return None


def compare_graphs(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Why two described suites differ (empty: the same, see the module's docstring)."""
    walk = _Walk(old, new)
    why = walk.same(old["roots"], new["roots"], "the suite's entry points") or walk.drain()
    if why:
        return [why]
    before = sorted(old["effects"], key=lambda e: _key(e, old["nodes"]))
    after = sorted(new["effects"], key=lambda e: _key(e, new["nodes"]))
    if len(before) != len(after):
        then = Counter(_key(e, old["nodes"]) for e in before)
        now = Counter(_key(e, new["nodes"]) for e in after)
        odd = sorted((then - now) + (now - then))[:1] or ["?"]
        return [
            f"the modules' load-time effects differ ({len(before)} at the commit, "
            f"{len(after)} now; {'one only at the commit' if odd[0] in then else 'one new'}: "
            f"{_short(json.loads(odd[0]))})"
        ]
    for a, b in zip(before, after, strict=True):
        why = walk.same(a, b, "a module-level statement") or walk.drain()
        if why:
            return [why]
    if old["imported"] != new["imported"]:
        diff = sorted(set(old["imported"]) ^ set(new["imported"]))
        return [f"loading the suite imports other modules ({diff[:3]})"]
    return [f"{p} (at the commit)" for p in old["problems"]] + [
        f"{p} (now)" for p in new["problems"]
    ]


def _key(effect: Any, nodes: dict[str, Any]) -> str:
    """An order for effects that does not depend on node numbers (names instead)."""

    def plain(x: Any) -> Any:
        if isinstance(x, dict):
            if "ref" in x or "module" in x:
                node = nodes[x.get("ref") or x["module"]]
                return [node["kind"], node["name"].split(" (")[0]]
            return {k: plain(v) for k, v in x.items()}
        if isinstance(x, list):
            return [plain(v) for v in x]
        return x

    return json.dumps(plain(effect), sort_keys=True)


def _what(x: dict[str, Any], nodes: dict[str, Any]) -> str:
    ref = x.get("ref") or x.get("module")
    return nodes[ref]["name"] if ref is not None else _short(x)


def _short(x: Any) -> str:
    text = json.dumps(x, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."
