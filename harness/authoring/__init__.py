"""Authoring scenarios: save solutions and defects, scaffold, version, lock, check."""
