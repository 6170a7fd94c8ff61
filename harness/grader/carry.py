"""Carry a calibration across a move: the scorer's code changed only in where modules live.

A calibration is hours of executed-app scorings, and it counts only for the scorer
fingerprint that made it (``scoring.era``). Moving a module the suites import (the app kit
out of ``scoring/``) changes every app suite's fingerprint without changing one decision
of its grading. ``carry`` proves that before it moves anything, and moves nothing else:

- the commit (default: the last that wrote the thresholds; ``--from`` another) is in the
  work tree's history, its scorer is calibrated and pinned there for the fingerprint the
  work tree's thresholds name, and those thresholds are that commit's, byte for byte;
- each tree's harness lists its fingerprinted files (a process of its own, its tree first
  on the path, no bytecode read from the tree); the files other than Python are the same;
- every Python file the suite can execute (``same_code.reach``: its folder and each
  ``harness`` module an import reaches, fingerprinted or not) is the same code on both
  sides once the moves are applied (``same_code.compare``); each move stays inside the
  ``harness`` package (the jail hides it from the app) and names reached code;
- when the suite folder's own Python differs beyond that (a suite split into modules,
  annotations added), it is proved *definition by definition* instead
  (``same_definitions``): the harness modules either suite reaches are still compared file
  by file in both trees, the fingerprint's other files must be the same, and the carried
  entry says which proof held (``proved: files`` or ``definitions``).

Then the thresholds are the commit's with the new ``scorer:`` and a ``carried:`` entry
(from which fingerprint, which commit, which moves), pinned again, and the ledgers' lines of
the old scorer become the new scorer's (other lines kept as they are, byte for byte). A
locked scenario version keeps its version (its lock line is written again) only if the lock
held the commit's folder and the folder changed in nothing but what the carry proves
(the suite's Python, however many files) or writes (thresholds, pin): results before and
after compare. The
result is checked as a trial would (the suite stamps calibrated for the new scorer, in a
process of its own); if it is not, every file is put back. Anything refused writes nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import InfraError, UserError
from harness.grader.calibrate import pin_source, pin_thresholds
from harness.grader.calibration_ledger import LEDGER
from harness.grader.carried_files import carried_text, lines_changed, rekey
from harness.grader.same_code import (
    PACKAGE,
    canonical,
    compare,
    is_module_name,
    reach,
)
from harness.grader.same_definitions import each_other_s, same_definitions, suite_files_same
from harness.scenario.load import folder_files, folder_hash
from harness.scenario.lock import read_lock, write_lock
from harness.scoring.era import PIN_FILE, digest_of, entries, load_thresholds

MUTANTS = "mutants.jsonl"

#: Run as a file by the harness of a tree: what its era lists, and its stamp
_LISTING = Path(__file__).with_name("tree_listing.py")


@dataclass(frozen=True)
class Carried:
    old: str
    new: str
    commit: str
    lines: int
    unproven: tuple[str, ...] = ()
    relocked: str | None = None  # the scenario version locked again (its folder changed)
    proved: str = "files"  # how the suite was proved the same: file by file, or definitions

    def line(self) -> str:
        outside = "; ".join(self.unproven)
        how = "file by file" if self.proved == "files" else "definition by definition"
        return (
            f"carried the calibration of scorer {self.old[:16]} (commit {self.commit[:12]}) to "
            f"{self.new[:16]}: the same grading code ({how}); {self.lines} "
            "ledger line(s) moved with it"
            + (f"; differing outside every scorer fingerprint: {outside}" if outside else "")
            + (f"; {self.relocked} locked again" if self.relocked else "")
        )


@dataclass(frozen=True)
class Listing:
    """What a tree's harness says of the suite: fingerprinted files and its stamp."""

    files: list[tuple[str, bytes]]
    paths: list[Path]
    stamp: dict[str, Any]

    @property
    def scorer(self) -> str:
        return digest_of(self.files)

    def outside(self, suite_dir: Path) -> list[tuple[str, bytes]]:
        """The fingerprinted files but the suite folder's Python (compared by definitions)."""
        kept = [
            p
            for p in self.paths
            if not (p.suffix == ".py" and p.resolve().is_relative_to(suite_dir.resolve()))
        ]
        return entries(kept, unpinned=True, code=True)  # fmt: skip

    def covers(self, path: Path | None) -> bool:
        """Whether the fingerprint lists ``path`` (itself, or a folder holding it)."""
        return path is not None and any(
            path.resolve() == p.resolve() or path.resolve().is_relative_to(p.resolve())
            for p in self.paths
        )


@dataclass(frozen=True)
class Lock:
    """The scenario lock's line for this scenario: its file, its key (``name@version``),
    and how a folder is hashed there (``scenario.load.folder_hash``)."""

    file: Path
    key: str


def _locked(lock_file: Path, key: str) -> str | None:
    """The sha256 a lock file records for ``key`` (None: not locked there)."""
    return read_lock(lock_file.parent).get(key) if lock_file.is_file() else None


def _relocked(lock_file: Path, key: str, sha: str) -> None:
    write_lock(lock_file.parent, {**read_lock(lock_file.parent), key: sha})


#: What a carry writes in a scenario folder (besides the suite's pin, in its Python).
CARRIED_FILES = frozenset({"thresholds.yml", "thresholds.pin"})


def _same_but_carried(old_dir: Path, new_dir: Path, suite: str) -> str | None:
    """Why the scenario folder changed beyond what the carry proves or writes: the
    suite's Python (proved the same code), its thresholds and pin (written by the carry),
    the scenario's README (read by people, never by a trial) and the evidence files the
    lock ignores. None: only those."""

    def files(root: Path) -> dict[str, bytes]:
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in folder_files(root)}

    before, after = files(old_dir), files(new_dir)
    code = {n for n in [*before, *after] if n.startswith(suite + "/") and n.endswith(".py")}
    if sorted(set(before) - code) != sorted(set(after) - code):
        return f"the scenario folder holds other files ({sorted(set(before) ^ set(after))[:3]})"
    for name, data in before.items():
        if name in code:
            continue  # the suite's Python: proved the same (file by file, or definitions)
        proved = name == "README.md" or (  # the scenario's page: no trial reads it
            name.startswith(suite + "/")
            and (name.endswith(".py") or name.rsplit("/", 1)[-1] in CARRIED_FILES)
        )
        if data != after[name] and not proved:
            return f"{name} changed, and a carry proves only the suite's code"
    return None


def moves_of(pairs: list[str]) -> dict[str, str]:
    """``OLD=NEW`` module names of the ``harness`` package (``--moved``) as a map."""
    out: dict[str, str] = {}
    for pair in pairs:
        old, sep, new = pair.partition("=")
        if not sep or not is_module_name(old) or not is_module_name(new) or old == new:
            raise UserError(
                f"--moved {pair!r} is not OLD=NEW",
                field="--moved",
                fix="name a moved module as OLD=NEW, e.g. harness.scoring.appkit=harness.appkit",
            )
        if not all(n.startswith(PACKAGE + ".") for n in (old, new)):
            raise UserError(
                f"--moved {pair!r} leaves the harness package (where the jail hides grading "
                "code from the app)",
                field="--moved",
                fix="carry only moves inside the harness package; calibrate again otherwise",
            )
        out[old] = new
    return out


def listing(root: Path, suite_dir: Path) -> Listing:
    """The harness of ``root`` on the suite at ``suite_dir`` (a process of its own, its
    tree first on the path, bytecode kept out of the tree)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with tempfile.TemporaryDirectory(prefix="harness-carry-pyc-") as pyc:
        done = subprocess.run(
            [sys.executable, str(_LISTING), str(suite_dir)],
            cwd=root, env={**env, "PYTHONPYCACHEPREFIX": pyc}, capture_output=True,
            text=True, timeout=300, check=False,
        )  # fmt: skip
    try:
        said = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else None
    except (ValueError, IndexError):
        said = None
    if not isinstance(said, dict):
        tail = (done.stderr.strip().splitlines() or ["no answer"])[-1]
        raise UserError(
            f"the harness at {root} cannot load the suite {suite_dir}: {tail}",
            field="--from",
            fix="name a commit whose harness and suite load",
        )
    if not Path(said["harness"]).resolve().is_relative_to(root.resolve()):
        raise InfraError(f"the harness of {root} was not the one imported: {said['harness']}")
    paths = [Path(p) for p in said["paths"]]
    return Listing(entries(paths, unpinned=True, code=True), paths, said["stamp"])


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)


def repo_of(folder: Path) -> Path:
    """The git work tree holding ``folder`` (where the commits to compare with live)."""
    done = _git(folder, "rev-parse", "--show-toplevel")
    if done.returncode != 0:
        raise UserError(
            f"{folder} is not in a git work tree: no commit to carry a calibration from",
            file=folder,
            fix="carry inside the repository that holds the scenario",
        )
    return Path(done.stdout.decode().strip())


def _commit(repo: Path, thresholds: Path, given: str | None) -> str:
    """The commit to carry from, as a full sha: ``given``, else the last that wrote the
    thresholds; it must be in the work tree's history."""
    if given is None:
        last = _git(repo, "log", "-1", "--format=%H", "--", str(thresholds))
        given = last.stdout.decode().strip()
        if not given:
            raise UserError(f"no commit wrote {thresholds}", file=thresholds, fix="use --from")
    sha = _git(repo, "rev-parse", "--verify", "--end-of-options", f"{given}^{{commit}}")
    if sha.returncode != 0:
        raise UserError(f"no commit {given!r} in {repo}", field="--from", fix="name a commit")
    full = sha.stdout.decode().strip()
    if _git(repo, "merge-base", "--is-ancestor", full, "HEAD").returncode != 0:
        raise UserError(
            f"commit {full[:12]} is not in the history of HEAD",
            field="--from",
            fix="carry from a commit the work tree descends from",
        )
    return full


#: The carry's checker: these files must be HEAD's (``_checker_committed``).
_CHECKER = (
    *("carry.py", "carried_files.py", "same_code.py", "same_definitions.py", "tree_listing.py"),
    *("defs_ast.py", "defs_describe.py", "defs_graph.py", "defs_toplevel.py"),
)


def _checker_committed(repo: Path) -> str:
    """The commit whose carry checker runs: this code must be the repository's, as HEAD
    holds it (a checker edited beside the carry would judge its own change)."""
    here = Path(__file__).resolve().parent
    for name in _CHECKER:
        held = _git(repo, "show", f"HEAD:harness/grader/{name}")
        if held.returncode != 0 or held.stdout != (here / name).read_bytes():
            raise UserError(
                f"the carry that runs ({here / name}) is not HEAD's harness/grader/{name}",
                field="--carry",
                fix="commit the checker first, and carry with the repository's own harness",
            )
    return _git(repo, "rev-parse", "HEAD").stdout.decode().strip()


def _unpack(repo: Path, commit: str, into: Path) -> None:
    archive = _git(repo, "archive", "--format=tar", commit)
    if archive.returncode != 0:
        raise InfraError(f"cannot read commit {commit}: {archive.stderr.decode().strip()}")
    with tempfile.TemporaryFile() as fh:
        fh.write(archive.stdout)
        fh.seek(0)
        with tarfile.open(fileobj=fh) as tar:
            tar.extractall(into, filter=_safe_member)


def _safe_member(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """``tarfile``'s data filter, skipping what it refuses (a link out of the tree): a file
    left out that grades makes the commit's suite fail to load or differ, a refusal."""
    try:
        return tarfile.data_filter(member, dest)
    except tarfile.FilterError:
        return None


def _refuse(why: str, suite_dir: Path) -> UserError:
    return UserError(
        f"not carried: {why}",
        file=suite_dir,
        fix="calibrate again (`harness calibrate`), or name every move with --moved",
    )


def carry(
    repo: Path,
    suite_dir: Path,
    moves: Mapping[str, str],
    commit: str | None = None,
    lock: Lock | None = None,
) -> Carried:
    """Move the suite's calibration to its current scorer, once the grading code is
    proved the same but for ``moves`` (see the module's docstring)."""
    suite_dir = suite_dir.resolve()
    thresholds_file = suite_dir / "thresholds.yml"
    current = load_thresholds(thresholds_file)
    if not current.calibrated or not current.scorer:
        raise UserError(
            "no calibration to carry: the thresholds are not calibrated for a scorer",
            file=thresholds_file,
            fix="run `harness calibrate` instead",
        )
    now = listing(repo, suite_dir)
    if now.scorer == current.scorer:
        raise UserError(
            "nothing to carry: the thresholds are calibrated for the current scorer",
            file=thresholds_file,
            fix="carry only after a move",
        )
    sha = _commit(repo, thresholds_file, commit)
    checker = _checker_committed(repo)
    rel = suite_dir.relative_to(repo.resolve())
    unproven: list[str] = []
    with tempfile.TemporaryDirectory(prefix="harness-carry-") as tmp:
        old_root = Path(tmp)
        _unpack(repo, sha, old_root)
        try:
            old_thresholds = (old_root / rel / "thresholds.yml").read_bytes()
        except OSError:
            raise _refuse(f"commit {sha[:12]} has no {rel}/thresholds.yml", suite_dir) from None
        then = listing(old_root, old_root / rel)
        tampered = lines_changed(old_root / rel / LEDGER, suite_dir / LEDGER, current.scorer)
        tampered += lines_changed(
            old_root / rel.parent / MUTANTS, suite_dir.parent / MUTANTS, current.scorer
        )
        try:
            old_reach, new_reach = reach(old_root, old_root / rel), reach(repo, suite_dir)
            proved = "files" if suite_files_same(old_reach, new_reach, moves) else "definitions"
            if proved == "definitions":
                old_reach, new_reach = each_other_s(old_root, repo, old_reach, new_reach, moves)
            code = (old_root / rel, suite_dir) if proved == "definitions" else None
            why = _why_not(
                then, now, current.scorer, old_thresholds, thresholds_file, sha, moves,
                sorted(old_reach), code,
            )  # fmt: skip
            why = why or (tampered[0] if tampered else None)
            if why is None:
                found = compare(
                    old_reach,
                    new_reach,
                    moves,
                    lambda path, side: (then if side == "then" else now).covers(path),
                )
                unproven = found.unproven
                problems = found.problems or (
                    same_definitions(repo, old_root / rel, suite_dir, moves) if code else []
                )
                if problems:
                    more = f" (and {len(problems) - 1} more)" if problems[1:] else ""
                    why = problems[0] + more
        except ValueError as exc:
            why = str(exc)
        relock = lock is not None and _locked(lock.file, lock.key) is not None
        if why is None and lock is not None and relock:
            why = _why_not_relock(repo, old_root, suite_dir, lock)
    if why is not None:
        raise _refuse(why, suite_dir)
    text = carried_text(
        old_thresholds.decode("utf-8", "surrogateescape"),
        current.scorer,
        now.scorer,
        {
            "from": current.scorer,
            "commit": sha,
            "checker": checker,
            "moved": dict(moves),
            "proved": proved,
        },
        unproven,
    )
    extra = [lock.file] if lock is not None and relock else []
    with _put_back_unless_stamped(suite_dir, now.scorer, repo, extra):
        thresholds_file.write_text(text)
        pin_thresholds(suite_dir, thresholds_file)
        lines = rekey(suite_dir / LEDGER, current.scorer, now.scorer)
        lines += rekey(suite_dir.parent / MUTANTS, current.scorer, now.scorer)
        if lock is not None and relock:  # the same version: its grading proved the same
            _relocked(lock.file, lock.key, folder_hash(suite_dir.parent))
    again = lock.key if lock is not None and relock else None
    return Carried(current.scorer, now.scorer, sha, lines, tuple(unproven), again, proved)


def _why_not_relock(repo: Path, old_root: Path, suite_dir: Path, lock: Lock) -> str | None:
    """A locked version may keep its version through a carry only if the lock held the
    commit's folder, nobody changed the lock's line since, and the folder changed only in
    what the carry proves or writes."""
    scenario = suite_dir.parent.relative_to(repo.resolve())
    then_lock = old_root / lock.file.resolve().relative_to(repo.resolve())
    held = _locked(then_lock, lock.key)
    if held is None or held != folder_hash(old_root / scenario):
        return f"{lock.key} was not locked at that commit as its folder was there"
    if _locked(lock.file, lock.key) != held:
        return f"the lock's line for {lock.key} changed since that commit"
    return _same_but_carried(old_root / scenario, suite_dir.parent, suite_dir.name)


def _why_not(
    then: Listing,
    now: Listing,
    scorer: str,
    old_thresholds: bytes,
    file: Path,
    sha: str,
    moves: Mapping[str, str],
    modules: list[str],
    code: tuple[Path, Path] | None = None,
) -> str | None:
    """What makes the commit no calibration of this scorer, or the files not comparable;
    ``code``: the two suite folders, whose Python is compared by definitions instead."""
    if then.scorer != scorer or then.stamp.get("scorer") not in (scorer, None, ""):
        return f"commit {sha[:12]}'s scorer is {then.scorer[:16]}, not the calibrated {scorer[:16]}"
    if not then.stamp.get("calibrated") or str(then.stamp.get("era", "")).endswith("-rc"):
        detail = then.stamp.get("error") or then.stamp.get("era")
        return f"the suite at commit {sha[:12]} is not calibrated and pinned ({detail})"
    if file.read_bytes() != old_thresholds:
        return f"{file.name} differs from commit {sha[:12]}'s (a carry changes no threshold)"
    before_files = then.files if code is None else then.outside(code[0])
    after_files = now.files if code is None else now.outside(code[1])
    if [n for n, _ in before_files] != [n for n, _ in after_files]:
        gone = sorted({n for n, _ in before_files} - {n for n, _ in after_files})
        added = sorted({n for n, _ in after_files} - {n for n, _ in before_files})
        return f"the fingerprint lists other files ({gone or 'none'} gone, {added or 'none'} new)"
    for (name, before), (_, after) in zip(before_files, after_files, strict=True):
        if before == after:
            continue
        if not name.endswith(".py"):
            return f"{name}: its bytes changed"
        try:
            same = canonical(before, moves, modules, name) == canonical(after, {}, (), name)
        except ValueError as exc:
            return f"{name}: {exc}"
        if not same:  # fingerprinted, whether the suite reaches it or not (what else runs it)
            return f"{name}: its code changed, not only where the modules it imports live"
    return None


@contextlib.contextmanager
def _put_back_unless_stamped(
    suite_dir: Path, scorer: str, repo: Path, extra: list[Path]
) -> Iterator[None]:
    """Keep the files a carry writes; after it, the suite must stamp calibrated for
    ``scorer`` (in a process of its own) or every file is put back as it was."""
    pin = pin_source(suite_dir)
    touched = [
        suite_dir / "thresholds.yml",
        suite_dir / PIN_FILE,
        suite_dir / LEDGER,
        suite_dir.parent / MUTANTS,
        *([pin] if pin is not None else []),
        *extra,
    ]
    before = {p: p.read_bytes() if p.exists() else None for p in touched}
    try:
        yield
        got = listing(repo, suite_dir).stamp
        if not (got.get("calibrated") and got.get("scorer") == scorer):
            raise _refuse(f"the carried suite does not stamp calibrated ({got})", suite_dir)
    except BaseException:
        for path, data in before.items():
            if data is None:
                path.unlink(missing_ok=True)
            else:
                path.write_bytes(data)
        raise
