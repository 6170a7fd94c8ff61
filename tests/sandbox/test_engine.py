"""Connecting to the Docker engine: an engine that is down is an infrastructure error naming
where it looked and the short cause, with the fix that fits; the cause is one short line."""

from __future__ import annotations

import pytest

from harness.errors import InfraError
from harness.sandbox.engine import (
    DOCKER_HOST_HINT,
    docker_client,
    engine_address,
    short_cause,
)

pytestmark = pytest.mark.unit


def test_the_cause_is_the_innermost_reason_on_one_short_line() -> None:
    long = "HTTPConnectionPool(host='x'): Max retries\n exceeded (Caused by ... Connection refused)"
    assert short_cause(RuntimeError(long)) == "Connection refused"
    assert short_cause(RuntimeError("a\nb " + "c" * 300)) == ("a b " + "c" * 300)[:160]


def test_an_unreachable_engine_names_its_address_and_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:9")  # nothing listens on port 9
    assert engine_address() == "DOCKER_HOST=tcp://127.0.0.1:9"
    with pytest.raises(InfraError) as info:
        docker_client(timeout=5)
    text = str(info.value)
    assert "Docker engine not reachable at DOCKER_HOST=tcp://127.0.0.1:9: " in text
    assert "Connection refused" in text and info.value.fix == DOCKER_HOST_HINT
    monkeypatch.delenv("DOCKER_HOST")
    assert engine_address() == "unix:///var/run/docker.sock (DOCKER_HOST unset)"
