"""A report changed after pytest wrote it disagrees with what pytest logged as it ran."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.verify.outcome import TestCase as Case
from harness.verify.python.logged_outcomes import TAG, logged, rejection, without
from harness.verify.runners import run_target
from tests.support.forgers import PY_CALC as CALC
from tests.support.forgers import PY_HIDDEN as HIDDEN
from tests.support.forgers import spare_junit


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


ZERO = "\n\ndef test_zero():\n    assert add(0, 0) == 0\n"
# the failures stripped from the report at exit, the canary's (the last file pytest was
# given) kept, and exit 1 as when only the canary fails
SPARE = (
    "\n\nimport atexit, os, sys, time\n"
    + spare_junit()
    + "\nif _junit:\n    atexit.register(_spare)\n"
)


@pytest.mark.integration
def test_a_report_rewritten_at_exit_that_spares_the_canary_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "test_hidden.py").write_text(HIDDEN + ZERO)
    (tmp_path / "calc.py").write_text(CALC.replace("a - b", "a + b"))

    def run() -> tuple[bool, str | None]:
        res = run_target(
            "pytest", "test_hidden.py", "required", tmp_path,
            seed="s", timeout=120, python=sys.executable, canary=True,
        )  # fmt: skip
        assert all(TAG not in c.output for c in res.tests)
        return res.ok, res.error

    assert run() == (True, None)  # a real pass: only the canary failed
    (tmp_path / "calc.py").write_text(CALC + SPARE)
    ok, error = run()
    assert not ok and error is not None and "test_hidden::test_add" in error
    assert "logged failed" in error
