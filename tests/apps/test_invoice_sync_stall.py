"""apps/invoice-sync: the waits for the sync's progress end at once after one that ran
its whole budget while the app asked the upstream nothing (``Stall``), and only then: an
app that asks anything during a wait keeps its full budgets."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.suites import suite_names

pytestmark = pytest.mark.unit

Stall = suite_names("invoice-sync").Stall


class Mock:
    """The upstream's trace as ``Stall`` reads it: request lines carry a method."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = [{"mark": "gate"}]

    def records(self) -> list[dict[str, Any]]:
        return list(self.lines)

    def ask(self) -> None:
        self.lines.append({"method": "GET", "page": len(self.lines)})


def test_a_silent_wait_stalls_the_sync_and_later_waits_look_once() -> None:
    mock, budgets = Mock(), []
    stall = Stall(mock)

    def never(budget: float) -> bool:
        budgets.append(budget)
        mock.lines.append({"mark": "answered"})  # a mark is not a request
        return False

    assert stall.wait(never, 75.0, "first life") is False
    assert stall.since == "first life: no upstream request in 75 s"
    assert stall.wait(never, 75.0, "second life") is False
    assert stall.wait(lambda budget: budget == 0.0, 75.0, "later") is True  # done already
    assert budgets == [75.0, 0.0]  # after the stall: a look, never a budget
    assert stall.since.startswith("first life")


def test_a_wait_during_which_the_app_asked_keeps_the_budgets() -> None:
    mock, budgets = Mock(), []
    stall = Stall(mock)

    def slow(budget: float) -> bool:  # asks, but does not get there in time
        budgets.append(budget)
        mock.ask()
        return False

    assert stall.wait(slow, 75.0, "first life") is False
    assert stall.since is None
    assert stall.wait(slow, 75.0, "second life") is False
    assert budgets == [75.0, 75.0]


def test_a_wait_that_ends_in_time_never_stalls() -> None:
    stall = Stall(Mock())
    assert stall.wait(lambda budget: True, 75.0, "first life") is True
    assert stall.since is None
