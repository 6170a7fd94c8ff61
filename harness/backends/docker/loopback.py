"""Fleet hosts on this machine's loopback, reached from a trial's gateway container.

A host at ``http://127.0.0.1:PORT`` (LM Studio on the laptop that runs the benchmark, or
the built-in engine, which publishes its port there) answers processes on this machine
only: inside the gateway container 127.0.0.1 is the container itself. Before the gateway
starts, each such host in its fleet.yml is given an address the container can reach:

- a port a container publishes on loopback (the built-in engine's) becomes that
  container's own address on Docker's default bridge, where the gateway is attached too;
- any other port gets a relay: a listener on the bridge's gateway address (this machine,
  as the containers on the bridge see it) that forwards to ``127.0.0.1:PORT`` and to
  nothing else, for the trial's gateway container only (other containers on the bridge
  are turned away). Only the ports the fleet names are relayed, for the trial's lifetime.

Where no relay can be opened the trial is refused up front, with the fix in one line.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import docker
import yaml

from harness.errors import UserError
from harness.fleet.router_service import bridge_address

LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


class Relay:
    """Forward TCP from ``(listen_host, <free port>)`` to ``127.0.0.1:target`` until closed,
    for the peers allowed (none until ``allow``: the trial's gateway, once its address is
    known; every other container on the bridge is turned away)."""

    def __init__(self, listen_host: str, target: int) -> None:
        self.target = target
        self.allowed: set[str] = set()
        self.server = socket.create_server((listen_host, 0))
        self.address = f"{listen_host}:{self.server.getsockname()[1]}"
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []  # both ends of every relayed connection
        self._thread = threading.Thread(target=self._accept, name=f"relay-{target}", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, peer = self.server.accept()
            except OSError:
                return  # closed
            if peer[0] not in self.allowed:
                client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target), timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:  # (the ones a finished stream closed are let go)
                self._open = [s for s in self._open if s.fileno() != -1] + [client, upstream]
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pump, args=(src, dst), daemon=True).start()

    def allow(self, address: str) -> None:
        """Let connections from ``address`` (the gateway container's) through."""
        self.allowed.add(address)

    def close(self) -> None:
        """Stop listening (a blocked accept is woken by the shutdown) and cut open streams."""
        self._closed.set()
        with self._lock:
            sockets, self._open = [self.server, *self._open], []
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()
        self._thread.join(timeout=5)


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)
        with contextlib.suppress(OSError):
            src.close()


def loopback_port(url: str) -> int | None:
    """The port of a loopback URL (``http://127.0.0.1:1234``), else None."""
    parts = urlsplit(url)
    if parts.hostname is None or parts.hostname not in LOOPBACK:
        return None
    return parts.port or (443 if parts.scheme == "https" else 80)


def published_by_container(client: docker.DockerClient, port: int) -> str | None:
    """``ip:port`` on the default bridge of a running container publishing ``port`` on
    this machine's loopback (or all interfaces), else None."""
    for container in client.containers.list(filters={"status": "running"}):
        settings = container.attrs.get("NetworkSettings") or {}
        bridge = (settings.get("Networks") or {}).get("bridge") or {}
        ip = bridge.get("IPAddress")
        for inner, bindings in (settings.get("Ports") or {}).items():
            for bind in bindings or []:
                here = bind.get("HostIp") in ("127.0.0.1", "0.0.0.0", "")
                if (
                    here
                    and str(bind.get("HostPort")) == str(port)
                    and ip
                    and inner.endswith("/tcp")
                ):
                    return f"{ip}:{inner.split('/')[0]}"
    return None


def bridge_gateway() -> str:
    """This machine's address on Docker's default bridge (``172.17.0.1`` usually)."""
    address = bridge_address()
    if address == "127.0.0.1":
        raise UserError(
            "fleet hosts on this machine's loopback need Docker's default bridge, and there "
            "is none",
            fix="run with --sandbox local, or give fleet hosts an address containers reach",
        )
    return address


def reach_loopback_hosts(fleet_yml: Path, client: docker.DockerClient) -> list[Relay]:
    """Rewrite the loopback hosts of a gateway's ``fleet.yml`` to addresses its container
    reaches; returns the relays opened (the caller closes them when the trial ends)."""
    data: dict[str, Any] = yaml.safe_load(fleet_yml.read_text(encoding="utf-8")) or {}
    relays: list[Relay] = []
    changed = False
    for host in data.get("hosts") or []:
        url = str(host.get("base_url") or "")
        port = loopback_port(url)
        if port is None:
            continue
        parts = urlsplit(url)
        address = published_by_container(client, port)
        if address is None:
            listen = bridge_gateway()
            try:
                relay = Relay(listen, port)
            except OSError as exc:
                for opened in relays:
                    opened.close()
                raise UserError(
                    f"fleet host {host.get('name')} is on this machine's loopback ({url}) and "
                    f"no relay to it could be opened on {listen} ({exc})",
                    file="fleet.yml",
                    field=f"hosts.{host.get('name')}.base_url",
                    fix=f"let the host listen on {listen} or 0.0.0.0 and use that address, "
                    "or run with --sandbox local",
                ) from exc
            relays.append(relay)
            address = relay.address
        host["base_url"] = f"{parts.scheme}://{address}{parts.path}"
        changed = True
    if changed:
        fleet_yml.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return relays
