"""One place that connects to the Docker engine and turns "it is down" into an InfraError."""

from __future__ import annotations

import os
import threading

import docker
from docker.errors import DockerException

from harness.config.settings import read_env
from harness.errors import InfraError

START_HINT = "start the engine (dockerd >/var/log/dockerd.log 2>&1 &) or use --sandbox local"


_local = threading.local()


def docker_client(timeout: int = 600) -> docker.DockerClient:
    """A client for the engine named by the environment (DOCKER_HOST or the local socket).

    One per thread, process, engine and timeout, checked (pinged) when made: a trial asks
    for a client several times, and a new one with its ping cost ~50 ms each under load."""
    key = (os.getpid(), read_env("DOCKER_HOST"), timeout)
    cache: dict[tuple[int, str | None, int], docker.DockerClient] = _local.__dict__.setdefault(
        "clients", {}
    )
    if key in cache:
        return cache[key]
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except DockerException as exc:
        raise InfraError(f"Docker engine not reachable: {exc}", fix=START_HINT) from exc
    cache[key] = client
    return client
