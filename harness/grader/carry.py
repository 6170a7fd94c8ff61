"""Carry a calibration across a move: the scorer's code changed only in where modules live.

A calibration is hours of executed-app scorings, and it counts only for the scorer
fingerprint that made it (``scoring.era``). Moving a module the suites import (the app kit
out of ``scoring/``) changes every app suite's fingerprint without changing one decision
of its grading. ``carry`` proves that, file by file, before it moves anything:

- the files that grade are read twice, from a commit the thresholds were calibrated at and
  from the working tree, each by the harness of its own tree (a separate process), and the
  commit's must hash to the thresholds' ``scorer``;
- both sides list the same files under the same names; a file other than Python is the same
  bytes; a Python file is the same syntax tree once each import of a moved module (and each
  string naming one) is spelled at its new home and each run of imports is put in one order
  (what an import sorter changes). Comments and formatting do not count; a changed
  constant, call, docstring or check does.

Only then do the thresholds take the new fingerprint (``carried:`` says from which, at which
commit, by which moves; the pin follows) and the ledgers' lines of the old scorer become the
new scorer's. Anything else is refused with the first file that differs.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from harness.errors import InfraError, UserError
from harness.grader.calibrate import pin_thresholds
from harness.grader.calibration_ledger import LEDGER, Entry, read_lines, write_lines
from harness.grader.mutants.score import MutantLine
from harness.scoring.era import digest_of, entries, load_thresholds
from harness.util.fs import write_atomic

#: Run by the harness of a tree (its folder first on the path): the files that grade the
#: suite given, as ``scoring.era`` of that tree lists them.
_PATHS = """
import importlib.util, json, sys
from pathlib import Path
import harness
from harness.scoring import era
from harness.verify.scoring_bridge import load_suite_module
suite = load_suite_module(Path(sys.argv[1])).suite
listed = era.code_paths(suite) if hasattr(era, "code_paths") else [
    *suite.source_files(), *suite.fixtures, *era.FRAMEWORK]
where = {}
for name in sys.argv[2:]:
    try:
        spec = importlib.util.find_spec(name)
    except ImportError:
        spec = None
    if spec is not None and spec.submodule_search_locations:
        where[name] = list(spec.submodule_search_locations)[0]
    else:
        where[name] = spec.origin if spec is not None else None
print(json.dumps({"paths": [str(p) for p in listed], "harness": harness.__file__,
                  "modules": where}))
"""

MUTANTS = "mutants.jsonl"


@dataclass(frozen=True)
class Carried:
    old: str
    new: str
    commit: str
    lines: int

    def line(self) -> str:
        return (
            f"carried the calibration of scorer {self.old[:16]} (commit {self.commit[:12]}) to "
            f"{self.new[:16]}: the same grading code, modules moved; {self.lines} ledger "
            "line(s) moved with it"
        )


def moves_of(pairs: list[str]) -> dict[str, str]:
    """``OLD=NEW`` module names (``--moved``) as a map."""
    out: dict[str, str] = {}
    for pair in pairs:
        old, sep, new = pair.partition("=")
        if not sep or not _MODULE.fullmatch(old) or not _MODULE.fullmatch(new):
            raise UserError(
                f"--moved {pair!r} is not OLD=NEW",
                field="--moved",
                fix="name a moved module as OLD=NEW, e.g. harness.scoring.appkit=harness.appkit",
            )
        out[old] = new
    return out


_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def moved_name(name: str, moves: Mapping[str, str]) -> str:
    """``name`` with the longest moved module it starts with spelled at its new home."""
    for old in sorted(moves, key=len, reverse=True):
        if name == old or name.startswith(old + "."):
            return moves[old] + name[len(old) :]
    return name


class _Respell(ast.NodeTransformer):
    def __init__(self, moves: Mapping[str, str]) -> None:
        self.moves = moves

    def visit_Import(self, node: ast.Import) -> ast.AST:
        for alias in node.names:
            alias.name = moved_name(alias.name, self.moves)
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        if node.module and not node.level:
            node.module = moved_name(node.module, self.moves)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, str) and _MODULE.fullmatch(node.value):
            node.value = moved_name(node.value, self.moves)
        return node


class _SortImports(ast.NodeTransformer):
    """Each run of consecutive imports in one order (an import sorter's work)."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                setattr(node, field, _sorted_runs(stmts))
        return node


def _sorted_runs(stmts: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    run: list[ast.stmt] = []
    for stmt in stmts:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            run.append(stmt)
            continue
        out += sorted(run, key=ast.dump)
        run = []
        out.append(stmt)
    return out + sorted(run, key=ast.dump)


def canonical(source: bytes, moves: Mapping[str, str]) -> str:
    """A Python file as compared: its syntax tree with moved modules spelled at their new
    homes and each run of imports in one order."""
    tree = _SortImports().visit(_Respell(moves).visit(ast.parse(source)))
    return ast.dump(tree)


def differences(
    old: list[tuple[str, bytes]], new: list[tuple[str, bytes]], moves: Mapping[str, str]
) -> list[str]:
    """Why ``new`` grades otherwise than ``old`` (empty: the same code, modules moved)."""
    if [n for n, _ in old] != [n for n, _ in new]:
        gone = sorted({n for n, _ in old} - {n for n, _ in new})
        added = sorted({n for n, _ in new} - {n for n, _ in old})
        return [f"other files: {', '.join(gone) or 'none'} gone, {', '.join(added) or 'none'} new"]
    out = []
    for (name, before), (_, after) in zip(old, new, strict=True):
        if before == after:
            continue
        if not name.endswith(".py"):
            out.append(f"{name}: its bytes changed")
            continue
        try:
            same = canonical(before, moves) == canonical(after, {})
        except SyntaxError as exc:
            out.append(f"{name}: not Python ({exc.msg})")
            continue
        if not same:
            out.append(f"{name}: its code changed, not only where the modules it imports live")
    return out


@dataclass(frozen=True)
class Graded:
    """What grades a suite in one tree: the fingerprinted files, and where the tree's
    harness finds each module asked about (None: nowhere)."""

    files: list[tuple[str, bytes]]
    roots: list[Path]
    modules: dict[str, str | None]

    def covers(self, module: str) -> bool:
        """The module is a file (or a package folder) among the fingerprinted paths."""
        found = self.modules.get(module)
        return found is not None and any(
            Path(found) == root or Path(found).is_relative_to(root) for root in self.roots
        )


def graded_files(root: Path, suite_dir: Path, modules: list[str] | None = None) -> Graded:
    """The files that grade the suite at ``suite_dir`` (a folder of ``root``), as the
    harness of ``root`` lists them (run in a process of its own, its folder first), and
    where that harness finds ``modules``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", _PATHS, str(suite_dir), *(modules or [])],
        cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise UserError(
            f"cannot list the graded files of {suite_dir} at {root}: {tail}",
            field="--from",
            fix="name a commit whose harness and suite load",
        )
    said = json.loads(done.stdout)
    if not Path(said["harness"]).resolve().is_relative_to(root.resolve()):
        raise InfraError(f"the harness of {root} was not the one imported: {said['harness']}")
    paths = [Path(p) for p in said["paths"]]
    return Graded(entries(paths, unpinned=True, code=True), paths, said["modules"])


def _tree_at(repo: Path, commit: str, into: Path) -> str:
    """The committed tree of ``repo`` at ``commit`` unpacked into ``into``; its full sha."""

    def git(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)

    sha = git("rev-parse", "--verify", f"{commit}^{{commit}}")
    if sha.returncode != 0:
        raise UserError(f"no commit {commit!r} in {repo}", field="--from", fix="name a commit")
    archive = git("archive", "--format=tar", sha.stdout.decode().strip())
    if archive.returncode != 0:
        raise UserError(f"cannot read commit {commit}: {archive.stderr.decode().strip()}")
    with tempfile.TemporaryFile() as fh:
        fh.write(archive.stdout)
        fh.seek(0)
        with tarfile.open(fileobj=fh) as tar:
            tar.extractall(into, filter="data")
    return sha.stdout.decode().strip()


def repo_of(folder: Path) -> Path:
    """The git work tree holding ``folder`` (where the commits to compare with live)."""
    done = subprocess.run(
        ["git", "-C", str(folder), "rev-parse", "--show-toplevel"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise UserError(
            f"{folder} is not in a git work tree: no commit to carry a calibration from",
            file=folder,
            fix="carry inside the repository that holds the scenario",
        )
    return Path(done.stdout.strip())


def calibrated_at(repo: Path, thresholds: Path) -> str:
    """The last commit that wrote the thresholds file (the default ``--from``)."""
    done = subprocess.run(
        ["git", "-C", str(repo), "log", "-1", "--format=%H", "--", str(thresholds)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0 or not done.stdout.strip():
        raise UserError(
            f"no commit wrote {thresholds}", file=thresholds, fix="name one with --from"
        )
    return done.stdout.strip()


def carry(
    repo: Path, suite_dir: Path, moves: Mapping[str, str], commit: str | None = None
) -> Carried:
    """Move the suite's calibration to its current scorer, once ``differences`` finds none."""
    thresholds_file = suite_dir / "thresholds.yml"
    current = load_thresholds(thresholds_file)
    if not current.calibrated or not current.scorer:
        raise UserError(
            "no calibration to carry: the thresholds are not calibrated for a scorer",
            file=thresholds_file,
            fix="run `harness calibrate` instead",
        )
    rel = suite_dir.resolve().relative_to(repo.resolve())
    now = graded_files(repo, suite_dir.resolve(), list(moves.values()))
    new_fp = digest_of(now.files)
    if new_fp == current.scorer:
        raise UserError(
            "nothing to carry: the thresholds are calibrated for the current scorer",
            file=thresholds_file,
            fix="carry only after a move",
        )
    commit = commit or calibrated_at(repo, thresholds_file)
    with tempfile.TemporaryDirectory(prefix="harness-carry-") as tmp:
        sha = _tree_at(repo, commit, Path(tmp))
        then = graded_files(Path(tmp), Path(tmp) / rel, list(moves))
    if digest_of(then.files) != current.scorer:
        raise UserError(
            f"commit {sha[:12]}'s scorer is {digest_of(then.files)[:16]}, not the calibrated "
            f"{current.scorer[:16]}",
            field="--from",
            fix="name the commit the thresholds were calibrated at",
        )
    for before, after in moves.items():  # a move stays inside what the fingerprint covers
        if not then.covers(before) or not now.covers(after):
            raise UserError(
                f"--moved {before}={after}: "
                + (f"{before} at commit {sha[:12]}" if not then.covers(before) else after)
                + " is not among the files that grade the suite",
                field="--moved",
                fix="name only moves between modules the scorer fingerprint covers",
            )
    wrong = differences(then.files, now.files, moves)
    if wrong:
        raise UserError(
            f"not carried, the grading code changed: {wrong[0]}"
            + (f" (and {len(wrong) - 1} more)" if len(wrong) > 1 else ""),
            file=suite_dir,
            fix="calibrate again (`harness calibrate`), or name every move with --moved",
        )
    lines = _rekey(suite_dir / LEDGER, Entry, current.scorer, new_fp)
    lines += _rekey(suite_dir.parent / MUTANTS, MutantLine, current.scorer, new_fp)
    _rewrite_thresholds(thresholds_file, current.scorer, new_fp, sha, moves)
    return Carried(current.scorer, new_fp, sha, lines)


def _rekey(path: Path, model: type[Entry] | type[MutantLine], old: str, new: str) -> int:
    """A ledger's lines of scorer ``old`` as scorer ``new``'s; how many."""
    lines: list[Entry | MutantLine] = list(read_lines(path, model))
    moved = [e.model_copy(update={"scorer": new}) if e.scorer == old else e for e in lines]
    count = sum(1 for e in lines if e.scorer == old)
    if count:
        write_lines(path, list(moved))
    return count


def _rewrite_thresholds(
    path: Path, old: str, new: str, commit: str, moves: Mapping[str, str]
) -> None:
    """The thresholds stamped with the new scorer, saying where the calibration came
    from; pinned again."""
    text = path.read_text()
    stamp = re.compile(rf"^scorer:\s*['\"]?{old}['\"]?\s*$", re.MULTILINE)
    if not stamp.search(text):
        raise UserError(f"no `scorer: {old}` line to restamp", file=path, fix="calibrate again")
    text = stamp.sub(f"scorer: {new}", text, count=1)
    text = re.sub(r"^carried:(\n[ ].*)*\n?", "", text, flags=re.MULTILINE)
    carried = {"carried": {"from": old, "commit": commit, "moved": dict(moves)}}
    text = text.rstrip("\n") + "\n" + yaml.safe_dump(carried, sort_keys=False)
    write_atomic(path, text)
    pin_thresholds(path.parent, path)
