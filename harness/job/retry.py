"""Which infrastructure errors a job tries again at once, and which it leaves to the user.

A trial that ended in ``error`` is retried within one invocation (``--max-interruptions``)
because most faults pass: a container that failed to start, a host that went away. Some do
not: a host name that does not resolve (offline, or a wrong name), the network down, the
agent's program missing on this machine. The same attempt meets them again at once, so
retrying them in a loop only costs time; the trial stays ``error`` with its cause, and the
next ``harness run`` tries it once more, after the user fixed the cause.
"""

from __future__ import annotations

from typing import Any

# what the cause says when it will say the same on the next attempt
STEADY_SIGNS = (
    "could not resolve host",
    "temporary failure in name resolution",
    "name or service not known",
    "nodename nor servname provided",
    "no address associated with hostname",
    "network is unreachable",
    "agent program not found",
)
NOT_RETRIED = "not retried: the next attempt would meet it again"


def steady(result: dict[str, Any]) -> bool:
    """Whether a worker's ``error`` result is one the same attempt would meet again."""
    if result.get("steady"):
        return True
    text = str(result.get("detail") or "").lower()
    return any(sign in text for sign in STEADY_SIGNS)


def say_steady(detail: str) -> str:
    """The ledger's detail for a steady error: its cause, and that it was not retried."""
    return f"{detail} ({NOT_RETRIED})" if NOT_RETRIED not in detail else detail
