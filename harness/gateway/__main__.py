"""``python -m harness.gateway serve ...``: the CLI's gateway commands."""

from harness.cli.fleet import gateway_app

if __name__ == "__main__":
    gateway_app(prog_name="python -m harness.gateway")
