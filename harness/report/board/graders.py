"""The grader behind each era, for the board: its controls verdict and mutation score.

Read from ``results/<scenario>/controls.json`` of the scenarios the shown runs belong to
(the record ``harness controls`` writes, which holds an app suite's mutation score): a
reader of the board sees how hard the grader was tried before trusting its numbers.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from harness.report.collect import RunResult


def grader_lines(runs: Iterable[RunResult]) -> dict[str, str]:
    """Era -> one line per proven scenario: ``scenario: verdict; mutation score``."""
    seen: set[Path] = set()
    out: dict[str, list[str]] = {}
    for run in runs:
        path = run.run_dir.parent / "controls.json"  # results/<scenario>/<run_id>
        if path in seen:
            continue
        seen.add(path)
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or data.get("era") != run.era:
            continue
        line = f"{run.scenario}: {data.get('verdict', '?')} ({data.get('sandbox', '?')})"
        mutation = data.get("mutation")
        if isinstance(mutation, dict) and mutation.get("judged"):
            line += (
                f"; mutation score {float(mutation.get('score') or 0):.3f} on "
                f"{mutation['judged']} mutants ({len(mutation.get('survived') or [])} survived)"
            )
        out.setdefault(run.era, []).append(line)
    return {era: "; ".join(sorted(lines)) for era, lines in out.items()}


__all__ = ["grader_lines"]
