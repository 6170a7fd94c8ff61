"""notifierd: the Meridian notifications service (SPEC.md section 7)."""
