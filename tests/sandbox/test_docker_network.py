"""Network isolation: ``internal`` reaches only its own network, ``none`` reaches nothing.

A positive control (a plain bridge network reaching the same host server) proves the probe
can succeed, so its failures on the isolated networks mean isolation, not a broken probe.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import docker
import pytest
from docker.models.networks import Network

from harness.sandbox.base import SandboxSpec
from harness.sandbox.cleanup import cleanup
from harness.sandbox.docker import DockerSandbox
from tests._docker import base_tag, client_or_skip, leftovers, new_trial

pytestmark = [pytest.mark.docker, pytest.mark.integration]

PROBE = """
import socket, sys
s = socket.socket()
s.settimeout(3)
try:
    s.connect((sys.argv[1], int(sys.argv[2])))
    print("OPEN")
except OSError as exc:
    print("CLOSED", exc)
"""
SERVE = (
    "import http.server as h; h.HTTPServer(('', 8000), h.SimpleHTTPRequestHandler).serve_forever()"
)


@pytest.fixture(scope="module")
def client() -> docker.DockerClient:
    return client_or_skip()


@pytest.fixture(scope="module")
def image(client: docker.DockerClient) -> str:
    return base_tag(client)


@pytest.fixture
def trial(client: docker.DockerClient) -> Iterator[str]:
    trial_id = new_trial()
    try:
        yield trial_id
    finally:
        cleanup(trial=trial_id, client=client, all_projects=True)
        assert leftovers(client, trial_id) == []


@pytest.fixture
def host_server() -> Iterator[int]:
    """A TCP server on 0.0.0.0 (an ephemeral port) that accepts and closes connections."""
    listener = socket.socket()
    listener.bind(("0.0.0.0", 0))
    listener.listen(16)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
                conn.close()
            except OSError:
                return

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        listener.close()
        thread.join(5)


@pytest.fixture
def bridge(client: docker.DockerClient, trial: str) -> Network:
    """A plain (non-internal) bridge network owned by this test."""
    return client.networks.create(
        f"{trial}-bridge", driver="bridge", labels={"harness": "1", "harness.trial": trial}
    )


def _gateway(network: Network) -> str:
    network.reload()
    return str(network.attrs["IPAM"]["Config"][0]["Gateway"])


def _probe(box: DockerSandbox, host: str, port: int) -> str:
    result = box.exec(["python3", "-c", PROBE, host, str(port)], timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _spec(image: str, trial: str, network: str) -> SandboxSpec:
    return SandboxSpec(phase="agent", image=image, network=network, labels={"harness.trial": trial})


def _server(client: docker.DockerClient, image: str, name: str, network: str) -> str:
    """Start an HTTP server container on ``network``; return its address there."""
    container = client.containers.run(
        image,
        ["python3", "-c", SERVE],
        detach=True,
        name=name,
        network=network,
        labels={"harness": "1", "harness.trial": name.rsplit("-", 1)[0]},
    )
    for _ in range(100):
        if b"OPEN" in container.exec_run(["python3", "-c", PROBE, "127.0.0.1", "8000"]).output:
            break
    else:
        pytest.fail("server container never listened")
    container.reload()
    return str(container.attrs["NetworkSettings"]["Networks"][network]["IPAddress"])


def test_internal_cannot_reach_the_host(
    client: docker.DockerClient, image: str, trial: str, host_server: int, bridge: Network
) -> None:
    with DockerSandbox(_spec(image, trial, bridge.name), client=client) as control:
        assert "OPEN" in _probe(control, _gateway(bridge), host_server)  # the probe works
    with DockerSandbox(_spec(image, trial, "internal"), client=client) as box:
        assert box.network_name is not None
        own_gateway = _gateway(client.networks.get(box.network_name))
        for address in (own_gateway, _gateway(bridge)):
            assert "CLOSED" in _probe(box, address, host_server), address


def test_internal_reaches_only_its_own_network(
    client: docker.DockerClient, image: str, trial: str, bridge: Network
) -> None:
    outside_ip = _server(client, image, f"{trial}-outside", bridge.name)
    with DockerSandbox(_spec(image, trial, "internal"), client=client) as box:
        assert box.network_name is not None
        assert "CLOSED" in _probe(box, outside_ip, 8000)
        # A server attached to the same internal network (how the gateway is reached).
        _server(client, image, f"{trial}-gateway", box.network_name)
        assert "OPEN" in _probe(box, f"{trial}-gateway", 8000)
        with DockerSandbox(_spec(image, trial, bridge.name), client=client) as control:
            assert "OPEN" in _probe(control, outside_ip, 8000)


def test_none_has_no_network(
    client: docker.DockerClient, image: str, trial: str, host_server: int, bridge: Network
) -> None:
    with DockerSandbox(_spec(image, trial, "none"), client=client) as box:
        assert box.network_name is None
        names = box.exec(["python3", "-c", "import socket; print(socket.if_nameindex())"])
        assert "'lo'" in names.stdout and "eth0" not in names.stdout
        assert "CLOSED" in _probe(box, _gateway(bridge), host_server)
