"""Mutation testing as the grader's adversary: ``harness mutants SCENARIO``.

``points`` finds and samples mutants of the reference solution's lines (``python_ops``:
cosmic-ray's operators and harness's app operators; ``text_ops``: token operators for
Go and JavaScript); ``run`` scores them through the real verifier, each scoring a line
of the scenario's ``mutants.jsonl``; ``score`` tallies the mutation score and the
MUTATION control; ``triage`` reads the scenario's ``mutants.yml`` (equivalent survivors
and why).
"""
