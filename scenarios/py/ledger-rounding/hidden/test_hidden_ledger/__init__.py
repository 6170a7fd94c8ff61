"""Hidden acceptance tests for the ledger-rounding scenario."""
