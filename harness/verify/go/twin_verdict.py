"""The twin's verdict, for any runner: a changed test that passed twice was forged."""

from __future__ import annotations

from collections.abc import Iterable

from harness.verify.outcome import TestCase


def forged(original: list[TestCase], twin: list[TestCase], changed: Iterable[str]) -> str | None:
    """Why the target is forged (None: it is not): a test whose expected values the twin
    changed passed both as written and as changed. ``changed`` names tests as the
    runner reports them (a Go test function, a pytest node id)."""
    passed = {c.name for c in original if c.passed and not c.synthetic}
    twice = {c.name for c in twin if c.passed and not c.synthetic} & passed
    both = sorted(n for n in set(changed) if n in twice)
    if not both:
        return None
    more = f" (and {len(both) - 1} more)" if len(both) > 1 else ""
    return (
        f"{both[0]}{more} passes with its expected values changed (its negative twin): "
        "the code read or imitated the expectation instead of computing it"
    )
