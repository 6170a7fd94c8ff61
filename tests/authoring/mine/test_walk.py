"""``harness mine``: canonical repository names (and the draft names made of them)."""

from __future__ import annotations

import pytest

from harness.authoring.mine.draft import draft_name
from harness.authoring.mine.walk import canonical_name

pytestmark = pytest.mark.unit


def test_canonical_names() -> None:
    assert canonical_name("/x/github.com/shopspring/decimal.git") == "github.com/shopspring/decimal"
    assert canonical_name("/r/github.com/jmespath/jmespath.py.bundle") == (
        "github.com/jmespath/jmespath.py"
    )
    assert canonical_name("https://github.com/org/name.git") == "github.com/org/name"
    assert canonical_name("/tmp/somewhere/repo") is None
    assert draft_name("github.com/mattn/go-shellwords", "abcdef0123") == "shellwords-abcdef0"
    assert draft_name("github.com/jmespath/jmespath.py", "abcdef0123") == "jmespath-abcdef0"
