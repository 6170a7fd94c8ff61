"""``python -m harness.gateway [serve] [options]``: the in-container entry (``inside``)."""

from harness.gateway.inside import main

if __name__ == "__main__":
    main()
