"""apps/meridian-console in every CI run, beside the reference: LOW and a critical defect.

Both run the whole script (no early stop at boot), so they sit in a module of their own,
which the test run schedules on another worker than the reference's module. LOW boots and
never syncs (notifierd never reads): the script's waits look once at a walk or a reader
that never began, so LOW scores in about half of its old 4.7 minutes. ``key-per-attempt``
pays a draft twice across the approval kill: the critical ``pay.once`` fires.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.apps.test_meridian_console import SCENARIO, _needs_chromium, _score

#: (defect, the MUST it violates, the critical check it fires)
CRITICAL = ("key-per-attempt", "M-PAY-3", "pay.once")


@pytest.mark.integration
@pytest.mark.browser
@_needs_chromium
def test_low_and_a_critical_defect_fail(tmp_path: Path) -> None:
    low = _score(tmp_path, SCENARIO / "low.patch", "low")
    assert low.measurable and not low.spec_met and low.final <= 0.2, (low.final, low.unmet)
    assert {"M-SYNC-2", "M-NOTE-1", "M-GL-1"} <= set(low.unmet), low.unmet  # no walk, no reads
    name, must, critical = CRITICAL
    got = _score(tmp_path, SCENARIO / "defects" / f"{name}.patch", name)
    assert not got.spec_met and must in got.unmet and critical in got.fired, (name, got.unmet)
    assert got.final < 0.9, got.final
