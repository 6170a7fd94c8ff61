"""Harness's errors: one line naming file, field and fix, and the exit code of their kind
(bad input 2, the machine's fault 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import (
    EXIT_BAD_INPUT,
    EXIT_INFRA,
    HarnessError,
    InfraError,
    UserError,
)

pytestmark = pytest.mark.unit


def test_an_error_is_one_line_naming_file_field_and_fix() -> None:
    err = UserError(
        "bad\n  value", file=Path("s/scenario.yml"), field="verify.tests", fix="name\na test"
    )
    assert err.one_line() == "s/scenario.yml: verify.tests: bad value (fix: name a test)"
    assert str(err) == err.one_line() and err.file == "s/scenario.yml"
    assert UserError("just this").one_line() == "just this"
    assert UserError("m", field="--seed").one_line() == "--seed: m"


def test_each_kind_has_its_exit_code() -> None:
    assert UserError("x").exit_code == EXIT_BAD_INPUT == 2
    assert InfraError("x").exit_code == EXIT_INFRA == 3
    assert HarnessError("x").exit_code == EXIT_INFRA  # unknown: never charged to the agent
    assert isinstance(UserError("x"), HarnessError) and isinstance(InfraError("x"), HarnessError)
