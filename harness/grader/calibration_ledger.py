"""The calibration ledger: one line per scoring, kept beside the suite's thresholds.

A flagship's calibration is hundreds of executed-app scorings (hours on two cores),
longer than a working session, and a kept scoring (``grader.memo``) lives under a
results root that the next machine does not have. The ledger is the calibration's own
evidence in the scenario folder, so it travels with the scenario: each line names the
tree, the seed, the sandbox, a digest of the tree's files and the scorer's code
fingerprint, with what the bar needs (final, measurable, MUST verdict, unmet ids). A
line counts only for the scorer that wrote it; one written by another scorer (the suite,
its SPEC, fixtures or the app kit changed) is dropped the next time the ledger is
written. ``harness calibrate --reuse`` takes a line whose tree, seed, sandbox and digest
match instead of scoring that tree again; every new scoring adds its line at once, so
an interrupted calibration resumes from the ledger on any machine that has the commit.

A line also keeps each check's score (and its status when not ``ok``), which is enough
to compose the whole ``Score`` again with the suite (``rebuilt``): ``harness controls
--reuse`` takes the first scoring of a tree from a line of the same seed, sandbox and
tree digest, and checks that the composed score gives the line's final and MUST
verdict before it counts. Calibration seed 0 is the scenario's own seed, so the
controls of a calibrated scenario score again only the repeats DETERMINISM compares.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Hashable, Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, Field, ValidationError

from harness.scoring import Score
from harness.scoring.rows import Status
from harness.scoring.scorer import Scorer
from harness.util.fs import write_atomic

#: A check's score alone when its status is ``ok``, else ``[score, status]``.
RowValue = float | tuple[float, str]

LEDGER = "calibration.jsonl"


class Entry(BaseModel):
    """One scoring of one tree on one seed, as the calibration counts it."""

    tree: str
    seed: str
    sandbox: str
    digest: str = Field(description="sha256 of the scored tree's files (.git left out)")
    scorer: str = Field(description="the scorer's code fingerprint")
    final: float
    measurable: bool
    spec_met: bool | None = None
    unmet: list[str] = Field(default_factory=list)
    rows: dict[str, RowValue] | None = Field(
        default=None, description="each check's score in row order (older lines lack it)"
    )

    @classmethod
    def of(cls, tree: str, seed: str, sandbox: str, digest: str, score: Score) -> Entry:
        return cls(
            tree=tree,
            seed=seed,
            sandbox=sandbox,
            digest=digest,
            scorer=score.scorer or "",
            final=score.final,
            measurable=score.measurable,
            spec_met=score.spec_met,
            unmet=sorted(score.unmet),
            rows={
                r.check: r.score if r.status is Status.OK else (r.score, r.status.value)
                for r in score.rows
            },
        )


class Ledger:
    """The lines of one suite's ledger that the current scorer wrote."""

    def __init__(self, path: Path, scorer: str) -> None:
        self.path, self.scorer = path, scorer
        self.entries: dict[tuple[str, str, str, str], Entry] = {}
        for entry in read_lines(path, Entry):
            if entry.scorer == scorer:
                self.entries[_key(entry)] = entry

    def get(self, tree: str, seed: str, sandbox: str, digest: str) -> Entry | None:
        return self.entries.get((tree, seed, sandbox, digest))

    def find(self, seed: str, sandbox: str, digest: str) -> Entry | None:
        """A line of these files on this seed and sandbox, whatever the tree was called."""
        for (_, s, b, d), entry in sorted(self.entries.items()):
            if (s, b, d) == (seed, sandbox, digest):
                return entry
        return None

    def add(self, entry: Entry) -> bool:
        """Record a scoring and write the ledger (atomically, sorted: diffs stay small).

        False, and nothing written, when the scoring was stamped by another scorer than
        this ledger's (the sandbox graded with other code than the host fingerprints)."""
        if entry.scorer != self.scorer:
            return False
        self.entries[_key(entry)] = entry
        merged = add_lines(self.path, Entry, _key, [entry], keep=lambda e: e.scorer == self.scorer)
        self.entries = {_key(e): e for e in merged}
        return True


def rebuilt(entry: Entry, scorer: Scorer) -> Score | None:
    """The line's ``Score`` composed again from its rows with the suite.

    None when the line keeps no rows, names a check the suite lacks, or the composed
    score does not give the line's final, measurability and MUST verdict."""
    if not entry.rows:
        return None
    checks = {c.name: c for c in scorer.suite.checks}
    rows = []
    for name, value in entry.rows.items():
        check = checks.get(name)
        if check is None:
            return None
        score, status = (value, Status.OK) if isinstance(value, float) else value
        rows.append(check.row_of(score, Status(status)))
    got = scorer.score_rows(rows)
    same = (
        abs(got.final - entry.final) <= 1e-9
        and got.measurable == entry.measurable
        and got.spec_met == entry.spec_met
        and sorted(got.unmet) == entry.unmet
        and got.scorer == entry.scorer
    )
    return got if same else None


def _key(entry: Entry) -> tuple[str, str, str, str]:
    return entry.tree, entry.seed, entry.sandbox, entry.digest


Line = TypeVar("Line", bound=BaseModel)


def read_lines(path: Path, model: type[Line]) -> list[Line]:
    """A ledger's lines as ``model``; a torn or hand-edited line is not evidence."""
    try:
        text = path.read_bytes().decode("utf-8", "replace")  # a bad byte spoils its line only
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        try:
            out.append(model.model_validate(json.loads(line)))
        except (ValueError, ValidationError):
            continue
    return out


def write_lines(path: Path, lines: list[BaseModel]) -> None:
    """Write a ledger whole, atomically, one JSON object a line."""
    write_atomic(path, "".join(e.model_dump_json() + "\n" for e in lines))


@contextlib.contextmanager
def holding(path: Path) -> Iterator[None]:
    """This machine's lock on the ledger at ``path`` (a file in the temp folder named
    after the ledger's path: the ledger itself is replaced by every write)."""
    name = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    lock = Path(tempfile.gettempdir()) / f"harness-ledger-{name}.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def add_lines(
    path: Path,
    model: type[Line],
    key: Callable[[Line], Hashable],
    new: list[Line],
    keep: Callable[[Line], bool] = lambda _line: True,
) -> list[Line]:
    """Merge ``new`` into the ledger as it is on disk now, under the ledger's lock: two
    runs that write the same ledger (two calibrations, a mutant run beside another) lose
    none of each other's lines. Lines ``keep`` refuses are dropped; a new line replaces
    one with its key; the ledger stays sorted by key (its diffs stay small). Returns the
    lines written."""
    with holding(path):
        lines = {key(line): line for line in read_lines(path, model) if keep(line)}
        lines.update((key(line), line) for line in new)
        merged = [lines[k] for k in sorted(lines)]  # type: ignore[type-var]
        write_lines(path, list(merged))
    return merged


__all__ = ["LEDGER", "Entry", "Ledger", "add_lines", "read_lines", "rebuilt", "write_lines"]
