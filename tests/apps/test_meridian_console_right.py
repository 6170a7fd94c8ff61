"""apps/meridian-console: a right app at the SPEC's bounds must succeed, in every CI run.

``tests/data/meridian-console-right/bounds.patch`` changes the reference to sit on the
SPEC's limits wherever it had room: vendor requests allowed exactly 7 s (M-SYNC-7), the
console's status read every 3 s, its feed every 2 s (M-UI-9) and the field's data every
5 s, notifierd's reads allowed exactly 3 s, retried 2 s apart (M-NOTE-2) and repeated 2 s
after it caught up. ``offscreen-blit.patch`` (applied on top) draws every frame of the
field into an offscreen framebuffer and blits it to the canvas, as a multisampled or
post-processed renderer does: the instanced draw must still count as on screen. A scorer
stricter than the SPEC anywhere along those paths fails it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.apps.test_meridian_console import _needs_chromium, _score_right, _why

RIGHT = Path(__file__).resolve().parents[1] / "data" / "meridian-console-right"


@pytest.mark.integration
@pytest.mark.browser
@_needs_chromium
def test_an_app_at_the_specs_bounds_meets_the_spec(tmp_path: Path) -> None:
    got = _score_right(tmp_path, [RIGHT / "bounds.patch", RIGHT / "offscreen-blit.patch"], "bounds")
    assert got.spec_met and not got.unmet and not got.fired, _why(got)
    assert got.measurable and got.final >= 0.9, got.final
