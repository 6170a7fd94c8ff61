"""A private network namespace for one scoring, entered by the calling thread only
(appkit/netns.py)."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from typing import TypeVar

import pytest

from harness.appkit.netns import active, loopback_up, private_network

pytestmark = pytest.mark.unit

T = TypeVar("T")


def in_thread(body: Callable[[], T]) -> T:
    """``body`` in a thread of its own: a namespace it enters stays there."""
    out: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            out.append(body())
        except BaseException as exc:  # handed back to the test
            errors.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(timeout=60)
    if errors:
        raise errors[0]
    return out[0]


def listener() -> tuple[socket.socket, int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(4)
    return sock, int(sock.getsockname()[1])


def reaches(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        return True
    except OSError:
        return False


def test_switched_off_it_stays_on_the_network_it_has() -> None:
    assert not active()
    with private_network(enabled=False) as private:
        assert private is False and not active()


@pytest.mark.skipif(os.geteuid() != 0, reason="a network namespace needs root")
def test_the_thread_gets_loopback_alone_and_comes_back() -> None:
    host, host_port = listener()

    def body() -> tuple[bool, bool, bool, bool, bool, bool]:
        with private_network() as private:
            inside = active()
            sees_host = reaches(host_port)
            own, own_port = listener()  # loopback is up in there
            sees_own = reaches(own_port)
            own.close()
            loopback_up()  # again: harmless
        return private, inside, sees_host, sees_own, active(), reaches(host_port)

    try:
        private, inside, sees_host, sees_own, after, back = in_thread(body)
        if not private:
            pytest.skip("no CAP_SYS_ADMIN here (a container): the scoring stays put")
        assert inside and not sees_host and sees_own
        assert not after and back  # home again: the host's loopback is there
        assert reaches(host_port) and not active()  # this thread never left
    finally:
        host.close()
