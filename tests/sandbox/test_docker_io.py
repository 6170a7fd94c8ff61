"""A kill freezes the container; a thaw the engine refuses once (it happens under load)
must not leave it frozen, or every later command (the copy-out of transcripts) fails."""

from __future__ import annotations

from typing import Any

import pytest
from docker.errors import APIError, NotFound

from harness.sandbox import docker_io
from harness.sandbox.docker_io import kill_processes, thaw


class FakeContainer:
    def __init__(self, refusals: int = 0, pause_fails: bool = False) -> None:
        self.id = "c0ffee"
        self.attrs: dict[str, Any] = {"HostConfig": {}}
        self.paused = False
        self.refusals = refusals
        self.pause_fails = pause_fails
        self.inside_kills = 0

    def pause(self) -> None:
        self.paused = True  # the engine may freeze it and still answer with an error
        if self.pause_fails:
            raise APIError("cannot pause: freezer busy")

    def unpause(self) -> None:
        if not self.paused:
            raise APIError(f"Container {self.id} is not paused")
        if self.refusals:
            self.refusals -= 1
            raise APIError("failed to thaw: device or resource busy")
        self.paused = False

    def exec_run(self, cmd: list[str], **_: Any) -> None:
        if self.paused:
            raise APIError(f"Container {self.id} is paused, unpause the container before exec")
        self.inside_kills += 1


@pytest.fixture(autouse=True)
def _no_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(docker_io.time, "sleep", lambda _s: None)


@pytest.fixture
def killed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    seen: list[int] = []
    monkeypatch.setattr(docker_io, "host_pids", lambda *_a: [41, 42])
    monkeypatch.setattr(docker_io, "kill_host_pids", seen.extend)
    return seen


def test_a_refused_thaw_is_tried_again_and_the_container_ends_running(killed: list[int]) -> None:
    box = FakeContainer(refusals=2)
    kill_processes(box, keep={1}, user=(1000, 1000))  # type: ignore[arg-type]
    assert killed == [41, 42] and not box.paused and box.inside_kills == 0


def test_a_pause_that_fails_falls_back_to_the_kill_from_inside(killed: list[int]) -> None:
    box = FakeContainer(pause_fails=True)
    kill_processes(box, keep={1}, user=(1000, 1000))  # type: ignore[arg-type]
    assert killed == [] and not box.paused and box.inside_kills == 1


def test_thaw_reports_a_container_that_stays_frozen() -> None:
    box = FakeContainer(refusals=99)
    box.paused = True
    assert thaw(box, attempts=3) is False and box.paused  # type: ignore[arg-type]


def test_thaw_of_a_running_or_gone_container_is_done() -> None:
    assert thaw(FakeContainer()) is True  # type: ignore[arg-type]

    class Gone(FakeContainer):
        def unpause(self) -> None:
            raise NotFound("no such container")

    assert thaw(Gone()) is True  # type: ignore[arg-type]
