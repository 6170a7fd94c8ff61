"""The attack catalogue and the containment control (``harness controls --containment``).

Each attack (``attacks/<name>.yml``, format in ``catalogue.py``) is played by a test
agent in a real trial on the user's own machine; the control says CONTAINED when the
trial ends with the verdict unfixed code earns, no host marker appeared, no host data
reached the results and nothing of the trial is left behind.
"""
