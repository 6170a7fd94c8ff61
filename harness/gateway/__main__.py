"""``python -m harness.fleet.gateway serve ...``: the CLI's gateway commands."""

from harness.fleet.cli import gateway_app

if __name__ == "__main__":
    gateway_app(prog_name="python -m harness.fleet.gateway")
