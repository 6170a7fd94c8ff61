"""Leave nothing behind: remove labelled leftovers, and stop live sandboxes on signals.

Everything a sandbox creates carries ``harness=1`` plus the trial's labels
(``harness.job``, ``harness.trial``), so leftovers of a crashed run are findable and
removable by label. ``cleanup_on_signals`` covers the Ctrl-C / ``kill`` case for a
running process.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import docker
from docker.errors import APIError, NotFound

from harness.sandbox.base import Sandbox
from harness.sandbox.docker_io import remove_network
from harness.sandbox.engine import docker_client

EXIT_SIGTERM = 143


def label_filters(job: str | None = None, trial: str | None = None) -> list[str]:
    """Docker label filters selecting harness objects, optionally of one job or trial."""
    filters = ["harness=1"]
    if job:
        filters.append(f"harness.job={job}")
    if trial:
        filters.append(f"harness.trial={trial}")
    return filters


def cleanup(
    job: str | None = None,
    trial: str | None = None,
    *,
    client: docker.DockerClient | None = None,
) -> dict[str, int]:
    """Remove containers, networks and volumes labelled ``harness=1`` (and job/trial).

    Returns how many of each were removed. Objects that vanish meanwhile are skipped.
    """
    client = client or docker_client()
    query: dict[str, Any] = {"label": label_filters(job, trial)}
    removed = {"containers": 0, "networks": 0, "volumes": 0}
    for container in client.containers.list(all=True, filters=query):
        try:
            container.remove(force=True, v=True)
            removed["containers"] += 1
        except NotFound:
            pass
        except APIError as exc:
            if exc.status_code != 409:
                raise
    for network in client.networks.list(filters=query):
        if remove_network(network) is None:
            removed["networks"] += 1
    for volume in client.volumes.list(filters=query):
        try:
            volume.remove(force=True)
            removed["volumes"] += 1
        except NotFound:
            pass
    return removed


def stop_all(sandboxes: Iterable[Sandbox]) -> None:
    """Stop every sandbox, carrying on past individual failures."""
    for sandbox in list(sandboxes):
        try:
            sandbox.stop()
        except Exception:  # one broken sandbox must not keep the others alive
            continue


@contextmanager
def cleanup_on_signals(sandboxes: Iterable[Sandbox]) -> Iterator[None]:
    """Within the block, SIGINT/SIGTERM first stop ``sandboxes`` (read at signal time).

    Then SIGINT raises ``KeyboardInterrupt`` (exit 130) and SIGTERM raises
    ``SystemExit(143)``. Pass a list you keep appending to. Handlers are only installed
    from the main thread; the previous handlers are restored on exit.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, _frame: FrameType | None) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # no second interrupt mid-cleanup
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        try:
            stop_all(sandboxes)
        finally:
            restore()
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise SystemExit(EXIT_SIGTERM)

    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

    def restore() -> None:
        for sig, old in previous.items():
            signal.signal(sig, old)

    for sig in previous:
        signal.signal(sig, handler)
    try:
        yield
    finally:
        restore()
