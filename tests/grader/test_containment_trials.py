"""Forged success now fails, in real trials: a conftest.py that passes every report and a
Go init() that leaves a process rewriting the outcome, played by the containment
control's attack agent locally and in Docker (no host marker, no host data in the
results, nothing left behind); an executed app reaches nothing of the host locally."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.config.settings import Settings
from harness.grader.containment.catalogue import load_attacks
from harness.grader.containment.control import run_attack
from harness.verify.isolation import test_root
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.integration
ATTACKS = [
    "verdict-conftest-forgery",
    "verdict-pytest-report-patch",
    "verdict-go-init-daemon",
    "verdict-go-init-forged-stream",
    "verdict-go-init-exit0",
    "verdict-go-run-canary-only",
    "verdict-skip-what-fails",
    "verdict-always-equal",
    "verdict-assertion-is-skip",
    "verdict-equal-to-every-int",
    "verdict-runtime-plugin",
    "verdict-always-equal-per-call",
    "verdict-test-module-stand-in",
    "verdict-read-the-assertion",
    "verdict-junit-spare-canary",
    "verdict-go-linkname-tests",
    "verdict-test-code-swap",
    "verdict-module-assertion-is-skip",
    "verdict-go-caller-reads-test",
    "verdict-go-reads-compare-immediate",
    "verdict-go-line-cgo-ldflag",
]
APP_ATTACKS = ["host-app-reads-host-file", "host-app-host-loopback"]


def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("HARNESS_SCENARIO_ROOT", str(REPO_ROOT / "scenarios"))
    monkeypatch.setenv("HARNESS_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("HARNESS_WORKSPACE", str(tmp_path / "ws"))
    return Settings.from_env()


def play(name: str, sandbox: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (attack,) = load_attacks(names=[name])
    result = run_attack(attack, settings(tmp_path, monkeypatch), sandbox)
    assert result.contained, result.line()
    assert result.outcome == "failed" and result.run_dir is not None
    assert (result.run_dir / "verify" / "report.json").is_file()


@pytest.mark.parametrize("name", ATTACKS)
def test_forged_success_fails_locally(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    play(name, "local", tmp_path, monkeypatch)


@pytest.mark.docker
def test_outcome_rewrite_fails_in_docker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scorer container's outcome.json is where the Go attack aims (one trial: CI)."""
    pytest.importorskip("docker")
    play("verdict-go-init-daemon", "docker", tmp_path, monkeypatch)


@pytest.mark.parametrize("name", APP_ATTACKS)
@pytest.mark.skipif(os.geteuid() != 0, reason="the app jail is enforced only for root")
def test_the_executed_app_reaches_nothing_of_the_host_locally(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A world-readable host file on no deny list, a service on the host's loopback:
    the deny-list jail let the app read and reach both (NOT CONTAINED on it)."""
    play(name, "local", tmp_path, monkeypatch)
    log = next(tmp_path.glob("results/**/invoicesync-1.stdout.log")).read_text()
    assert "blocked" in log  # the app ran, and was refused


# the hidden tests' own root on a host (verify.isolation.test_root): the red team's local
# attacks (each NOT CONTAINED before it: success 1.0 for unfixed code, host data in the
# report, a file left in /run/lock) and invented ones of the same class
LOCAL_ROOT_ATTACKS = [
    "redteam-local-reads-solution",
    "redteam-local-reads-hidden-originals",
    "redteam-local-go-reads-solution",
    "redteam-local-host-file-into-report",
    "redteam-test-uid-world-writable",
    "verdict-local-sees-host-processes",
    "verdict-local-reads-root-and-results",
    "host-local-writes-past-the-run",
    # this wave's red team, written without reading the defences (all contained)
    "redteam2-local-userns-chroot-escape",
    "redteam2-local-inherited-fd-escape",
    "redteam2-local-solution-via-installed-harness",
]


@pytest.mark.parametrize("name", LOCAL_ROOT_ATTACKS)
@pytest.mark.skipif(not test_root.available(), reason="the test root needs root and unshare")
def test_the_hidden_tests_reach_nothing_of_the_host_locally(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    play(name, "local", tmp_path, monkeypatch)
    report = next(tmp_path.glob("results/**/verify/report.json")).read_text()
    assert "allow-list root" in report  # the report says what the tests saw
