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
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from harness.scoring import Score
from harness.util.fs import write_atomic

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
        )


class Ledger:
    """The lines of one suite's ledger that the current scorer wrote."""

    def __init__(self, path: Path, scorer: str) -> None:
        self.path, self.scorer = path, scorer
        self.entries: dict[tuple[str, str, str, str], Entry] = {}
        for entry in _read(path):
            if entry.scorer == scorer:
                self.entries[_key(entry)] = entry

    def get(self, tree: str, seed: str, sandbox: str, digest: str) -> Entry | None:
        return self.entries.get((tree, seed, sandbox, digest))

    def add(self, entry: Entry) -> None:
        """Record a scoring and write the ledger (atomically, sorted: diffs stay small)."""
        if entry.scorer != self.scorer:
            return  # scored by another scorer than the one this ledger is for: not evidence
        self.entries[_key(entry)] = entry
        lines = [e.model_dump_json() for _, e in sorted(self.entries.items())]
        write_atomic(self.path, "".join(line + "\n" for line in lines))


def _key(entry: Entry) -> tuple[str, str, str, str]:
    return entry.tree, entry.seed, entry.sandbox, entry.digest


def _read(path: Path) -> list[Entry]:
    try:
        text = path.read_text()
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        try:
            out.append(Entry.model_validate(json.loads(line)))
        except (ValueError, ValidationError):
            continue  # a torn or hand-edited line is not evidence
    return out


__all__ = ["LEDGER", "Entry", "Ledger"]
