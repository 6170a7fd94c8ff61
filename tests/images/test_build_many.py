"""``ImageBuilder.ensure_many``: a few builds at once, results in the order asked, the
first failure raised and nothing new started after it (no engine needed)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.errors import InfraError
from harness.images.build import ImageBuilder
from harness.images.graph import ImageRef


class Recorder:
    """Stands in for ``ensure``: sleeps a little, counts how many run at once."""

    def __init__(self, fail: str | None = None) -> None:
        self.fail = fail
        self.lock = threading.Lock()
        self.running = 0
        self.peak = 0
        self.started: list[str] = []

    def __call__(self, name: str) -> ImageRef:
        with self.lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
            self.started.append(name)
        try:
            if name == self.fail:
                raise InfraError(f"building harness/{name}:x failed: no network")
            time.sleep(0.1 if self.fail is None else 0.5)
            return ImageRef(name, f"harness/{name}:x", f"sha256:{name}")
        finally:
            with self.lock:
                self.running -= 1


def _builder(tmp_path: Path, recorder: Recorder) -> ImageBuilder:
    builder = ImageBuilder(SimpleNamespace(), root=tmp_path)  # type: ignore[arg-type]
    builder.ensure = recorder  # type: ignore[method-assign]
    return builder


NAMES = [f"img-{i}" for i in range(7)]


@pytest.mark.unit
def test_builds_run_up_to_jobs_at_once_and_come_back_in_order(tmp_path: Path) -> None:
    recorder = Recorder()
    refs = _builder(tmp_path, recorder).ensure_many(NAMES, jobs=3)
    assert [r.name for r in refs] == NAMES
    assert recorder.peak == 3


@pytest.mark.unit
def test_one_job_builds_one_at_a_time(tmp_path: Path) -> None:
    recorder = Recorder()
    refs = _builder(tmp_path, recorder).ensure_many(NAMES, jobs=1)
    assert [r.name for r in refs] == NAMES and recorder.peak == 1
    assert recorder.started == NAMES


@pytest.mark.unit
def test_the_first_failure_is_raised_and_stops_what_has_not_started(tmp_path: Path) -> None:
    recorder = Recorder(fail="img-0")
    with pytest.raises(InfraError, match="img-0"):
        _builder(tmp_path, recorder).ensure_many(NAMES, jobs=2)
    # img-0 and img-1 start together; after img-0 fails at most the builds already
    # handed to a worker run, never the whole list
    assert len(recorder.started) < len(NAMES)
