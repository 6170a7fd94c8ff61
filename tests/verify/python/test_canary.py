"""The failing canary beside every pytest target: a report where it passed is forged."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.verify.outcome import TestCase as Case
from harness.verify.python.canary import Canary, applies, split
from harness.verify.runners import run_target

BIRD = Canary("test_0a1b2c.py", "test_3d4e5f", "feedbeef", "Test_9a8b")
OWN = [Case(name="test_calc::test_add", passed=True)]


def bird(passed: bool, output: str = "AssertionError: feedbeef") -> Case:
    return Case(name="test_0a1b2c.Test_9a8b::test_3d4e5f", passed=passed, output=output)


@pytest.mark.unit
def test_a_failing_canary_is_taken_out_and_proves_the_report() -> None:
    assert split(BIRD, [*OWN, bird(False)]) == (OWN, None)


@pytest.mark.unit
@pytest.mark.parametrize(
    "cases",
    [[*OWN, bird(True)], [*OWN, bird(False, "AssertionError")], [*OWN, bird(False), bird(False)]],
    ids=["passed", "message-lost", "reported-twice"],
)
def test_a_canary_that_did_not_fail_as_written_means_forged(cases: list[Case]) -> None:
    own, why = split(BIRD, cases)
    assert own == OWN and why is not None and "forged" in why


@pytest.mark.unit
def test_a_missing_canary_means_forged_and_a_failing_suite_never_does() -> None:
    own, why = split(BIRD, OWN)  # deleted from the report with the failing cases
    assert own == OWN and why is not None and "missing" in why
    failing = [Case(name="test_calc::test_add", passed=False)]
    assert split(BIRD, [*failing, bird(True)]) == (failing, None)  # failed anyway


@pytest.mark.unit
def test_targets_that_select_their_tests_run_without_a_canary() -> None:
    assert applies(["test_calc.py", "-q"]) and applies(["tests/test_a.py::test_b"])
    for tokens in (["-k", "add"], ["-m", "slow"], ["--deselect=x"], ["--collect-only"]):
        assert not applies(tokens)
    fresh = Canary.fresh()
    assert fresh.rel.startswith("test_") and fresh.message in fresh.source()
    assert fresh != Canary.fresh()


CALC = "def add(a, b):\n    return a - b\n"
HIDDEN = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
ZERO = "\n\ndef test_zero():\n    assert add(0, 0) == 0\n"
STRIP = """

import atexit, os, re, sys
_junit = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--junitxml=")), None)


def _strip():
    text = open(_junit).read()
    open(_junit, "w").write(re.sub(r"<failure\\b.*?</failure>", "", text, flags=re.S))
    os._exit(0)  # and pytest's exit status with it


if _junit:
    atexit.register(_strip)
"""


DROP = """

import atexit, os, sys
_junit = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--junitxml=")), None)


def _drop():
    import xml.etree.ElementTree as ET

    tree = ET.parse(_junit)
    for suite in tree.getroot().iter("testsuite"):
        for case in list(suite.findall("testcase")):
            if case.find("failure") is not None or case.find("error") is not None:
                suite.remove(case)
    tree.write(_junit)
    os._exit(0)


if _junit:
    atexit.register(_drop)
"""


def _run(tree: Path, canary: bool) -> tuple[bool, str | None, int | None]:
    res = run_target(
        "pytest", "test_hidden.py", "required", tree,
        seed="s", timeout=120, python=sys.executable, canary=canary,
    )  # fmt: skip
    assert not any(
        p.name.startswith("test_") and p.name != "test_hidden.py" for p in tree.iterdir()
    )
    return res.ok, res.error, res.exit_code


@pytest.mark.integration
def test_a_real_pass_stays_a_pass_and_a_stripped_report_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "test_hidden.py").write_text(HIDDEN)
    (tmp_path / "calc.py").write_text(CALC.replace("a - b", "a + b"))
    assert _run(tmp_path, canary=True) == (True, None, 0)  # only the canary failed
    (tmp_path / "calc.py").write_text(CALC + STRIP)
    ok, error, _ = _run(tmp_path, canary=False)  # the run's own log tells (report_stream)
    assert not ok and error is not None and "logged failed" in error
    ok, error, _ = _run(tmp_path, canary=True)
    assert not ok and error is not None and error.startswith("rejected: results forged")
    (tmp_path / "calc.py").write_text(CALC + DROP)  # the failing cases deleted, canary too
    (tmp_path / "test_hidden.py").write_text(HIDDEN + ZERO)  # one case that passes anyway
    ok, error, _ = _run(tmp_path, canary=False)
    assert not ok and error is not None and "missing from the report" in error
    ok, error, _ = _run(tmp_path, canary=True)
    assert not ok and error is not None and "missing" in error


@pytest.mark.integration
def test_the_canary_is_collected_whatever_the_project_collects(tmp_path: Path) -> None:
    """A project that collects only ``check_*`` functions and ``Check*`` classes from
    ``*_check.py`` files: a real pass stays a pass (the canary ran and failed)."""
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\npython_files = *_check.py\npython_functions = check_*\npython_classes = Check*\n"
    )
    (tmp_path / "calc.py").write_text(CALC.replace("a - b", "a + b"))
    (tmp_path / "test_hidden.py").write_text(HIDDEN.replace("def test_add", "def check_add"))
    assert _run(tmp_path, canary=True) == (True, None, 0)  # not collected: "missing"
