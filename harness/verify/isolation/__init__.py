"""Process isolation for the hidden tests: who they run as (``test_user``), the reaper
that leaves nothing of a run alive (``reaper``, run as a script), the runner files put
back before a run (``restore``), the run's output pipe (``output_pipe``), and results
refused when they name tests the suite does not hold (``held_names``)."""
