"""Seed derivation: HMAC-SHA256(seed, label).

"Frozen structure, moving positions": a scenario fixes *what* exists (how many pages,
that one page fails once), the seed decides *where* and *which* values. Every derived
value is a pure function of (seed, label), so the same seed always rebuilds the same
fixtures and fault positions, and a memorised constant is worth nothing on a new seed.
"""

from __future__ import annotations

import hashlib
import hmac
import random
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def derive_bytes(seed: str, label: str) -> bytes:
    """32 bytes: HMAC-SHA256 keyed by the seed over the label."""
    return hmac.new(seed.encode("utf-8"), label.encode("utf-8"), hashlib.sha256).digest()


def derive(seed: str, label: str) -> int:
    """A 256-bit non-negative integer derived from (seed, label)."""
    return int.from_bytes(derive_bytes(seed, label), "big")


def pick(seed: str, label: str, choices: Sequence[T]) -> T:
    """One element of ``choices`` chosen by (seed, label)."""
    if not choices:
        raise ValueError(f"pick({label!r}): no choices")
    return choices[derive(seed, label) % len(choices)]


def between(seed: str, label: str, low: int, high: int) -> int:
    """An integer in ``[low, high]`` (inclusive) chosen by (seed, label)."""
    if high < low:
        raise ValueError(f"between({label!r}): empty range {low}..{high}")
    return low + derive(seed, label) % (high - low + 1)


def rng(seed: str, label: str) -> random.Random:
    """A ``random.Random`` seeded from (seed, label), for longer derived sequences."""
    return random.Random(derive(seed, label))
