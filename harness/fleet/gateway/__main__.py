"""Deprecated: ``python -m harness.fleet.gateway serve ...`` (the CLI's gateway commands);
use ``harness gateway ...`` (``python -m harness.cli gateway ...``)."""

import warnings

from harness.cli.fleet import gateway_app

if __name__ == "__main__":
    warnings.warn(
        "python -m harness.fleet.gateway is deprecated: use harness gateway",
        DeprecationWarning,
        stacklevel=1,
    )
    gateway_app(prog_name="python -m harness.fleet.gateway")
