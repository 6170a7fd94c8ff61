"""Suite declaration rules and ``run_checks`` behaviour."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import UserError
from harness.scoring import (
    Gate,
    Outcome,
    Status,
    Suite,
    absent,
    fraction,
    graded,
    mark_vacuous,
    run_checks,
    unavailable,
)

pytestmark = pytest.mark.unit


def _suite(**kw: object) -> Suite:
    return Suite(name="s", version="1.0.0", tier_weights={"core": 0.7, "ui": 0.3}, **kw)


@pytest.mark.parametrize(
    "weights",
    [{"core": 0.7, "ui": 0.2}, {"core": 1.1}, {"core": 1.0, "ui": 0.0}, {}, {"diagnostic": 1.0}],
)
def test_bad_tier_weights_are_user_errors(weights: dict[str, float]) -> None:
    with pytest.raises(UserError) as err:
        Suite(name="s", version="1.0.0", tier_weights=weights)
    assert err.value.field == "tier_weights"


def test_bad_version_and_floor_are_user_errors() -> None:
    with pytest.raises(UserError, match=r"MAJOR\.MINOR\.PATCH"):
        Suite(name="s", version="1.0", tier_weights={"core": 1.0})
    with pytest.raises(UserError, match="outside"):
        Suite(name="s", version="1.0.0", tier_weights={"core": 1.0}, critical_floor=1.0)


def test_check_registration_rules() -> None:
    suite = _suite()
    suite.add("a", lambda c: graded(1), tier="core", harm="h")
    with pytest.raises(UserError, match="registered twice"):
        suite.add("a", lambda c: graded(1), tier="core", harm="h")
    with pytest.raises(UserError, match="names no harm"):
        suite.add("b", lambda c: graded(1), tier="core", harm=" ")
    with pytest.raises(UserError, match="tier 'nope'"):
        suite.add("b", lambda c: graded(1), tier="nope", harm="h")
    with pytest.raises(UserError, match="earlier check"):
        suite.add("b", lambda c: graded(1), tier="core", harm="h", root="later")
    with pytest.raises(UserError, match="only multiplies"):
        suite.add("b", lambda c: graded(1), tier="core", harm="h", critical=True)
    with pytest.raises(UserError, match="only for critical"):
        suite.add("b", lambda c: graded(1), tier="core", harm="h", severity="money")
    with pytest.raises(UserError, match="excellence_weight"):
        suite.add("b", lambda c: graded(1), tier="excellence", harm="h")
    crit = suite.add("m", lambda c: graded(1), harm="wrong money", critical=True, severity="money")
    assert (crit.tier, crit.severity, crit.severity_class) == ("critical", "money", "money")
    assert [c.name for c in suite.checks] == ["a", "m"]


def test_decorator_returns_function_and_suites_are_separate() -> None:
    one, two = _suite(), _suite()

    @one.check("x", tier="core", harm="h")
    def x(ctx: object) -> Outcome:
        return graded(0.5)

    assert x(None).score == 0.5
    assert [c.name for c in one.checks] == ["x"]
    assert two.checks == []


def test_gates_parse_and_validate() -> None:
    gate = Gate.parse("core >= 0.9")
    assert (gate.subject, gate.op, gate.threshold) == ("core", ">=", 0.9)
    assert gate.holds(0.9) and not gate.holds(0.89) and not gate.holds(None)
    with pytest.raises(UserError, match="gate"):
        Gate.parse("core is great")
    suite = _suite(gates=["missing > 0.5"], excellence_weight=0.1)
    suite.add("a", lambda c: graded(1), tier="core", harm="h")
    with pytest.raises(UserError, match="unknown"):
        suite.validate()


def test_run_checks_order_exceptions_and_bad_returns() -> None:
    suite = _suite()
    suite.add("ok", lambda c: graded(c["v"], "fine", [Path("/tmp/x.png")]), tier="core", harm="h")
    suite.add("boom", lambda c: c["missing"], tier="core", harm="h")
    suite.add("wrong", lambda c: 0.5, tier="ui", harm="h")  # type: ignore[arg-type,return-value]
    rows = run_checks(suite, {"v": 0.25})
    assert [r.check for r in rows] == ["ok", "boom", "wrong"]
    assert rows[0].score == 0.25 and rows[0].evidence == ["/tmp/x.png"]
    assert rows[1].status is Status.UNAVAILABLE and "KeyError" in rows[1].detail
    assert rows[2].status is Status.UNAVAILABLE and "not an Outcome" in rows[2].detail


def test_failed_root_makes_dependants_vacuous_without_running_them() -> None:
    suite = _suite()
    ran: list[str] = []

    def dep(ctx: object) -> Outcome:
        ran.append("dep")
        return graded(1)

    suite.add("boot", lambda c: c, tier="core", harm="dead app")
    suite.add("dep", dep, tier="core", harm="h", root="boot")
    suite.add("deeper", dep, tier="ui", harm="h", root="dep")
    for root_outcome in (absent("no server"), graded(0.0)):
        rows = run_checks(suite, root_outcome)
        assert [r.status for r in rows[1:]] == [Status.VACUOUS, Status.VACUOUS]
        assert all(r.score == 0.0 for r in rows[1:])
    assert ran == []
    rows = run_checks(suite, graded(0.5))
    assert [r.status for r in rows] == [Status.OK] * 3 and ran == ["dep", "dep"]
    rows = run_checks(suite, unavailable("docker died"))
    assert rows[1].status is Status.OK  # an unmeasured root does not condemn dependants


def test_mark_vacuous_matches_run_checks() -> None:
    suite = _suite()
    suite.add("boot", lambda c: graded(0), tier="core", harm="h")
    suite.add("dep", lambda c: graded(1), tier="core", harm="h", root="boot")
    synthetic = mark_vacuous([c.row_of(s) for c, s in zip(suite.checks, [0.0, 1.0], strict=True)])
    assert synthetic == run_checks(suite, None)


def test_fraction_helper() -> None:
    assert fraction(3, 4).score == 0.75
    assert fraction(0, 0).status is Status.UNAVAILABLE
    assert graded(1.0000001).score == 1.0
