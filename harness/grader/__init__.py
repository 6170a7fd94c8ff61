"""Proving a scenario's grader over many trees: controls, calibration, ``validate --deep``."""
