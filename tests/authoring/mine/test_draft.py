"""``harness mine``: a draft is a loadable scenario; the ``tests-from`` and ``task-date``
fields it writes."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
import yaml

from harness.authoring.mine.draft import Draft, scenario_data
from harness.errors import UserError
from harness.scenario.load import parse_scenario
from harness.scenario.model import DRAFT_INSTRUCTIONS

pytestmark = pytest.mark.unit


def draft() -> Draft:
    return Draft(
        name="decimal-7b4ffbc",
        runner="go",
        repo="github.com/shopspring/decimal",
        parent="a" * 40,
        sha="7b4ffbcd3c86a54ce53fa3324e71487c95e4cafe",
        date="2024-01-10",
        subject="Fix Mod",
        tests=["decimal_test.go"],
        code=["decimal.go"],
        targets=["."],
    )


def test_a_draft_is_a_loadable_scenario_with_tests_from_and_task_date() -> None:

    data = scenario_data(draft())
    scn = parse_scenario(yaml.safe_dump(data), Path("scenario.yml"))
    assert scn.commit == "a" * 40 and scn.task_date == datetime.date(2024, 1, 10)
    assert scn.verify.tests_from is not None
    assert scn.verify.tests_from.commit == "7b4ffbcd3c86a54ce53fa3324e71487c95e4cafe"
    assert scn.verify.tests_from.paths == ["decimal_test.go"]
    assert DRAFT_INSTRUCTIONS in scn.agent.instructions
    assert not scn.verify.copy_  # nothing of the tests is copied into the project


@pytest.mark.parametrize(
    ("tests_from", "field"),
    [
        ("{commit: abc123, paths: [a_test.go]}", "commit"),
        ("{commit: " + "a" * 40 + ", paths: []}", "paths"),
        ("{commit: " + "a" * 40 + ", paths: [../x_test.go]}", "paths"),
        ("{commit: " + "a" * 40 + ", paths: [x], extra: 1}", "extra"),
    ],
)
def test_bad_tests_from_is_a_user_error(tests_from: str, field: str) -> None:
    text = (
        "name: x\nrepo: github.com/o/x\ncommit: " + "b" * 40 + "\n"
        "classification: {type: fix-bug}\nagent: {instructions: do it}\n"
        f"verify: {{tests: ['.'], tests-from: {tests_from}}}\n"
    )
    with pytest.raises(UserError) as err:
        parse_scenario(text, Path("scenario.yml"))
    assert "tests-from" in str(err.value) and field in str(err.value)


def test_task_date_must_be_a_date() -> None:
    base = (
        "name: x\nrepo: github.com/o/x\ncommit: " + "b" * 40 + "\n"
        "classification: {type: fix-bug}\nagent: {instructions: do it}\nverify: {tests: ['.']}\n"
    )
    assert parse_scenario(base + "task-date: 2023-04-18\n", Path("s.yml")).task_date == (
        datetime.date(2023, 4, 18)
    )
    assert parse_scenario(base, Path("s.yml")).task_date is None
    with pytest.raises(UserError, match="task-date"):
        parse_scenario(base + "task-date: last spring\n", Path("s.yml"))
