"""Where the app listens, as the kernel sees it: its port's listening sockets' addresses.

Read from ``/proc`` in the scorer's thread's network namespace (the app's, under the
private network), so nothing the app prints or answers decides it.
"""

import ipaddress
from pathlib import Path

LISTEN = "0A"  # TCP state code of a listening socket in /proc/net/tcp


def _address(hex_addr: str) -> str:
    """An address as /proc/net/tcp{,6} spells it (host byte order per 32-bit word)."""
    raw = bytes.fromhex(hex_addr)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(words))


def listen_addresses(port: int | None) -> list[str]:
    """The local addresses of every TCP socket listening on ``port``, sorted."""
    if port is None:
        return []
    net = Path("/proc/thread-self/net")
    net = net if net.exists() else Path("/proc/net")
    found: set[str] = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = (net / table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if len(parts) < 4 or parts[3] != LISTEN:
                continue
            addr, _, port_hex = parts[1].rpartition(":")
            if int(port_hex, 16) == port:
                found.add(_address(addr))
    return sorted(found)


def loopback_only(addresses: list[str]) -> bool:
    """Listening on 127.0.0.1 (the SPEC's address) and nowhere a non-loopback peer
    reaches: a wildcard (0.0.0.0, ::) or another interface's address is not."""
    return bool(addresses) and all(
        ipaddress.ip_address(a).is_loopback
        or (
            isinstance(ipaddress.ip_address(a), ipaddress.IPv6Address)
            and (mapped := ipaddress.IPv6Address(a).ipv4_mapped) is not None
            and mapped.is_loopback
        )
        for a in addresses
    )
