"""The static results board: plain HTML, CSS, a little JavaScript and inline SVG.

``site.build_board(runs, out)`` writes it; nothing is fetched from the internet and all
text is escaped.
"""
