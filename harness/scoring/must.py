"""SPEC MUST ids and what "every MUST is met" means, as pure functions.

A SPEC marks each MUST / MUST NOT with an inline id, ``[M-<AREA>-<n>]``. A suite check
declares the ids it verifies (``musts=``); a check is *met* when its row is measured
and scores at least ``1 - tolerance``. A MUST is met when every check declaring it is
met; a critical that is not met has *fired*. A trial's SPEC is met when no MUST is
unmet and no critical fired. See /work/coord/MUST_API.md (kept in docs/ARCHITECTURE).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from pydantic import BaseModel, Field

from harness.errors import UserError
from harness.scoring.rows import Row, Status

MUST_ID = re.compile(r"\[(M-[A-Z][A-Z0-9]*-[0-9]+)\]")
_LOOSE = re.compile(r"\[M-[^\]]*\]")
_BLOCK = re.compile(r"\n\s*\n|\n(?=\s*[-*] )")  # paragraphs and list items


def spec_ids(path: Path) -> dict[str, str]:
    """The MUST ids of a SPEC in order of first occurrence, each with the requirement's
    text: its paragraph or list item up to the id (from the previous id on)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(
            f"cannot read the SPEC: {exc}", file=path, fix="point spec= at SPEC.md"
        ) from exc
    for number, line in enumerate(text.splitlines(), 1):
        for loose in _LOOSE.findall(line):
            if not MUST_ID.fullmatch(loose):
                raise UserError(
                    f"line {number}: {loose} is not a MUST id",
                    file=path,
                    field="MUST id",
                    fix="write ids as [M-AREA-1] (capitals, digits)",
                )
    found: dict[str, str] = {}
    for block in _BLOCK.split(text):
        start = 0
        joined = " ".join(block.split())
        for match in MUST_ID.finditer(joined):
            said = joined[start : match.start()].strip(" -*.;,")
            found.setdefault(match[1], said)
            start = match.end()
    return found


class MustResult(BaseModel):
    """One SPEC id: whether it is met, and the checks that decide it."""

    id: str
    met: bool
    checks: list[str]
    failing: list[str] = Field(default_factory=list, description="declaring checks not met")


def row_met(row: Row, tolerance: float) -> bool:
    """A measured row at or above ``1 - tolerance`` (vacuous and unavailable are not met)."""
    return row.status is Status.OK and row.score >= 1.0 - tolerance - 1e-9


def judge_musts(
    ids: Iterable[str],
    rows: list[Row],
    declared: Mapping[str, tuple[str, ...]],
    tolerances: Mapping[str, float],
) -> tuple[list[MustResult], list[str]]:
    """Per-id results (in ``ids`` order) and the criticals that fired.

    ``declared`` maps a check name to the ids it verifies; ``tolerances`` a check name to
    its tolerance. An id no check declares is unmet (an unverified MUST is not a met one).
    """
    met = {r.check: row_met(r, tolerances.get(r.check, 0.0)) for r in rows}
    by_id: dict[str, list[str]] = {}
    for name, musts in declared.items():  # in ``declared`` order, each check once per id
        for ident in dict.fromkeys(musts):
            by_id.setdefault(ident, []).append(name)
    results = []
    for ident in ids:
        checks = by_id.get(ident, [])
        failing = [c for c in checks if not met.get(c, False)]
        results.append(
            MustResult(id=ident, met=bool(checks) and not failing, checks=checks, failing=failing)
        )
    fired = [r.check for r in rows if r.critical and not met[r.check]]
    return results, fired
