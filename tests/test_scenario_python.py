"""Scenario Python under mypy: the hidden tests of every scenario but the executed apps.

``ruff check .`` covers them already (pyproject's per-file ignores say where a hidden test
must look as it does). mypy runs here, in the README's test command, rather than beside the
strict ``mypy`` over ``harness/``: hidden tests are not annotated (pytest does not need it)
and import the package under test, which lives in the scenario's repository, not here.
So their bodies are checked (``--check-untyped-defs``), their imports of that package are
``Any``. ``scenarios/apps/`` is checked app by app: each executed app's scorer suite is a
package under ruff and ``mypy --strict`` (it imports harness, typed); the meridian suites
became packages without a new era, their calibrations carried definition by definition
(``harness calibrate --carry``).
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.integration

SCENARIOS = REPO_ROOT / "scenarios"
LEFT_OUT = SCENARIOS / "apps"
#: the executed apps' scorer suites: linted, typed packages
TYPED_SUITES = [
    SCENARIOS / "apps" / "invoice-sync" / "suite",
    SCENARIOS / "apps" / "meridian-ledger" / "suite",
    SCENARIOS / "apps" / "meridian-console" / "suite",
]

MYPY_OPTIONS = [
    "--config-file=",  # not pyproject's strict [tool.mypy], which is for harness/
    "--python-version=3.11",
    "--ignore-missing-imports",  # the package under test is the scenario repository's
    "--check-untyped-defs",
    "--strict-equality",
    "--warn-unused-ignores",
    "--warn-redundant-casts",
    "--no-error-summary",
]


def scenario_python() -> list[Path]:
    """Every Python file under ``scenarios/`` outside ``scenarios/apps/``."""
    return sorted(p for p in SCENARIOS.rglob("*.py") if not p.is_relative_to(LEFT_OUT))


def test_there_is_scenario_python_to_check() -> None:
    files = scenario_python()
    assert len(files) >= 20, files
    assert any(p.is_relative_to(SCENARIOS / "smoke") for p in files)
    assert not any(p.is_relative_to(LEFT_OUT) for p in files)


def test_scenario_python_passes_mypy(tmp_path: Path) -> None:
    # the cache goes to tmp_path: nothing may be written into a scenario folder (its hash)
    files = [str(p.relative_to(REPO_ROOT)) for p in scenario_python()]
    done = subprocess.run(
        [sys.executable, "-m", "mypy", *MYPY_OPTIONS, f"--cache-dir={tmp_path}", *files],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_packaged_app_suites_pass_strict_mypy(tmp_path: Path) -> None:
    for suite in TYPED_SUITES:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "mypy",
                "--config-file=",
                "--python-version=3.11",
                "--strict",
                "--no-error-summary",
                f"--cache-dir={tmp_path}",
                str(suite.relative_to(REPO_ROOT)),
            ],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stdout + done.stderr


def test_packaged_app_suites_are_not_excluded_from_ruff() -> None:
    """``ruff check .`` (CI's lint stage) reaches them: no exclusion of pyproject names them."""
    excluded = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["ruff"][
        "extend-exclude"
    ]
    for suite in TYPED_SUITES:
        rel = suite.relative_to(REPO_ROOT).as_posix()
        assert not any(rel == e or rel.startswith(e.rstrip("/") + "/") for e in excluded), excluded
