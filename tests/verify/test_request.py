"""What the verifier is asked, and how a scenario makes one (verify/request.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.errors import InfraError
from harness.scenario.load import load_scenario
from harness.verify.isolation.test_user import LOCAL_TEST_UID
from harness.verify.request import WALLS_ENV, HiddenCopy, VerifyRequest, make_request
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit

SCENARIOS = REPO_ROOT / "scenarios"


def request(**fields: object) -> VerifyRequest:
    base: dict[str, object] = {
        "scenario": "s", "baseline": "b" * 40, "seed": "1", "runner": "pytest",
        "hidden_root": "/h",
    }  # fmt: skip
    return VerifyRequest.model_validate({**base, **fields})


def test_a_request_crosses_as_json_with_its_aliases() -> None:
    sent = request(copy=[{"from": "hidden/t", "to": "t"}], env={"A": "1"}, walls=False)
    assert sent.copy_ == [HiddenCopy(from_="hidden/t", to="t")]
    text = sent.model_dump_json(by_alias=True)
    assert '"copy":[{"from":"hidden/t","to":"t"}]' in text
    assert VerifyRequest.model_validate_json(text) == sent


def test_the_defaults_a_request_starts_with(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(WALLS_ENV, raising=False)
    made = request()
    assert made.python == sys.executable and made.timeout_s == 600.0
    assert made.test_uid == LOCAL_TEST_UID and made.test_reads_all
    assert made.rules_dialect == "harness" and not made.copy_only and not made.compile_only
    assert made.walls  # the walls are on unless switched off
    made.env["X"] = "1"
    assert request().env == {}  # no shared default


@pytest.mark.parametrize("value,walls", [("0", False), ("1", True), ("", True)])
def test_the_walls_follow_their_switch(
    monkeypatch: pytest.MonkeyPatch, value: str, walls: bool
) -> None:
    monkeypatch.setenv(WALLS_ENV, value)
    assert request().walls is walls


def test_a_scenario_makes_its_request(tmp_path: Path) -> None:
    loaded = load_scenario("smoke/py-fast", SCENARIOS)
    made = make_request(loaded, tmp_path, "c" * 40, "seed-1", copy_only=True)
    assert (made.scenario, made.baseline, made.seed) == ("smoke/py-fast", "c" * 40, "seed-1")
    assert made.runner == "pytest" and made.copy_only
    assert made.must_modify == ["calc"] and made.no_modify == ["test_hidden_calc/**"]
    assert made.tests == ["test_hidden_calc/test_low.py", "test_hidden_calc/test_high.py"]
    assert made.copy_ == [HiddenCopy(from_="hidden/test_hidden_calc", to="test_hidden_calc")]
    assert made.hidden_root == str(loaded.directory)
    assert made.solution_file == str(loaded.directory / "solution.patch")
    assert made.suite_dir is None and made.spec_file is None and made.tests_from_root is None
    assert made.timeout_s == 60.0  # verify-timeout: 1m
    assert made.rules_dialect == "harness"  # a versioned scenario
    assert made.env == {} and made.toolchain == {}  # copy only: nothing provisioned


def test_a_provisioning_failure_is_carried_not_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import harness.provision

    def fail(*_: object, **__: object) -> None:
        raise InfraError("toolchain download failed")

    monkeypatch.setattr(harness.provision, "provision", fail)
    loaded = load_scenario("smoke/py-fast", SCENARIOS)
    made = make_request(loaded, tmp_path, "c" * 40, "s", on_host=True)
    assert made.provision_error is not None and "toolchain download failed" in made.provision_error
    assert not made.copy_only and made.env == {}
