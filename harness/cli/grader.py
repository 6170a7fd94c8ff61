"""Proving a scenario's grader: ``harness controls`` (or the attack catalogue with
``--containment``), ``coverage`` and ``calibrate``."""

from __future__ import annotations

from typing import Annotated

import typer

from harness.cli.guard import guarded
from harness.cli.options import (
    SandboxOpt,
    check_sandbox,
    current_settings,
    load_named,
)
from harness.errors import EXIT_FAILED, EXIT_SUCCESS, UserError
from harness.grader.controls import run_controls


@guarded
def controls_cmd(
    scenarios: Annotated[list[str] | None, typer.Argument(help="scenario names")] = None,
    sandbox: SandboxOpt = "docker",
    containment: Annotated[
        bool,
        typer.Option(
            "--containment",
            help="play the attack catalogue as real trials; CONTAINED / NOT CONTAINED each",
        ),
    ] = False,
    attack: Annotated[
        list[str] | None, typer.Option("--attack", help="only these attacks (repeatable)")
    ] = None,
    reuse: Annotated[
        bool,
        typer.Option(
            "--reuse",
            help="read each tree's scoring kept by an earlier run when nothing it depends on "
            "changed (after editing a defect's breaks:); a scenario with a calibration "
            "ledger also gets each new first scoring as a line of it",
        ),
    ] = False,
) -> None:
    """Prove the grader: HIGH, LOW, ISOLATION, CRITICAL, DETERMINISM; writes controls.json.
    With --containment: prove the sandbox instead, attack by attack."""
    if containment:
        from harness.grader.containment.catalogue import load_attacks
        from harness.grader.containment.control import run_catalogue

        attacks = load_attacks(names=attack)
        results = run_catalogue(attacks, current_settings(), check_sandbox(sandbox), typer.echo)
        bad = [r for r in results if not r.contained]
        typer.echo(f"{len(results) - len(bad)}/{len(results)} contained")
        raise typer.Exit(EXIT_FAILED if bad else EXIT_SUCCESS)
    if not scenarios:
        raise UserError(
            "name the scenarios to prove",
            field="SCENARIOS",
            fix="harness controls SCENARIO... (or --containment for the attack catalogue)",
        )
    untrusted = 0
    for name in scenarios:
        report = run_controls(
            load_named(name),
            current_settings(),
            check_sandbox(sandbox),
            reuse=reuse,
            progress=lambda line: typer.echo(line, err=True),
        )
        typer.echo(f"== {name}\n{report.text()}")
        untrusted += not report.trusted
    raise typer.Exit(EXIT_FAILED if untrusted else EXIT_SUCCESS)


@guarded
def coverage_cmd(
    scenario: Annotated[str, typer.Argument(help="scenario name")],
) -> None:
    """Each SPEC MUST id, the checks verifying it, the defects violating it (exit 1: a hole)."""
    from harness.grader.must_coverage import coverage

    report = coverage(load_named(scenario), current_settings().results)
    typer.echo(report.text(), nl=False)
    raise typer.Exit(EXIT_SUCCESS if report.complete else EXIT_FAILED)


@guarded
def calibrate_cmd(
    scenario: Annotated[str, typer.Argument(help="scenario name")],
    seeds: Annotated[int, typer.Option("--seeds", help="how many seeds to score over")] = 3,
    sandbox: SandboxOpt = "docker",
    reuse: Annotated[
        bool,
        typer.Option("--reuse", help="read scorings kept by an earlier, interrupted run"),
    ] = False,
    carry: Annotated[
        bool,
        typer.Option(
            "--carry",
            help="score nothing: move the calibration to the current scorer, once its "
            "grading code is proved the same but for modules --moved (the suite's own "
            "code file by file, or, when its files differ, definition by definition)",
        ),
    ] = False,
    moved: Annotated[
        list[str] | None,
        typer.Option("--moved", help="with --carry: a moved module, OLD=NEW (repeatable)"),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--from",
            help="with --carry: the commit calibrated at (default: the last to "
            "write the thresholds)",
        ),
    ] = None,
) -> None:
    """Score reference, LOW and defects over seeds; write a calibrated thresholds file."""
    from harness.grader.calibrate import calibrate

    if carry or moved or since:
        _carry(scenario, carry, moved or [], since)
        return
    text, proposal = calibrate(
        load_named(scenario),
        current_settings(),
        check_sandbox(sandbox),
        seeds,
        progress=lambda line: typer.echo(line, err=True),
        reuse=reuse,
    )
    typer.echo(text, nl=False)
    raise typer.Exit(EXIT_SUCCESS if proposal.bar is not None else EXIT_FAILED)


def _carry(scenario: str, carry: bool, moved: list[str], since: str | None) -> None:
    from harness.grader.carry import Lock, moves_of, repo_of
    from harness.grader.carry import carry as carry_calibration

    if not carry:
        raise UserError("--moved and --from go with --carry", field="--carry", fix="add --carry")
    loaded = load_named(scenario)
    if not loaded.scenario.verify.suite:
        raise UserError(
            f"{scenario} has no suite: nothing calibrated to carry",
            field="scenario",
            fix="carry an app scenario's calibration",
        )
    from harness.scenario.lock import key, lock_path

    suite_dir = loaded.directory / loaded.scenario.verify.suite
    lock = Lock(lock_path(current_settings().scenario_root), key(loaded))
    done = carry_calibration(repo_of(suite_dir), suite_dir, moves_of(moved), since, lock)
    typer.echo(done.line())
