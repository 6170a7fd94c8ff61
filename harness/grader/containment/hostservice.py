"""A service on the host's loopback that no trial may reach (``{host_port}``).

The containment control starts one per attack, on ``127.0.0.1`` of the machine the
control runs on. Whoever connects is answered with the control's secret and leaves the
host marker behind, so a trial that reached it shows both ways: the marker exists, and
the secret may surface in the results. An app scored in a network namespace of its own
(``--sandbox local`` as root) or any container cannot reach it.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path


class LoopbackService:
    """Listens on an ephemeral ``127.0.0.1`` port until ``close()``; counts connections."""

    def __init__(self, secret: str, marker: Path) -> None:
        self.secret = secret
        self.marker = marker
        self.reached = 0
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(8)
        self.port = int(self._sock.getsockname()[1])
        self._thread = threading.Thread(target=self._serve, name="containment-host", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return  # closed
            with conn:
                self.reached += 1
                self.marker.touch()
                with contextlib.suppress(OSError):
                    conn.sendall(self.secret.encode() + b"\n")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        self._thread.join(timeout=5)
