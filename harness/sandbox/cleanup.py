"""Leave nothing behind: remove labelled leftovers, and stop live sandboxes on signals.

Everything a sandbox creates carries ``harness=1``, the trial's labels (``harness.job``,
``harness.trial``) and its maker's (``harness.project``, ``harness.host``, ``harness.pid``:
``owner.py``), so leftovers of a crashed run are findable and removable by label, and only
this project's, and never a running trial's unless it is named. ``cleanup_on_signals``
covers the Ctrl-C / ``kill`` case for a running process.
"""

from __future__ import annotations

import dataclasses
import re
import signal
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from types import FrameType
from typing import Any

import docker
from docker.errors import APIError, NotFound

from harness.errors import UserError
from harness.sandbox.base import Sandbox
from harness.sandbox.docker_io import remove_network
from harness.sandbox.engine import docker_client
from harness.sandbox.owner import PROJECT, owner_alive, project_id

EXIT_SIGTERM = 143


def label_filters(job: str | None = None, trial: str | None = None) -> list[str]:
    """Docker label filters selecting harness objects, optionally of one job or trial."""
    filters = ["harness=1"]
    if job:
        filters.append(f"harness.job={job}")
    if trial:
        filters.append(f"harness.trial={trial}")
    return filters


@dataclass(frozen=True)
class Leftover:
    """One object ``cleanup`` looked at: removed (or would be), or kept and why."""

    kind: str  # container, network or volume
    name: str
    trial: str
    job: str
    age_s: float | None
    keep: str = ""  # why it is left alone ("" = removable)
    handle: Any = field(default=None, compare=False, repr=False)

    def line(self) -> str:
        age = "" if self.age_s is None else f", {_age(self.age_s)} old"
        job = f", job {self.job}" if self.job else ""
        return f"{self.kind} {self.name} (trial {self.trial or '?'}{job}{age})"


def find_leftovers(
    job: str | None = None,
    trial: str | None = None,
    *,
    older_than_s: float | None = None,
    all_projects: bool = False,
    client: docker.DockerClient | None = None,
) -> list[Leftover]:
    """Harness objects of this project (of ``job``, of ``trial``, older than
    ``older_than_s``), each marked removable or kept: a running trial's (its maker still
    runs, or cannot be told dead) is kept unless ``trial`` names it."""
    client = client or docker_client()
    query: dict[str, Any] = {"label": label_filters(job, trial)}
    if not all_projects:
        query["label"].append(f"{PROJECT}={project_id()}")
    now = time.time()
    found: list[Leftover] = []
    live: set[str] = set()
    for c in client.containers.list(all=True, filters=query):
        labels = c.labels or {}
        running = c.status in ("running", "restarting", "paused")
        if running and owner_alive(labels) is not False:
            live.add(labels.get("harness.trial", ""))
        found.append(_leftover("container", c.name, labels, c.attrs.get("Created"), now, c))
    for n in client.networks.list(filters=query):
        found.append(_leftover("network", n.name, n.attrs.get("Labels") or {},
                               n.attrs.get("Created"), now, n))  # fmt: skip
    for v in client.volumes.list(filters=query):
        found.append(_leftover("volume", v.name, v.attrs.get("Labels") or {},
                               v.attrs.get("CreatedAt"), now, v))  # fmt: skip
    out = []
    for item in found:
        keep = ""
        if item.trial in live and not trial:
            keep = "its trial is running (name it with --trial to remove it)"
        elif older_than_s is not None and (item.age_s is None or item.age_s < older_than_s):
            keep = "younger than --older-than"
        out.append(dataclasses.replace(item, keep=keep))
    return out


def remove_leftovers(items: list[Leftover]) -> dict[str, int]:
    """Remove the removable ``items`` (containers first); count what went."""
    removed = {"containers": 0, "networks": 0, "volumes": 0}
    for kind in ("container", "network", "volume"):
        for item in items:
            if item.kind != kind or item.keep:
                continue
            if _remove(item):
                removed[f"{kind}s"] += 1
    return removed


def cleanup(
    job: str | None = None,
    trial: str | None = None,
    *,
    older_than_s: float | None = None,
    all_projects: bool = False,
    client: docker.DockerClient | None = None,
) -> dict[str, int]:
    """Remove this project's leftover containers, networks and volumes (of ``job``, of
    ``trial``, older than ``older_than_s``); a running trial's only when ``trial`` names
    it. Returns how many of each were removed. Objects that vanish meanwhile are skipped.
    """
    items = find_leftovers(
        job, trial, older_than_s=older_than_s, all_projects=all_projects, client=client
    )
    return remove_leftovers(items)


def _remove(item: Leftover) -> bool:
    try:
        if item.kind == "container":
            item.handle.remove(force=True, v=True)
        elif item.kind == "network":
            return remove_network(item.handle) is None
        else:
            item.handle.remove(force=True)
    except NotFound:
        return False
    except APIError as exc:
        if exc.status_code != 409:  # in use, or being removed already
            raise
        return False
    return True


def _leftover(
    kind: str, name: str | None, labels: dict[str, str], created: Any, now: float, handle: Any
) -> Leftover:
    trial, job = labels.get("harness.trial", ""), labels.get("harness.job", "")
    when = _created(created)
    age = None if when is None else now - when
    return Leftover(kind, name or "?", trial, job, age, "", handle)


def _created(value: Any) -> float | None:
    """Docker's RFC 3339 creation time (nanoseconds, ``Z``) as a Unix time."""
    if not isinstance(value, str) or not value:
        return None
    text = re.sub(r"(\.\d{6})\d+", r"\1", value.strip()).replace("Z", "+00:00")
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit}"
    return f"{seconds:.0f}s"


def parse_age(text: str) -> float:
    """``90s``, ``30m``, ``2h``, ``7d`` as seconds (a bare number is seconds)."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*", text)
    if found is None:
        raise UserError(
            f"'{text}' is not an age", field="--older-than", fix="e.g. 90s, 30m, 2h or 7d"
        )
    factor = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[found.group(2)]
    return float(found.group(1)) * factor


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
