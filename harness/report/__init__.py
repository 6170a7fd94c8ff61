"""Summaries of results: collection, statistics, tables, publishing and the HTML board.

``collect`` reads result folders (``taskdate`` the scenarios' task dates), ``stats``
holds one entrant's pure arithmetic (clustered means, intervals, pass@k, Pareto
frontiers) on ``dist``'s distribution functions, ``paired`` the comparisons of two
entrants, Holm-corrected ranks and power planning, ``summary`` aggregates per era and
entrant, ``render`` and ``compare`` print them, ``publish`` writes summary folders and
README blocks, ``board`` writes the static site. ``cli`` holds the ``report``,
``compare``, ``board`` and ``view`` commands.
"""
