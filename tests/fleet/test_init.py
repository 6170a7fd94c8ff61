"""``harness.fleet``'s names come from the fleet's own modules, with no warning; the
gateway's live in ``harness.gateway`` (it sits above the fleet)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import harness.fleet

pytestmark = pytest.mark.unit


def test_every_exported_name_is_the_fleets_own_and_imports_without_a_warning() -> None:
    names = ", ".join(harness.fleet.__all__)
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", f"from harness.fleet import {names}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    for name in harness.fleet.__all__:
        assert getattr(harness.fleet, name).__module__.startswith("harness.fleet.")


def test_the_gateways_names_live_in_the_gateway() -> None:
    from harness.gateway import GatewayServer

    assert not hasattr(harness.fleet, "GatewayServer")
    assert GatewayServer.__module__ == "harness.gateway.server"
