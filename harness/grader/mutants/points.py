"""The mutants of a reference solution: where they are, what they change, which to score.

A mutant is one small change to one line the reference solution wrote (for a folder
solution every line of its files; for a patch, the lines it added). Its id names the
file, the line, the operator and the operator's occurrence in that file, so it is
stable for as long as the reference file is the same, and it is what a triage file
(``mutants.yml``) and a ledger line refer to. Python files get cosmic-ray's operators
and harness's app operators (``python_ops``); Go and JavaScript files get the token
operators (``text_ops``). The sample is deterministic for a seed and spread over the
operator families round-robin, so 100 mutants are not 90 arithmetic swaps. Pure: text
in, mutants out (reading the files is the caller's).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from harness.grader.mutants import python_ops, text_ops

#: File suffixes and the operator set each gets.
PYTHON = (".py",)
TOKENS = (".go", ".js", ".mjs")


@dataclass(frozen=True)
class Mutant:
    """One change to one file of the reference tree."""

    path: str  # relative to the tree, posix
    line: int
    operator: str
    occurrence: int

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}:{self.operator}:{self.occurrence}"

    @property
    def family(self) -> str:
        """The operator without its from/to suffix (``core/ReplaceBinaryOperator``)."""
        return self.operator.split("_", 1)[0]


def mutants_of(path: str, source: str, lines: set[int] | None) -> list[Mutant]:
    """Every mutant of one file (only on ``lines`` when given); none for other kinds."""
    if path.endswith(PYTHON):
        try:
            found = python_ops.sites(source, lines)
            return [Mutant(path, s.line, s.operator, s.occurrence) for s in found]
        except (SyntaxError, ValueError):  # parso is lenient; a broken file has none
            return []
    if path.endswith(TOKENS):
        out: list[Mutant] = []
        seen: dict[str, int] = defaultdict(int)
        for site in text_ops.sites(source):
            n = seen[site.operator]
            seen[site.operator] += 1
            if lines is None or site.line in lines:
                out.append(Mutant(path, site.line, f"tokens/{site.operator}", n))
        return out
    return []


def mutate(source: str, mutant: Mutant) -> str | None:
    """The file's text with the mutant applied; None when it changes nothing."""
    if mutant.operator.startswith("tokens/"):
        family = mutant.operator.removeprefix("tokens/")
        matching = [s for s in text_ops.sites(source) if s.operator == family]
        if mutant.occurrence >= len(matching):
            return None
        changed = text_ops.apply(source, matching[mutant.occurrence])
        return None if changed == source else changed
    site = python_ops.Site(mutant.operator, mutant.occurrence, mutant.line)
    return python_ops.apply(source, site)


def enumerate_tree(
    files: Mapping[str, str], changed: Mapping[str, set[int] | None]
) -> list[Mutant]:
    """The mutants of the changed files (``changed``: path -> lines, None for all)."""
    out: list[Mutant] = []
    for path in sorted(changed):
        if path in files:
            out.extend(mutants_of(path, files[path], changed[path]))
    return out


def sample(mutants: Iterable[Mutant], size: int, seed: str) -> list[Mutant]:
    """``size`` mutants, the same for the same seed: shuffled within each operator
    family, then taken round-robin over the families (spread over files too)."""
    families: dict[str, list[Mutant]] = defaultdict(list)
    for mutant in sorted(mutants, key=lambda m: m.id):
        families[mutant.family].append(mutant)
    rng = random.Random(f"mutants:{seed}")
    queues = []
    for family in sorted(families):
        members = families[family]
        rng.shuffle(members)
        queues.append(members)
    picked: list[Mutant] = []
    while len(picked) < size and any(queues):
        for queue in queues:
            if queue and len(picked) < size:
                picked.append(queue.pop())
    return picked


__all__ = ["Mutant", "enumerate_tree", "mutants_of", "mutate", "sample"]
