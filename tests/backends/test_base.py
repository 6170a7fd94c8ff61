"""The backend protocol's one helper: a thing started, or stopped when starting fails
(backends/base.py)."""

from __future__ import annotations

import pytest

from harness.backends.base import started

pytestmark = pytest.mark.unit


class Thing:
    def __init__(self, fails: BaseException | None = None) -> None:
        self.fails = fails
        self.calls: list[str] = []

    def start(self) -> None:
        self.calls.append("start")
        if self.fails is not None:
            raise self.fails

    def stop(self) -> None:
        self.calls.append("stop")


def test_a_thing_that_starts_is_returned_running() -> None:
    thing = Thing()
    assert started(thing) is thing and thing.calls == ["start"]


@pytest.mark.parametrize("error", [RuntimeError("port taken"), KeyboardInterrupt()])
def test_a_thing_that_fails_to_start_is_stopped_and_the_error_raised(
    error: BaseException,
) -> None:
    thing = Thing(error)
    with pytest.raises(type(error)):
        started(thing)
    assert thing.calls == ["start", "stop"]  # its leftovers removed, even on Ctrl-C
