"""A report changed after pytest wrote it disagrees with what pytest logged as it ran."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.verify.python.logged_outcomes import TAG
from harness.verify.runners import run_target
from tests.support.forgers import PY_CALC as CALC
from tests.support.forgers import PY_HIDDEN as HIDDEN
from tests.support.forgers import spare_junit

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
