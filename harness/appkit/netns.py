"""A private network namespace for one scoring: the app, its mocks and probes, nothing else.

The scorer talks to the app over loopback (HTTP probes, the browser) and the app talks
to the scorer's mock dependencies over loopback. Rather than forward ports across a
namespace boundary, the whole scoring moves: ``private_network()`` puts the *calling
thread* into a fresh network namespace with only ``lo`` up, so every socket it opens,
every thread it starts (mock servers, relays) and every process it spawns (the jailed
app, Chromium) share that namespace and nothing of the host's: no host loopback
service, no other trial's ports, no route out. On exit the thread returns to the
namespace it came from; the rest of the harness process never left it.

A network namespace is per thread on Linux, so ``unshare(CLONE_NEWNET)`` is allowed in a
threaded process and affects no other thread. It needs ``CAP_SYS_ADMIN`` (root outside
a container); without it the scoring runs on the network it has, and ``active()`` says
so (the jail's statement in the report names which).
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import fcntl
import os
import socket
import struct
import sys
from collections.abc import Iterator

from harness.errors import InfraError

CLONE_NEWNET = 0x40000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
_ACTIVE: contextvars.ContextVar[bool] = contextvars.ContextVar("harness_netns", default=False)


def active() -> bool:
    """Whether this context runs inside ``private_network()``."""
    return _ACTIVE.get()


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def loopback_up() -> None:
    """Bring ``lo`` up in the calling thread's network namespace (127.0.0.1 and ::1)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        req = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock, _SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))


@contextlib.contextmanager
def private_network(enabled: bool = True) -> Iterator[bool]:
    """Run the body in a fresh network namespace (loopback only); yields whether it is."""
    if not enabled or os.geteuid() != 0 or not sys.platform.startswith("linux"):
        yield False
        return
    try:
        home = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        yield False
        return
    libc = _libc()
    if libc.unshare(CLONE_NEWNET) != 0:  # no CAP_SYS_ADMIN (a container): stay
        os.close(home)
        yield False
        return
    token = _ACTIVE.set(True)
    try:
        loopback_up()
        yield True
    finally:
        _ACTIVE.reset(token)
        back = libc.setns(home, CLONE_NEWNET)
        err = ctypes.get_errno()
        os.close(home)
        if back != 0:  # this thread would stay cut off: a harness fault, said loudly
            raise InfraError(
                f"cannot return the scoring thread to its network namespace: {os.strerror(err)}"
            )
