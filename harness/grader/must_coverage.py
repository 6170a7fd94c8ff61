"""``harness coverage SCENARIO``: each SPEC MUST id, the checks that verify it, the
defects that violate it, and whether the latest controls proved those defects fail.

Static (no execution): reads the suite's declarations, the SPEC and ``defects/*.yml``;
``controls.json`` of the same scenario content, when present, adds the proof. The pure
arithmetic is ``harness.scoring.coverage``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.errors import UserError
from harness.grader.controls import CONTROLS_FILE, load_defects
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

    @property
    def complete(self) -> bool:
        return bool(self.rows) and not self.unknown and all(r.problem is None for r in self.rows)

    def text(self) -> str:
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
        return "\n".join(lines) + "\n"


def coverage(loaded: LoadedScenario, results: Path) -> CoverageReport:
    """Coverage of one scenario with its own suite."""
    suite_dir = loaded.scenario.verify.suite
    if not suite_dir:
        raise UserError(
            "coverage needs a scenario with its own suite",
            file=loaded.path,
            field="verify.suite",
            fix="test-based scenarios have no MUST ids to cover",
        )
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
