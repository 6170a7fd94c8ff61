"""``harness mine``: the funnel's counts."""

from __future__ import annotations

import pytest

from harness.authoring.mine.funnel import Entry, Funnel

pytestmark = pytest.mark.unit


def test_funnel_counts_every_commit_once() -> None:
    funnel = Funnel("repo", None, 5, "local", 3)
    funnel.add(Entry("a" * 40, "2024-01-01", "docs", "shape", "changes no test file"))
    funnel.add(Entry("b" * 40, "2024-01-02", "fix", "proven", "no test fails before"))
    funnel.add(Entry("c" * 40, "2024-01-03", "fix", "drafted", "go/x-ccccccc", 1, 2, 0))
    assert funnel.counts() == {"walked": 3, "shape": 2, "proven": 1, "drafted": 1}
    text = funnel.markdown()
    assert "walked 3 -> shape 2 -> proven 1 -> drafted 1" in text
    assert "changes no test file" in text and "no test fails before" in text
