"""One place that connects to the Docker engine and turns "it is down" into an InfraError."""

from __future__ import annotations

import docker
from docker.errors import DockerException

from harness.errors import InfraError

START_HINT = "start the engine (dockerd >/var/log/dockerd.log 2>&1 &) or use --sandbox local"


def docker_client(timeout: int = 600) -> docker.DockerClient:
    """A client for the engine named by the environment (DOCKER_HOST or the local socket)."""
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except DockerException as exc:
        raise InfraError(f"Docker engine not reachable: {exc}", fix=START_HINT) from exc
    return client
