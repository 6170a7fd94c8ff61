"""The host's loopback service no trial may reach: whoever connects gets the secret and
leaves the marker; once closed, nothing listens."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from harness.grader.containment.hostservice import LoopbackService

pytestmark = pytest.mark.unit


def test_a_connection_gets_the_secret_and_leaves_the_marker(tmp_path: Path) -> None:
    marker = tmp_path / "reached"
    service = LoopbackService("s3cret", marker)
    try:
        assert not marker.exists() and service.reached == 0
        for _ in range(2):
            with socket.create_connection(("127.0.0.1", service.port), timeout=5) as conn:
                assert conn.makefile("rb").readline() == b"s3cret\n"
        assert marker.exists() and service.reached == 2
    finally:
        service.close()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", service.port), timeout=2).close()
    assert not service._thread.is_alive()
