"""The parts the trial adds declare the keys their producers write, in order."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from harness.config.budget import Budget as TrialBudget
from harness.provision import Provision
from harness.results import gab
from harness.results.report.trial import (
    Budget,
    Progress,
    SandboxPolicy,
    ScoringSlot,
    TokenUsage,
    Toolchain,
    WorkspaceDiff,
)
from harness.scenario.policy import DEFAULT_POLICY
from harness.util.trialgit import DiffRecord

pytestmark = pytest.mark.unit


def _keys(model: type[BaseModel]) -> list[str]:
    return [f.alias or name for name, f in model.model_fields.items()]


def test_progress_and_usage_are_goagentbenchs() -> None:
    progress = gab.run_progress({}, [], {}, "2026-01-01T00:00:00+00:00")
    assert _keys(Progress) == list(progress)
    assert _keys(TokenUsage) == list(gab.token_usage({}))
    assert Progress.model_validate(progress).model_dump(mode="json") == progress


def test_toolchain_is_provisions_record_plus_what_ran() -> None:
    record = {**Provision(runner="pytest").record(), "ran": "Python 3.11.7"}
    assert _keys(Toolchain) == list(record)
    assert Toolchain.model_validate(record).model_dump() == record
    assert Toolchain.model_validate({}).model_dump(exclude_unset=True) == {}  # nothing ran


def test_policy_budget_and_diff_keep_their_written_keys() -> None:
    record = DEFAULT_POLICY.record()
    assert _keys(SandboxPolicy) == list(record)
    assert SandboxPolicy.model_validate(record).model_dump(by_alias=True) == record
    limits = TrialBudget.model_validate({"tokens": 10, "cost-usd": 0.5, "calls": 3})
    written = limits.model_dump(by_alias=True, exclude_none=True)
    assert _keys(Budget) == list(written)
    dumped = Budget.model_validate(written).model_dump(by_alias=True, exclude_unset=True)
    assert dumped == written
    diff = DiffRecord("truncated", "big", {"a.bin": "binary"}, 7).as_json()
    assert _keys(WorkspaceDiff) == list(diff)


def test_the_slot_is_written_as_given() -> None:
    idle = {"policy": "no executed app: no lock"}
    assert ScoringSlot.model_validate(idle).model_dump(exclude_unset=True) == idle
    held = {"policy": "one at a time", "lock": "/tmp/x.lock", "waited_s": 0.0}
    assert ScoringSlot.model_validate(held).model_dump(exclude_unset=True) == held
