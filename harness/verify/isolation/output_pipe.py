"""The run's output pipe, named to the test process so its trusted code can check it.

The controller reads a test run through pipes it creates itself. The agent's code runs
inside the test process and can put a filter between the tests' trusted writers (the
report stream, ``go test``'s event lines) and that pipe: a ``dup2`` of a pipe of its
own onto the descriptor, read by a child (``sed``) or a thread that writes the rest
through, rewriting failures into passes on the way. So the controller names its pipe to
the test process (``ENV``: the ``pipe:[inode]`` that ``/proc/self/fd`` shows), and the
trusted code checks, each time it writes, that its descriptor is still that pipe. When
it is not, it ends the process at once with ``TAMPERED``, a status no output filter can
rewrite, and the controller rejects the target (``verify.python.plugins.report_stream``; Go's canary
checks its own pipe to ``go test``, ``verify.go.output``). Pure apart from ``name``.
"""

from __future__ import annotations

import os

ENV = "HARNESS_OUTPUT_PIPE"
TAMPERED = 86  # the test process's exit status when its output no longer led to harness


def name(fd: int) -> str:
    """The pipe behind ``fd`` as ``/proc/PID/fd`` shows it (``pipe:[inode]``)."""
    return f"pipe:[{os.fstat(fd).st_ino}]"


def rejection(code: int | None) -> str | None:
    """Why a test process's exit status shows its output was taken over (None: it does
    not)."""
    if code != TAMPERED:
        return None
    return (
        "results forged: the test process's report no longer went to harness's pipe "
        f"(its descriptor was replaced while the tests ran; exit {TAMPERED})"
    )
