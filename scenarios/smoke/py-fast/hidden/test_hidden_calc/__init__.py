"""Hidden tests for smoke/py-fast."""
