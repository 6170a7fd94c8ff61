"""Proving the grader over many trees: the controls, calibration, and containment."""
