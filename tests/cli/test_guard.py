"""Every command's error contract: one line on stderr and the documented exit code."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from harness.cli.guard import guarded
from harness.errors import EXIT_INFRA, InfraError, UserError

pytestmark = pytest.mark.unit


def _exit_of(exc: BaseException) -> tuple[int, str]:
    app = typer.Typer()

    @app.command()
    @guarded
    def boom() -> None:
        raise exc

    done = CliRunner().invoke(app, [])
    return done.exit_code, done.output


def test_bad_input_is_one_line_and_exit_2() -> None:
    code, out = _exit_of(UserError("no such scenario", field="scenario", fix="list them"))
    assert code == 2
    assert out.startswith("harness: ") and out.count("\n") == 1 and "scenario" in out


def test_infrastructure_is_exit_3() -> None:
    assert _exit_of(InfraError("engine gone"))[0] == EXIT_INFRA == 3
    code, out = _exit_of(ConnectionError("refused"))
    assert code == 3 and "infrastructure error: ConnectionError: refused" in out


def test_an_interrupt_is_exit_130() -> None:
    assert _exit_of(KeyboardInterrupt()) == (130, "harness: interrupted\n")


def test_a_bug_is_not_dressed_as_infrastructure() -> None:
    code, _ = _exit_of(ValueError("a bug"))
    assert code == 1  # the traceback is kept: not an exit code harness promises
    assert _exit_of(BrokenPipeError())[0] != EXIT_INFRA
