"""Whose a Docker object is: the labels that tell this project's sandboxes from another's,
and a live trial's from a leftover.

Every container, network and volume a sandbox makes carries ``harness=1``, the trial's
labels (``harness.trial``, ``harness.job``, ``harness.phase``) and these: ``harness.project``
(a short hash of the project folder, so two projects, or two users, sharing one engine
never clean up each other's objects), ``harness.host`` and ``harness.pid`` (the process
that made it: while that process lives on this host, the trial is running).
"""

from __future__ import annotations

import functools
import hashlib
import os
import socket

PROJECT = "harness.project"
HOST = "harness.host"
PID = "harness.pid"


@functools.lru_cache(maxsize=8)
def _project_id(root: str) -> str:
    return hashlib.sha256(root.encode()).hexdigest()[:12]


def project_id() -> str:
    """This project's id: a hash of the project folder the environment names."""
    from harness.config.settings import Settings

    return _project_id(str(Settings.from_env().project_root.resolve()))


def owner_labels() -> dict[str, str]:
    """The labels naming this project and this process as an object's maker."""
    return {PROJECT: project_id(), HOST: socket.gethostname(), PID: str(os.getpid())}


def owner_alive(labels: dict[str, str]) -> bool | None:
    """Whether the process that made an object still runs (None: cannot tell, e.g. it was
    made on another host or before objects were labelled with their maker)."""
    pid, host = labels.get(PID, ""), labels.get(HOST)
    if not pid.isdigit() or host != socket.gethostname():
        return None
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True
