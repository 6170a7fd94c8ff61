"""Scorings kept for a re-run of the controls after a defect's declarations changed.

An executed app scores in 40-90 s, and a flagship's controls score 60+ trees, so fixing
one defect's ``breaks:`` list must not cost an hour of scoring the same trees again. Each
scoring is kept under the results root, keyed by everything that can change it: the
sandbox, the seed, a digest of the scored tree (its files and its baseline commit), of
the scenario's grading files (all but ``defects/*.yml``, which only declare) and of the
harness package's own source. ``harness controls --reuse`` reads a kept scoring when the
key matches; by default every tree is scored again and kept. The record says which
scorings were reused. DETERMINISM still compares two real scorings (the second is kept
under its own key).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from harness.scenario.load import EVIDENCE_FILES
from harness.scoring import Score
from harness.util.fs import write_json

MEMO_DIR = "scorings"
_CODE: str | None = None


def _walk(root: Path, skip: set[str]) -> list[Path]:
    out: list[Path] = []
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in skip)
        out.extend(Path(top) / f for f in sorted(files) if not f.endswith((".pyc", ".pyo")))
    return out


def _digest(root: Path, skip: set[str], keep: Callable[[str], bool] | None = None) -> str:
    h = hashlib.sha256()
    for path in _walk(root, skip):
        rel = path.relative_to(root).as_posix()
        if keep is not None and not keep(rel):
            continue
        h.update(rel.encode("utf-8", "surrogateescape") + b"\0")
        if path.is_symlink():
            h.update(b"link:" + os.readlink(path).encode("utf-8", "surrogateescape"))
        elif path.is_file():
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def code_digest() -> str:
    """The harness package's source, once per process."""
    global _CODE
    if _CODE is None:
        _CODE = _digest(Path(__file__).resolve().parents[1], {"__pycache__"})
    return _CODE


def tree_digest(tree: Path) -> str:
    """A scored tree's files and links (its ``.git`` left out)."""
    return _digest(tree, {".git"})


def grades(rel: str) -> bool:
    """Whether a scenario file (its path in the folder) can change a scoring: not a
    defect's declarations, the scenario's README nor the calibration ledger (evidence of
    scorings, written as they end: a controls run after a calibration, or after the
    README was brought up to date, still reads its kept scorings)."""
    if rel.startswith("defects/") and rel.endswith(".yml"):
        return False
    return rel != "README.md" and rel.rsplit("/", 1)[-1] not in EVIDENCE_FILES


def key(scenario_dir: Path, tree: Path, baseline: str, sandbox: str, seed: str, tag: str) -> str:
    """The memo key of one scoring of ``tree`` (``tag`` tells the repeat apart)."""
    grading = _digest(scenario_dir, {"__pycache__"}, keep=grades)
    parts = [sandbox, seed, tag, baseline, tree_digest(tree), grading, code_digest()]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def read(folder: Path, memo_key: str) -> Score | None:
    path = folder / MEMO_DIR / f"{memo_key}.json"
    try:
        return Score.model_validate_json(path.read_text())
    except (OSError, ValueError, ValidationError):
        return None


def keep(folder: Path, memo_key: str, score: Score) -> None:
    write_json(folder / MEMO_DIR / f"{memo_key}.json", score.model_dump(mode="json"))
