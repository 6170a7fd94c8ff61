"""Severity selftest: synthetic single-defect rows pushed through the real ``compose()``.

Run at every scorer start; a failure means the weights do not say what the suite claims
about harm, so the scorer refuses to score. Properties (all strict):

- all-perfect is 1.0, and a diagnostic check at 0 changes nothing;
- along ``severity_ranking`` (default: critical classes, then the lightest tier) every
  check of a class costs more than any check of the next class;
- one violated critical costs more than all cosmetic (last-ranked) checks at 0.5;
- sweeping any check's score from 0 to 1 never lowers the final (criticals: raises it);
- unavailable beats zero (or leaves nothing measurable, so no score is claimed);
  absent scores below implemented-with-a-violation (0.5).
"""

from __future__ import annotations

import math

from harness.errors import UserError
from harness.scoring.compose import Score, compose
from harness.scoring.rows import DIAGNOSTIC, Row, Status
from harness.scoring.run import mark_vacuous
from harness.scoring.suite import Check, Suite

_SWEEP = [i / 10 for i in range(11)]
_TOL = 1e-12


class SelftestFailed(UserError):
    """The suite's arithmetic contradicts its declared severities; ``failures`` lists why."""

    def __init__(self, suite: str, failures: list[str]) -> None:
        self.failures = failures
        more = f" (+{len(failures) - 1} more)" if len(failures) > 1 else ""
        super().__init__(
            f"severity selftest of suite {suite} failed: {failures[0]}{more}",
            fix="fix the tier weights, floors or severity_ranking",
        )


def selftest(suite: Suite) -> None:
    """Raise ``SelftestFailed`` unless every severity property holds for ``suite``."""
    suite.validate()
    probe = _Probe(suite)
    failures: list[str] = []
    perfect = probe.final({})
    if not math.isclose(perfect, 1.0, abs_tol=1e-9):
        failures.append(f"all-perfect scores {perfect:.6f}, not 1.0")
    scored = [c for c in suite.checks if c.tier != DIAGNOSTIC]
    for chk in suite.checks:
        if chk.tier == DIAGNOSTIC and not math.isclose(probe.final({chk.name: 0.0}), perfect):
            failures.append(f"diagnostic {chk.name} changes the score")
    cost = {c.name: perfect - probe.final({c.name: 0.0}) for c in scored}
    failures += _ranking(suite, scored, cost)
    failures += _critical_vs_cosmetic(suite, probe, scored, cost, perfect)
    for chk in scored:
        failures += _sweep(probe, chk)
        zero = probe.final({chk.name: 0.0})
        gone = probe.compose({chk.name: Status.UNAVAILABLE})
        if gone.measurable and not gone.final > zero + _TOL:
            failures.append(f"{chk.name}: unavailable does not beat a zero")
        if not probe.final({chk.name: Status.ABSENT}) < probe.final({chk.name: 0.5}) - _TOL:
            failures.append(f"{chk.name}: absent is not below implemented at 0.5")
    if failures:
        raise SelftestFailed(suite.name, failures)


class _Probe:
    """Builds synthetic row sets (perfect except the given changes) and composes them."""

    def __init__(self, suite: Suite) -> None:
        self.suite = suite
        # rows are frozen: one per (check, change), shared by the ~1,600 compositions
        self._rows: dict[tuple[str, float | Status], Row] = {}

    def final(self, changes: dict[str, float | Status]) -> float:
        return self.compose(changes).final

    def _row(self, chk: Check, change: float | Status) -> Row:
        got = self._rows.get((chk.name, change))
        if got is None:
            if isinstance(change, Status):
                got = chk.row_of(0.0, change)
            else:
                got = chk.row_of(change, Status.OK)
            self._rows[(chk.name, change)] = got
        return got

    def compose(self, changes: dict[str, float | Status]) -> Score:
        rows = [self._row(chk, changes.get(chk.name, 1.0)) for chk in self.suite.checks]
        return compose(mark_vacuous(rows), self.suite)


def _levels(suite: Suite, scored: list[Check]) -> list[set[str]]:
    if suite.severity_ranking:
        return [{c} for c in suite.severity_ranking]
    critical = {c.severity_class for c in scored if c.critical}
    tiers = {c.tier for c in scored if c.tier in suite.tier_weights}
    lightest = {min(tiers, key=lambda t: suite.tier_weights[t])} if tiers else set()
    return [lvl for lvl in (critical, lightest) if lvl]


def _ranking(suite: Suite, scored: list[Check], cost: dict[str, float]) -> list[str]:
    levels = _levels(suite, scored)
    members = [[c for c in scored if c.severity_class in lvl] for lvl in levels]
    out = [
        f"severity_ranking class {sorted(lvl)} has no checks"
        for lvl, got in zip(levels, members, strict=True)
        if not got
    ]
    for i in range(len(levels) - 1):
        hi_c, lo_c = members[i], members[i + 1]
        if not hi_c or not lo_c:
            continue
        cheap = min(hi_c, key=lambda c: cost[c.name])
        dear = max(lo_c, key=lambda c: cost[c.name])
        if not cost[cheap.name] > cost[dear.name] + _TOL:
            out.append(
                f"{cheap.name} ({cheap.severity_class}) costs {cost[cheap.name]:.4f}, "
                f"not more than {dear.name} ({dear.severity_class}) at "
                f"{cost[dear.name]:.4f}"
            )
    return out


def _critical_vs_cosmetic(
    suite: Suite, probe: _Probe, scored: list[Check], cost: dict[str, float], perfect: float
) -> list[str]:
    levels = _levels(suite, scored)
    last = levels[-1] if levels else set()
    cosmetic = [c for c in scored if c.severity_class in last and not c.critical]
    if not cosmetic:
        return []
    half = perfect - probe.final({c.name: 0.5 for c in cosmetic})
    return [
        f"critical {c.name} costs {cost[c.name]:.4f}, not more than all cosmetic "
        f"checks at 0.5 ({half:.4f})"
        for c in scored
        if c.critical and not cost[c.name] > half + _TOL
    ]


def _sweep(probe: _Probe, chk: Check) -> list[str]:
    finals = [probe.final({chk.name: s}) for s in _SWEEP]
    for i in range(len(_SWEEP) - 1):
        f0, f1 = finals[i], finals[i + 1]
        if f1 < f0 - _TOL or (chk.critical and not f1 > f0 + _TOL):
            return [
                f"{chk.name}: raising its score {_SWEEP[i]:g} -> {_SWEEP[i + 1]:g} "
                f"moves the final {f0:.4f} -> {f1:.4f}"
            ]
    return []
