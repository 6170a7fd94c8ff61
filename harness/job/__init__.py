"""Jobs: a matrix of trials run together, K at a time, resumable after any stop.

``plan`` expands the matrix, ``ledger`` records each trial's state atomically,
``worker`` runs one trial in its own process, ``runner`` schedules them and
``progress`` shows them live. ``cli.run_command`` is the ``harness run`` command.
"""
