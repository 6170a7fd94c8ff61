"""apps/meridian-console's suite as a package, for type checkers and linters.

The harness imports ``suite.py`` alone (it declares this folder as its package path).
"""
