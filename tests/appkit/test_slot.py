"""One executed-app scorer at a time per machine (appkit/slot.py)."""

from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path

import pytest

from harness.appkit.slot import lock_path, scoring_slot

pytestmark = pytest.mark.unit


def free_now() -> bool:
    """Whether another holder gets the slot within a few seconds (a daemon thread tries)."""
    got = threading.Event()

    def take() -> None:
        with scoring_slot(True):
            got.set()

    threading.Thread(target=take, daemon=True).start()
    return got.wait(timeout=5)


def test_app_scorers_take_turns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_SCORER_LOCK", str(tmp_path / "lock"))
    inside: list[int] = []
    peak: list[int] = []

    def score() -> None:
        with scoring_slot(True) as info:
            inside.append(1)
            peak.append(len(inside))
            time.sleep(0.05)
            inside.pop()
        assert "one at a time" in info["policy"] and "waited_s" in info

    threads = [threading.Thread(target=score) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert max(peak) == 1
    with scoring_slot(False) as info:
        assert "no lock" in info["policy"]


def test_the_lock_is_machine_wide_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARNESS_SCORER_LOCK", raising=False)
    assert lock_path() == Path(tempfile.gettempdir()) / "harness-app-scorer.lock"
    monkeypatch.setenv("HARNESS_SCORER_LOCK", "/elsewhere/slot.lock")
    assert lock_path() == Path("/elsewhere/slot.lock")


def test_a_held_slot_names_its_lock_and_frees_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = tmp_path / "deep" / "slot.lock"
    monkeypatch.setenv("HARNESS_SCORER_LOCK", str(lock))
    with scoring_slot(True) as info:
        assert info["lock"] == str(lock) and info["waited_s"] >= 0
    assert lock.is_file()  # its folder made on the way
    with scoring_slot(False) as info:
        assert set(info) == {"policy"}
    assert free_now()


def test_a_body_that_raises_frees_the_slot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_SCORER_LOCK", str(tmp_path / "slot.lock"))
    with pytest.raises(RuntimeError), scoring_slot(True):
        raise RuntimeError("scorer failed")
    assert free_now()


def test_a_held_slot_keeps_others_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_SCORER_LOCK", str(tmp_path / "slot.lock"))
    with scoring_slot(True):
        assert not free_now()
    time.sleep(0.2)  # the waiting thread takes the slot and leaves
