"""``harness mine REPO``: real fix commits of a repository turned into draft scenarios.

walk (first-parent history) -> split (code vs tests) -> prove (fail before, pass after,
three times, in the verifier's sandbox) -> draft (scenario.yml naming the fix commit) ->
funnel (counts per stage, a reason for every rejected commit).
"""
