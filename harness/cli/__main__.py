"""``python -m harness.cli``: the CLI (the same as the ``harness`` command)."""

from harness.cli import main

if __name__ == "__main__":
    main()
