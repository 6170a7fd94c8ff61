"""The controller's side of the report stream: what pytest logged as it ran, checked
against the JUnit report (verify/python/logged_outcomes.py)."""

from __future__ import annotations

import json

import pytest

from harness.verify.outcome import TestCase as Case
from harness.verify.python.logged_outcomes import CUT, TAG, logged, rejection, without

pytestmark = pytest.mark.unit


def _line(outcome: str, name: str) -> str:
    return TAG + json.dumps([outcome, name])


def _log(*pairs: tuple[str, str]) -> str:
    return "..F\n" + "\n".join(_line(o, n) for o, n in pairs) + "\n1 failed\n"


def test_a_pass_logged_passing_in_every_phase_stands() -> None:
    out = _log(("passed", "m::t"), ("passed", "m::t"), ("passed", "m::t"))
    assert logged(out) == {"m::t": {"passed"}}
    assert rejection([Case(name="m::t", passed=True)], out) is None


def test_a_pass_logged_failing_or_never_logged_is_forged() -> None:
    out = _log(("passed", "m::t"), ("failed", "m::t"), ("passed", "m::u"))
    why = rejection([Case(name="m::t", passed=True)], out)
    assert why is not None and "logged failed" in why
    why = rejection([Case(name="m::v", passed=True)], _log(("passed", "m::t")))
    assert why is not None and "never logged" in why
    # a line the code under test prints can add a claim, never take the plugin's back
    out += _line("passed", "m::t") + "\n"
    assert rejection([Case(name="m::t", passed=True)], out) is not None


def test_a_failure_left_out_of_the_report_is_forged() -> None:
    out = _log(("failed", "m::t"), ("passed", "m::u"))
    why = rejection([Case(name="m::u", passed=True)], out)
    assert why is not None and "missing from the report" in why
    assert rejection([Case(name="m::t", passed=False, error="failure")], out) is None


def test_the_plugin_lines_are_kept_out_of_the_shown_output() -> None:
    out = _log(("passed", "m::t"))
    assert TAG not in without(out) and "1 failed" in without(out)


def test_lines_that_are_not_the_plugins_pairs_are_not_outcomes() -> None:
    out = "\n".join(
        [
            TAG + "not json",
            TAG + json.dumps(["passed"]),  # not a pair
            TAG + json.dumps([1, "m::t"]),  # not strings
            " " + _line("passed", "m::u"),  # not at the start of a line
            _line("skipped", "m::v"),
        ]
    )
    assert logged(out) == {"m::v": {"skipped"}}


def test_a_synthetic_case_or_a_failure_needs_no_log_line() -> None:
    cases = [
        Case(name="build", passed=True, synthetic=True),
        Case(name="m::t", passed=False, error="failure"),
    ]
    assert rejection(cases, "nothing logged\n") is None


def test_a_missing_pass_in_cut_output_says_the_output_was_cut() -> None:
    why = rejection([Case(name="m::t", passed=True)], f"...\n{CUT}1000000 bytes\n")
    assert why is not None and "never logged" in why and "over the cap and cut" in why
    why = rejection([Case(name="m::t", passed=True)], "...\n")
    assert why is not None and "cut" not in why


def test_output_without_plugin_lines_is_returned_as_it_is() -> None:
    out = "a\r\nb\n"
    assert without(out) is out
