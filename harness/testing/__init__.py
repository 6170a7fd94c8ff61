"""Code for harness's own tests and benchmarks, never for users.

Nothing in harness's product code imports this package (``tests/test_layering.py``
holds it to that); tests and ``benchmarks/`` do. ``lmstudio`` is an LM Studio look-alike
model host with speeds, a prefix cache and faults you set.
"""
