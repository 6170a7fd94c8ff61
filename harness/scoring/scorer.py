"""``Scorer``: the one path that turns a suite and a context into a stamped ``Score``.

``start()`` validates the suite, runs the severity selftest, checks the thresholds pin
and fingerprints the suite; ``score()`` calls it first, so no score is ever produced by
a suite whose arithmetic contradicts its declared severities.
"""

from __future__ import annotations

from typing import Any

from harness.scoring.compose import Score, compose
from harness.scoring.era import Stamp, Thresholds, check_pin, stamp
from harness.scoring.rows import Row
from harness.scoring.run import run_checks
from harness.scoring.selftest import selftest
from harness.scoring.suite import Suite


class Scorer:
    """Scores contexts (or ready-made rows) with one suite, after a passed selftest."""

    def __init__(self, suite: Suite) -> None:
        self.suite = suite
        self._stamp: Stamp | None = None

    @property
    def stamp(self) -> Stamp:
        return self._stamp or self.start()

    def start(self) -> Stamp:
        """Selftest, pin check and fingerprint; raises ``SelftestFailed``/``UserError``."""
        selftest(self.suite)
        self._stamp = stamp(self.suite)
        return self._stamp

    def thresholds(self) -> Thresholds | None:
        """The suite's thresholds (pin checked), for the controls."""
        return check_pin(self.suite)

    def score(self, ctx: Any) -> Score:
        """Selftest (once), then run every check against ``ctx`` and compose the rows."""
        got = self.stamp  # refuse before running any check
        rows = run_checks(self.suite, ctx)
        return compose(
            rows, self.suite, era=got.era, fingerprint=got.fingerprint, scorer=got.scorer
        )

    def score_rows(self, rows: list[Row]) -> Score:
        """Compose rows produced elsewhere (e.g. ``suite_from_tests``)."""
        got = self.stamp
        return compose(
            rows, self.suite, era=got.era, fingerprint=got.fingerprint, scorer=got.scorer
        )
