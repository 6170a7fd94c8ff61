"""Summaries of results: collection, statistics, tables, publishing and the HTML board.

``collect`` reads result folders, ``stats`` holds the pure arithmetic (means, standard
errors, "not measurable", Pareto frontiers), ``summary`` aggregates per era and entrant
and renders tables, ``publish`` writes summary folders and README blocks, ``board``
writes the static site. ``cli`` holds the ``report``, ``board`` and ``view`` commands.
"""
