"""ledgerd: a payments ledger synced from a vendor (see SPEC.md)."""
