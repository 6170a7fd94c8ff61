"""A ``Suite`` is one scenario's scorer: its checks plus the composition settings.

Checks register on a suite object (``@suite.check(...)``), never in a process-global
registry, because several suites are loaded in one process. Every setting is validated
when it is declared, so a badly weighted suite fails at import with a ``UserError``.
"""

from __future__ import annotations

import inspect
import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.scoring.must import spec_ids
from harness.scoring.rows import (
    CRITICAL,
    DIAGNOSTIC,
    EXCELLENCE,
    RESERVED_TIERS,
    Outcome,
    Row,
    Status,
)

CheckFn = Callable[[Any], Outcome]
"""A check: takes the scorer's context (opaque here) and returns an ``Outcome``."""

_VERSION = re.compile(r"^\d+\.\d+\.\d+$")
_GATE = re.compile(r"^\s*(\S+)\s*(>=|<=|>|<)\s*([0-9]*\.?[0-9]+)\s*$")
_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
}


@dataclass(frozen=True)
class Gate:
    """``<subject> <op> <threshold>``; subject is a tier, ``inner`` or a check name."""

    subject: str
    op: str
    threshold: float

    @classmethod
    def parse(cls, text: str) -> Gate:
        match = _GATE.match(text)
        if not match:
            raise UserError(
                f"gate {text!r} is not '<tier|inner|check> <op> <number>'",
                field="gates",
                fix="write e.g. 'core >= 0.9'",
            )
        return cls(match[1], match[2], float(match[3]))

    def holds(self, value: float | None) -> bool:
        """An unmeasurable subject (``None``) never opens a gate."""
        return value is not None and _OPS[self.op](value, self.threshold)

    def __str__(self) -> str:
        return f"{self.subject} {self.op} {self.threshold:g}"


@dataclass(frozen=True)
class Check:
    """A registered check: identity, the harm it stands for, and the function."""

    name: str
    tier: str
    harm: str
    fn: CheckFn
    critical: bool = False
    severity: str | None = None
    root: str | None = None
    musts: tuple[str, ...] = ()
    tolerance: float = 0.0
    tolerance_why: str = ""

    @property
    def severity_class(self) -> str:
        """Class used by the selftest ranking: the severity for criticals, else the tier."""
        return self.severity if self.critical and self.severity else self.tier

    def row_of(self, score: float, status: Status = Status.OK, detail: str = "") -> Row:
        """A synthetic row of this check (selftest, generated suites)."""
        return self.row(Outcome(score=score, status=status, detail=detail))

    def row(self, outcome: Outcome) -> Row:
        """Stamp a measurement with this check's identity."""
        return Row(
            check=self.name,
            tier=self.tier,
            harm=self.harm,
            score=outcome.score,
            status=outcome.status,
            detail=outcome.detail,
            evidence=outcome.evidence,
            critical=self.critical,
            severity=self.severity,
            root=self.root,
            musts=list(self.musts),
            tolerance=self.tolerance,
        )


class Suite:
    """Checks in declaration order plus weights, gates, critical floors and pins.

    ``tier_weights`` must be positive and sum to 1 (reserved tiers ``diagnostic``,
    ``critical`` and ``excellence`` are not weighted there). ``excellence_weight`` is the
    share of the score unlocked by ``gates`` (fraction met) times the excellence mean.
    A critical's factor is ``m + (1 - m) * score`` with ``m = class_floors.get(severity,
    critical_floor)``. ``severity_ranking`` lists classes (critical severities or tiers)
    from most to least costly; the selftest enforces it and treats the last as cosmetic.
    """

    def __init__(
        self,
        name: str,
        version: str,
        tier_weights: Mapping[str, float],
        *,
        excellence_weight: float = 0.0,
        gates: Iterable[str] = (),
        critical_floor: float = 0.6,
        class_floors: Mapping[str, float] | None = None,
        severity_ranking: Sequence[str] | None = None,
        thresholds: Path | None = None,
        thresholds_pin: str | None = None,
        fixtures: Sequence[Path] = (),
        sources: Sequence[Path] = (),
        spec: Path | None = None,
    ) -> None:
        if not name or not name.strip():
            raise UserError("suite name is empty", field="name", fix="name the suite")
        if not _VERSION.match(version):
            raise UserError(
                f"suite {name}: version {version!r} is not MAJOR.MINOR.PATCH",
                field="version",
                fix="use e.g. '1.0.0'",
            )
        self.name = name
        self.version = version
        self.tier_weights = _check_weights(name, dict(tier_weights))
        if not 0.0 <= excellence_weight < 1.0:
            raise UserError(
                f"suite {name}: excellence_weight {excellence_weight} is outside [0, 1)",
                field="excellence_weight",
                fix="use a share such as 0.1",
            )
        self.excellence_weight = float(excellence_weight)
        self.gates = tuple(Gate.parse(g) for g in gates)
        self.critical_floor = _check_floor(name, CRITICAL, critical_floor)
        self.class_floors = {k: _check_floor(name, k, v) for k, v in (class_floors or {}).items()}
        self.severity_ranking = tuple(severity_ranking) if severity_ranking else None
        self.thresholds = Path(thresholds) if thresholds is not None else None
        self.thresholds_pin = thresholds_pin
        self.fixtures = tuple(Path(p) for p in fixtures)
        self.sources = tuple(Path(p) for p in sources)
        self.spec = Path(spec) if spec is not None else None
        self._checks: dict[str, Check] = {}
        self._spec_ids: dict[str, str] | None = None

    def spec_ids(self) -> dict[str, str]:
        """The SPEC's MUST ids (empty when the suite names no SPEC), read once."""
        if self._spec_ids is None:
            self._spec_ids = spec_ids(self.spec) if self.spec is not None else {}
        return self._spec_ids

    @property
    def decides_by_musts(self) -> bool:
        """Whether success is "every MUST met" (the suite names a SPEC with ids)."""
        return bool(self.spec_ids())

    @property
    def checks(self) -> list[Check]:
        """Registered checks in declaration order."""
        return list(self._checks.values())

    def get(self, name: str) -> Check:
        return self._checks[name]

    def floor(self, severity: str | None) -> float:
        """The multiplier floor ``m`` of a critical class."""
        return self.class_floors.get(severity or CRITICAL, self.critical_floor)

    def check(
        self,
        name: str,
        *,
        harm: str,
        tier: str | None = None,
        critical: bool = False,
        severity: str | None = None,
        root: str | None = None,
        musts: Sequence[str] = (),
        tolerance: float = 0.0,
        tolerance_why: str = "",
    ) -> Callable[[CheckFn], CheckFn]:
        """Decorator: register ``fn`` as a check of this suite; returns ``fn`` unchanged.

        Non-critical checks need a ``tier`` (a weighted tier, ``diagnostic`` or
        ``excellence``). Critical checks take a ``severity`` class and no tier. ``root``
        names an earlier check this one is downstream of. ``musts`` are the SPEC ids the
        check verifies; it meets them at ``score >= 1 - tolerance`` (``tolerance_why``
        says why a tolerance above zero is right).
        """

        def register(fn: CheckFn) -> CheckFn:
            self.add(
                name,
                fn,
                harm=harm,
                tier=tier,
                critical=critical,
                severity=severity,
                root=root,
                musts=musts,
                tolerance=tolerance,
                tolerance_why=tolerance_why,
            )
            return fn

        return register

    def add(
        self,
        name: str,
        fn: CheckFn,
        *,
        harm: str,
        tier: str | None = None,
        critical: bool = False,
        severity: str | None = None,
        root: str | None = None,
        musts: Sequence[str] = (),
        tolerance: float = 0.0,
        tolerance_why: str = "",
    ) -> Check:
        """Register a check without decorator syntax (used for generated suites)."""
        where = f"suite {self.name}: check {name!r}"
        if not name or name in self._checks:
            raise UserError(
                f"{where} is empty or registered twice",
                field="name",
                fix="give each check a unique name",
            )
        if not harm or not harm.strip():
            raise UserError(
                f"{where} names no harm",
                field="harm",
                fix="state the consequence, or drop the check",
            )
        if critical:
            if tier not in (None, CRITICAL):
                raise UserError(
                    f"{where}: a critical has no tier (it only multiplies)",
                    field="tier",
                    fix="drop tier=, or drop critical=True",
                )
            tier, severity = CRITICAL, severity or CRITICAL
        else:
            if severity is not None:
                raise UserError(
                    f"{where}: severity is only for critical checks",
                    field="severity",
                    fix="add critical=True or drop severity=",
                )
            allowed = {*self.tier_weights, DIAGNOSTIC, EXCELLENCE}
            if tier not in allowed:
                raise UserError(
                    f"{where}: tier {tier!r} is not one of {sorted(allowed)}",
                    field="tier",
                    fix="use a tier named in tier_weights",
                )
            if tier == EXCELLENCE and self.excellence_weight == 0.0:
                raise UserError(
                    f"{where}: excellence checks need excellence_weight > 0",
                    field="excellence_weight",
                    fix="set e.g. 0.1",
                )
        if root is not None and root not in self._checks:
            raise UserError(
                f"{where}: root {root!r} is not an earlier check",
                field="root",
                fix="declare the root check first",
            )
        assert tier is not None
        _check_musts(where, tier, tuple(musts), tolerance, tolerance_why)
        made = Check(
            name=name,
            tier=tier,
            harm=harm.strip(),
            fn=fn,
            critical=critical,
            severity=severity,
            root=root,
            musts=tuple(musts),
            tolerance=float(tolerance),
            tolerance_why=tolerance_why.strip(),
        )
        self._checks[name] = made
        return made

    def validate(self) -> None:
        """Cross-checks that need all checks registered: gate subjects exist."""
        known = {"inner", *self.tier_weights, EXCELLENCE, *self._checks}
        for gate in self.gates:
            if gate.subject not in known:
                raise UserError(
                    f"suite {self.name}: gate '{gate}' names unknown {gate.subject!r}",
                    field="gates",
                    fix="name a tier, 'inner' or a registered check",
                )
        if not self._checks:
            raise UserError(f"suite {self.name} has no checks", fix="register checks")
        ids = self.spec_ids()
        for chk in self._checks.values():
            unknown = [m for m in chk.musts if m not in ids]
            if unknown:
                raise UserError(
                    f"suite {self.name}: check {chk.name!r} declares {unknown}, not in the SPEC",
                    file=self.spec,
                    field="musts",
                    fix="mark the requirement in SPEC.md with [M-...] or fix the id",
                )

    def declared_musts(self) -> dict[str, tuple[str, ...]]:
        """Check name -> SPEC ids it verifies (checks with ids only)."""
        return {c.name: c.musts for c in self._checks.values() if c.musts}

    def tolerances(self) -> dict[str, float]:
        return {c.name: c.tolerance for c in self._checks.values()}

    def source_files(self) -> list[Path]:
        """Files that define this suite: declared sources plus each check's module."""
        found = {p.resolve() for p in self.sources}
        if self.spec is not None:
            found.add(self.spec.resolve())
        for chk in self._checks.values():
            src = inspect.getsourcefile(chk.fn)
            if src and Path(src).is_file():  # skip "<string>", "<stdin>" definitions
                found.add(Path(src).resolve())
        return sorted(found)

    def downstream(self, root: str) -> list[str]:
        """Checks transitively downstream of ``root``, in declaration order."""
        below: set[str] = {root}
        out: list[str] = []
        for chk in self._checks.values():
            if chk.root in below:
                below.add(chk.name)
                out.append(chk.name)
        return out


def _check_weights(name: str, weights: dict[str, float]) -> dict[str, float]:
    if not weights:
        raise UserError(
            f"suite {name}: tier_weights is empty",
            field="tier_weights",
            fix="weight at least one tier, e.g. {'core': 1.0}",
        )
    reserved = RESERVED_TIERS & set(weights)
    if reserved:
        raise UserError(
            f"suite {name}: tiers {sorted(reserved)} are reserved",
            field="tier_weights",
            fix="rename the tier",
        )
    if any(not (w > 0.0) for w in weights.values()):
        raise UserError(
            f"suite {name}: tier weights must be positive: {weights}",
            field="tier_weights",
            fix="use tier 'diagnostic' for weight zero",
        )
    total = sum(weights.values())
    if not math.isclose(total, 1.0, abs_tol=1e-9):
        raise UserError(
            f"suite {name}: tier weights sum to {total:g}, not 1",
            field="tier_weights",
            fix="make the weights sum to 1",
        )
    return {k: float(v) for k, v in weights.items()}


def _check_musts(where: str, tier: str, musts: tuple[str, ...], tolerance: float, why: str) -> None:
    if musts and tier in (DIAGNOSTIC, EXCELLENCE):
        raise UserError(
            f"{where}: a {tier} check cannot carry MUST ids (it never decides success)",
            field="musts",
            fix="move the ids to a graded or critical check",
        )
    if not 0.0 <= tolerance < 1.0:
        raise UserError(
            f"{where}: tolerance {tolerance} is outside [0, 1)",
            field="tolerance",
            fix="use 0 (all or nothing) or a small share such as 0.05",
        )
    if tolerance > 0.0 and not why.strip():
        raise UserError(
            f"{where}: tolerance {tolerance} without tolerance_why",
            field="tolerance_why",
            fix="say why the SPEC is still met below 1.0, or use tolerance 0",
        )


def _check_floor(name: str, klass: str, floor: float) -> float:
    if not 0.0 <= floor < 1.0:
        raise UserError(
            f"suite {name}: floor for {klass!r} is {floor}, outside [0, 1)",
            field="critical_floor",
            fix="use e.g. 0.6",
        )
    return float(floor)
