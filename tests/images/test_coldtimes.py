"""A first build's estimate: measured images say about how many minutes, others nothing."""

from __future__ import annotations

import pytest

from harness.images import images_dir
from harness.images.coldtimes import COLD_BUILD_S, estimate
from harness.images.graph import list_names

pytestmark = pytest.mark.unit


def test_a_measured_image_is_given_in_whole_minutes_at_least_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert estimate("agent-mini") == " (about 13 min cold)"  # 774 s
    monkeypatch.setitem(COLD_BUILD_S, "quick", 10)
    assert estimate("quick") == " (about 1 min cold)"  # never "0 min"
    assert estimate("no-such-image") == ""


def test_every_measured_image_exists() -> None:
    assert set(COLD_BUILD_S) <= set(list_names(images_dir()))
