"""Helpers shared by the Docker tests: engine access, unique trial labels, leftovers."""

from __future__ import annotations

import secrets

import docker
import pytest
from docker.errors import DockerException

from harness.images import ensure_image


def client_or_skip() -> docker.DockerClient:
    """A client for the local engine; skips the test when no engine is running."""
    try:
        client = docker.from_env(timeout=600)
        client.ping()
    except DockerException as exc:
        pytest.skip(f"Docker engine not reachable: {exc}")
    return client


def base_tag(client: docker.DockerClient) -> str:
    """Tag of the current base image (built on first use)."""
    return ensure_image("base", client=client).tag


def new_trial() -> str:
    """A trial id unique to one test, used as the ``harness.trial`` label."""
    return f"test-{secrets.token_hex(6)}"


def leftovers(client: docker.DockerClient, trial: str) -> list[str]:
    """Names of containers and networks still labelled with ``trial``."""
    query = {"label": [f"harness.trial={trial}"]}
    names = [f"container {c.name}" for c in client.containers.list(all=True, filters=query)]
    names += [f"network {n.name}" for n in client.networks.list(filters=query)]
    return names
