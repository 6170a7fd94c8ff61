"""``harness coverage SCENARIO``: each SPEC MUST id, the checks that verify it, the
defects that violate it, and whether the latest controls proved those defects fail.

Static (no execution): reads the suite's declarations, the SPEC and ``defects/*.yml``;
``controls.json`` of the same scenario content, when present, adds the proof. The pure
arithmetic is ``harness.scoring.coverage``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.grader.controls import CONTROLS_FILE, load_defects
from harness.grader.mutants.ledger import current_score
from harness.grader.mutants.score import FLAG_BELOW, MIN_SAMPLE, MIN_SCORE, MutationScore
from harness.scenario.model import LoadedScenario
from harness.scoring.coverage import CoverageRow, static_coverage, unknown_ids
from harness.scoring.must import spec_ids
from harness.util.fs import read_json
from harness.verify.scoring_bridge import load_suite_module


@dataclass(frozen=True)
class CoverageReport:
    scenario: str
    rows: list[CoverageRow]
    unknown: list[str]
    proven_at: str | None
    mutation: MutationScore | None = None
    tests_only: bool = False  # a test-based scenario: no MUST ids, only its mutants

    @property
    def complete(self) -> bool:
        if self.tests_only:
            return True
        return bool(self.rows) and not self.unknown and all(r.problem is None for r in self.rows)

    def mutation_line(self) -> str:
        """The mutants' share of near misses the grader catches, and what it is held to."""
        found = self.mutation or MutationScore()
        if not found.judged:
            return "mutants: none scored by this grader (`harness mutants SCENARIO`)"
        text = f"mutants: {found.line()}"
        if self.tests_only and found.score is not None and found.score < FLAG_BELOW:
            text += f"; FLAGGED: under {FLAG_BELOW}, the hidden tests miss near-miss fixes"
        elif not self.tests_only:
            text += f"; GRADER TRUSTED needs >= {MIN_SCORE} on >= {MIN_SAMPLE}"
        return text

    def text(self) -> str:
        if self.tests_only:
            return f"coverage of {self.scenario}\n{self.mutation_line()}\n"
        head = f"{'MUST':<14} {'checks':<40} {'defects (violates)':<40} status"
        lines = [f"coverage of {self.scenario}", head]
        lines += [r.line() for r in self.rows]
        lines += [f"unknown id in a defect: {u}" for u in self.unknown]
        proof = (
            f"proof: controls of {self.proven_at}"
            if self.proven_at
            else "proof: none (run `harness controls` for this scenario content)"
        )
        holes = [r.id for r in self.rows if r.problem]
        lines.append(proof)
        if not self.rows:
            lines.append("NOT COVERED: the SPEC marks no MUST id ([M-AREA-n])")
        elif holes or self.unknown:
            lines.append(f"NOT COVERED: {', '.join(holes + self.unknown)}")
        else:
            lines.append(f"COVERED: {len(self.rows)} MUSTs, each verified and violated alone")
        lines.append(self.mutation_line())
        return "\n".join(lines) + "\n"


def coverage(loaded: LoadedScenario, results: Path) -> CoverageReport:
    """Coverage of one scenario: its MUSTs (with its own suite) and its mutants."""
    suite_dir = loaded.scenario.verify.suite
    mutation = current_score(loaded) if loaded.scenario.solution else None
    if not suite_dir:  # test-based: no MUST ids to cover, only near misses to catch
        return CoverageReport(loaded.name, [], [], None, mutation, tests_only=True)
    suite = load_suite_module(loaded.directory / suite_dir).suite
    suite.validate()
    ids = suite.spec_ids()
    if not ids and loaded.scenario.spec:
        ids = spec_ids(loaded.directory / loaded.scenario.spec)
    violations = {d.name: list(d.violates) for d in load_defects(loaded)}
    proven, at = _proof(loaded, results)
    return CoverageReport(
        scenario=loaded.name,
        rows=static_coverage(ids, suite.declared_musts(), violations, proven),
        unknown=unknown_ids(ids, violations),
        proven_at=at,
        mutation=mutation,
    )


def _proof(loaded: LoadedScenario, results: Path) -> tuple[dict[str, bool] | None, str | None]:
    """Defect -> failed as declared, from controls.json of this exact scenario content."""
    path = results / loaded.name / CONTROLS_FILE
    if not path.is_file():
        return None, None
    data = read_json(path)
    if data.get("scenario_sha") != loaded.sha256:
        return None, None
    out = {}
    for d in data.get("defects", []):
        violates = d.get("violates") or []
        unmet = set(d.get("unmet") or [])
        out[str(d["name"])] = bool(violates) and not d.get("success") and unmet >= set(violates)
    return out, f"{data.get('at')} ({data.get('sandbox')})"
