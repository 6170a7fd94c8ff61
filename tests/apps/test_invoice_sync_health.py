"""apps/invoice-sync 4.2: /health judged at every moment of every life, and before a start's
first page is let through.

``health.throughout`` (M-HEALTH-1) reads a /health answer taken beside every status sample,
in every life: a body other than ``{"status": "ok"}`` at any moment fails (an app that says
"degraded" during a run of 503s). ``health.before_sync`` (M-HEALTH-2: /health answers "as
soon as it starts") reads the mock's gate: a start's first page ask is held until the app
has answered /health, so an app that fetches a page before it serves waits there alone
and the trace says so. The gate is a real mock on loopback here.
"""

from __future__ import annotations

import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from harness.appkit.mockdep import RESOURCE
from tests.support.suites import suite_names

SEED = "0123456789abcdef"

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def m() -> Any:
    return suite_names("invoice-sync")


def _evidence(m: Any, tmp_path: Path) -> Any:
    return m.Evidence(dataset=m.dataset(SEED), evidence_dir=tmp_path)


def test_health_other_than_ok_at_any_moment_fails(m: Any, tmp_path: Path) -> None:
    ev = _evidence(m, tmp_path)
    ok = {"status": "ok"}
    ev.health_samples = [m.Sample(100.0 * i, "initial-sync", 200, ok) for i in range(20)]
    assert m.health_throughout(ev).score == 1.0
    ev.health_samples[7] = m.Sample(700.0, "after-respawn", 200, {"status": "degraded"})
    out = m.health_throughout(ev)
    assert out.score == 0.0 and "degraded" in out.detail and "after-respawn" in out.detail
    ev.health_samples[7] = m.Sample(700.0, "offline", 503, ok)
    assert m.health_throughout(ev).score == 0.0
    ev.health_samples = []
    assert m.health_throughout(ev).score < 1.0  # never answered: nothing passes


def test_a_first_page_let_through_unserved_fails(m: Any, tmp_path: Path) -> None:
    ev = _evidence(m, tmp_path)
    gate = {"mark": "gate", "page": 0, "phase": "initial-sync", "served": True, "waited_s": 0.1}
    ev.trace = [gate, {**gate, "phase": "after-respawn", "page": 3}]
    assert m.health_before_sync(ev).score == 1.0
    ev.trace[0] = {**gate, "served": False, "waited_s": 4.0}
    out = m.health_before_sync(ev)
    assert out.score == 0.0 and "initial-sync" in out.detail
    ev.trace = []
    assert m.health_before_sync(ev).score < 1.0


@pytest.fixture
def upstream(m: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    module = sys.modules[m.Upstream.__module__]
    monkeypatch.setattr(module, "GATE_S", 0.4)  # the test's own: the behaviour, not 4 s
    monkeypatch.setattr(module, "LOOK_S", 0.6)
    up = m.Upstream(SEED, tmp_path / "trace.jsonl")
    with up:
        yield up


def _first_page(up: Any) -> float:
    """Ask the first page; seconds until its answer."""
    sent = time.monotonic()
    with urllib.request.urlopen(up.base_url + RESOURCE, timeout=5) as answer:
        assert answer.status == 200
    return time.monotonic() - sent


def _gates(up: Any) -> list[dict[str, Any]]:
    return [r for r in up.records() if r.get("mark") == "gate"]


def test_the_gate_holds_a_first_ask_until_the_app_serves(upstream: Any) -> None:
    served, looked = upstream.gate()
    threading.Timer(0.1, served.set).start()
    threading.Timer(0.2, looked.set).start()
    took = _first_page(upstream)
    assert 0.15 <= took < 0.4, took  # held until served, then until the look was done
    assert [g["served"] for g in _gates(upstream)] == [True]
    assert _first_page(upstream) < 0.1  # one ask per gate: the next goes straight through


def test_an_ask_before_the_app_serves_waits_out_the_gate_and_is_noted(upstream: Any) -> None:
    upstream.gate()  # nobody sets served: an app that fetches before it serves
    took = _first_page(upstream)
    assert 0.55 <= took < 1.0, took  # GATE_S, then the look's remainder (LOOK_S in all)
    gate = _gates(upstream)[0]
    assert gate["served"] is False and gate["waited_s"] >= 0.4 and gate["page"] == 0


def test_only_a_page_ask_opens_the_gate(upstream: Any) -> None:
    served, looked = upstream.gate()
    for path in (upstream.url + "/elsewhere", upstream.base_url + RESOURCE + "?cursor=nope"):
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(path, timeout=5)
    assert not _gates(upstream)
    served.set()
    looked.set()
    cursor = upstream.dataset.cursors[1]
    with urllib.request.urlopen(upstream.base_url + RESOURCE + f"?cursor={quote(cursor)}") as a:
        assert a.status == 200
    assert [g["page"] for g in _gates(upstream)] == [1]
