"""One place that connects to the Docker engine and turns "it is down" into an InfraError."""

from __future__ import annotations

import os
import threading

import docker
from docker.errors import DockerException

from harness.config.settings import read_env
from harness.errors import InfraError

START_HINT = "start the engine (dockerd >/var/log/dockerd.log 2>&1 &) or use --sandbox local"
DOCKER_HOST_HINT = (
    "set DOCKER_HOST to the engine's address, unset it for the local socket, or use --sandbox local"
)
DEFAULT_SOCKET = "unix:///var/run/docker.sock"


def engine_address() -> str:
    """The engine a client would try: ``DOCKER_HOST`` or the local socket."""
    host = read_env("DOCKER_HOST")
    return f"DOCKER_HOST={host}" if host else f"{DEFAULT_SOCKET} (DOCKER_HOST unset)"


def short_cause(exc: BaseException) -> str:
    """The innermost reason of a connection failure, on one short line."""
    text = " ".join(str(exc).split())
    for sign in (
        "Connection refused",
        "No such file or directory",
        "Name or service not known",
        "timed out",
        "Permission denied",
        "Temporary failure in name resolution",
    ):
        if sign in text:
            return sign
    return text[:160]


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
        raise InfraError(
            f"Docker engine not reachable at {engine_address()}: {short_cause(exc)}",
            fix=START_HINT if read_env("DOCKER_HOST") is None else DOCKER_HOST_HINT,
        ) from exc
    cache[key] = client
    return client
