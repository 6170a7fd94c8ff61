"""The controller's side of ``plugins/report_stream``: the outcomes the plugin logged to the
run's output as pytest decided them, checked against the JUnit report the run left (a pass
that was never logged passing, or a logged failure left out, is a forged report).
Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from harness.verify.outcome import TestCase

TAG = "[harness-outcome] "
CUT = "[harness] output cut after "  # test_user.run_reaped's note


def logged(output: str) -> dict[str, set[str]]:
    """The outcomes the plugin logged, by JUnit name (``classname::name``)."""
    seen: dict[str, set[str]] = {}
    for line in output.splitlines():
        if not line.startswith(TAG):
            continue
        try:
            outcome, name = json.loads(line[len(TAG) :])
        except (ValueError, TypeError):
            continue
        if isinstance(outcome, str) and isinstance(name, str):
            seen.setdefault(name, set()).add(outcome)
    return seen


def rejection(cases: Iterable[TestCase], output: str) -> str | None:
    """Why the report's passes were not what pytest logged as it ran (None: they were)."""
    seen = logged(output)
    cases = list(cases)
    reported = {c.name for c in cases}
    dropped = sorted(n for n, got in seen.items() if "failed" in got and n not in reported)
    if dropped:
        return f"results forged: {dropped[0]} failed as it ran but is missing from the report"
    for case in cases:
        if not case.passed or case.synthetic:
            continue
        got = seen.get(case.name)
        if not got:
            cut = " (the run's output was over the cap and cut)" if CUT in output else ""
            return f"results forged: {case.name} passed in the report but was never logged{cut}"
        if got != {"passed"}:
            other = sorted(got - {"passed"})[0]
            return f"results forged: {case.name} passed in the report but was logged {other}"
    return None


def without(output: str) -> str:
    """``output`` without the plugin's lines (what the run printed itself)."""
    if TAG not in output:
        return output
    return "\n".join(line for line in output.split("\n") if not line.startswith(TAG))
