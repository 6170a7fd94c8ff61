"""One output stream kept up to a cap; the rest counted and dropped.

A run that writes without end then costs its reader no more memory than the cap."""

from __future__ import annotations


class Capped:
    """The first ``cap`` bytes of a stream, and how many bytes came after them."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.data = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes | None) -> None:
        if not chunk:
            return
        room = max(0, self.cap - len(self.data))
        self.data += chunk[:room]
        self.dropped += len(chunk) - min(room, len(chunk))

    def text(self) -> str:
        return bytes(self.data).decode("utf-8", errors="replace")


__all__ = ["Capped"]
