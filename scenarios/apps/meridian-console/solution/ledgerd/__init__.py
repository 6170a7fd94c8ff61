"""ledgerd: the Meridian payments ledger (SPEC.md)."""
