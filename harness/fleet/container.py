"""Deprecated path ``harness.fleet.container``: it moved to ``harness.backends.docker.gateway``
and ``harness.gateway.files`` and ``harness.gateway.inside`` and
``harness.fleet.router_service`` in the layout move (issue 21). Kept for one minor version;
a name read here warns and comes from its new home.
"""

from typing import Any

from harness.util.compat import moved


def __getattr__(name: str) -> Any:
    return moved(
        __name__,
        name,
        "harness.backends.docker.gateway",
        "harness.gateway.files",
        "harness.gateway.inside",
        "harness.fleet.router_service",
    )


if __name__ == "__main__":  # python -m harness.fleet.container serve [options]
    from harness.util.compat import run_moved

    run_moved("harness.fleet.container", "harness.gateway.inside")
