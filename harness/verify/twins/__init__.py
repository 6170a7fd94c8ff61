"""Negative twins: the hidden tests with their expected values changed.

A test compares what the code computes with a value its author wrote down. Honest code
fails a copy of the test where that value is changed; code that passes the test *and*
its changed copy did not compute the answer: it read the expectation (its source, its
memory) or imitated it (a value equal to anything). ``verdict`` judges a target from
the two runs (any runner); ``go`` makes and runs the Go twins (``gotwin.go``, run by the
builder). A twin covers only comparisons with a literal (see ``gotwin.go`` for which).
"""
