"""The calls behind run-agent, verify and exec: each holds the workspace (a second process
is refused), and a workspace disk that fails before any run folder exists is the machine's
fault, one line naming the cause."""

from __future__ import annotations

import errno
import os
import signal
from pathlib import Path

import pytest

from harness.config.entrants import Registry
from harness.config.settings import Settings
from harness.errors import InfraError, UserError
from harness.scenario.load import load_scenario
from harness.trial import commands
from harness.trial.entrant import RunOptions
from tests.support.calc import write_calc
from tests.support.holder import hold_workspace

pytestmark = pytest.mark.unit


def _setup(project: Path, tmp_path: Path) -> tuple[object, Settings, Registry]:
    write_calc(project, tmp_path / "src", environment=None)
    settings = Settings.from_env(project)
    return load_scenario("t/calc", settings.scenario_root), settings, Registry.load(project)


def test_a_held_workspace_is_refused_for_every_call(project: Path, tmp_path: Path) -> None:
    loaded, settings, registry = _setup(project, tmp_path)
    proc = hold_workspace(settings.workspace / "t" / "calc")
    opts = RunOptions(agent="nop", sandbox="local")
    try:
        for call in (
            lambda: commands.execute(loaded, settings, registry, opts),  # type: ignore[arg-type]
            lambda: commands.run_agent(loaded, settings, registry, opts),  # type: ignore[arg-type]
            lambda: commands.verify(loaded, settings, sandbox="local"),  # type: ignore[arg-type]
        ):
            with pytest.raises(UserError, match=f"pid {proc.pid}"):
                call()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


def test_a_workspace_disk_failure_is_an_infrastructure_error(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded, settings, registry = _setup(project, tmp_path)

    def full(*_: object, **__: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(settings.workspace))

    monkeypatch.setattr(commands.Trial, "setup", full)
    with pytest.raises(InfraError, match="the disk is full") as info:
        commands.execute(loaded, settings, registry, RunOptions(agent="nop", sandbox="local"))  # type: ignore[arg-type]
    assert info.value.field == "(workspace)"
