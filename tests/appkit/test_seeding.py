"""Seed derivation and the fixtures built from it: same seed same, other seed other."""

from __future__ import annotations

import pytest

from harness.appkit.seeding import between, derive, derive_bytes, pick, rng

pytestmark = pytest.mark.unit

SEED_A = "a11ce5eedf00d123"
SEED_B = "0123456789abcdef"


def test_derive_is_hmac_of_seed_and_label() -> None:
    assert derive_bytes(SEED_A, "x") == derive_bytes(SEED_A, "x")
    assert len(derive_bytes(SEED_A, "x")) == 32
    assert derive(SEED_A, "x") != derive(SEED_A, "y")
    assert derive(SEED_A, "x") != derive(SEED_B, "x")
    assert rng(SEED_A, "r").random() == rng(SEED_A, "r").random()
    assert pick(SEED_A, "p", ["only"]) == "only"
    assert all(3 <= between(SEED_B, f"b{i}", 3, 5) <= 5 for i in range(50))
    with pytest.raises(ValueError):
        between(SEED_A, "empty", 2, 1)
