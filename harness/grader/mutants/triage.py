"""A scenario's triage of its surviving mutants: ``mutants.yml``, reviewed like code.

Each survivor of ``harness mutants`` is either fixed in the grader (then it is killed
the next time) or recorded here as equivalent, with the reason it behaves as the
reference does::

    equivalent:
      "invoicesync/web.py:12:core/NumberReplacer:1": "the port is always given by PORT"

The file is evidence about the grader, not content a trial sees or is graded by, so
(like the calibration ledger) it is left out of the scenario's lock hash.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from harness.errors import UserError

TRIAGE = "mutants.yml"


def equivalents(scenario_dir: Path) -> dict[str, str]:
    """Triaged equivalent mutants: id -> reason (empty when there is no file)."""
    path = scenario_dir / TRIAGE
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise UserError(
            f"cannot read the mutant triage: {exc}",
            file=path,
            field="equivalent",
            fix="write YAML: equivalent: {mutant id: reason}",
        ) from exc
    found = data.get("equivalent", {}) if isinstance(data, dict) else None
    if not isinstance(found, dict):
        raise UserError(
            "the mutant triage is not a mapping",
            file=path,
            field="equivalent",
            fix="write YAML: equivalent: {mutant id: reason}",
        )
    for ident, reason in found.items():
        if not isinstance(reason, str) or not reason.strip():
            raise UserError(
                f"equivalent mutant {ident} has no reason",
                file=path,
                field=f"equivalent.{ident}",
                fix="say why the mutant behaves as the reference does",
            )
    return {str(k): str(v) for k, v in found.items()}


__all__ = ["TRIAGE", "equivalents"]
