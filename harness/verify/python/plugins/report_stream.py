"""Each test's outcome as pytest decided it, written to the run's output as it happens.

The JUnit report is a file the test process writes at the session's end, and the agent's
code runs in that process: at exit (an ``atexit`` handler, a thread, a child process) it
can rewrite the report, turning every failure into a pass except the canary's, which it
can tell apart (the last file on pytest's command line, a name the suite does not hold).
The canary then fails as it must and the report reads like a run where only it failed.
So the boot script, before the tree joins ``sys.path``, duplicates the run's standard
output and registers a plugin that writes one line per report phase there, as pytest
logs it: ``[harness-outcome] ["failed", "<the JUnit name>"]``. Output written to a pipe
cannot be taken back: a case the report says passed must have been logged as passing in
every phase, else the report was changed after pytest wrote it and the target is
rejected, and so is a report that leaves out a case logged as failing. A line the
code under test prints itself can only add claims, never remove
the plugin's. A forger that takes over the duplicated descriptor (a ``dup2`` of a pipe
of its own, read by a ``sed`` child or a thread that writes the rest through, rewritten)
is seen before each line: the descriptor must still be the controller's pipe, which the
controller names to the run (``verify.isolation.output_pipe``), and the plugin must run in the
process harness started (not in a fork whose parent relays a status of its choosing).
Else the plugin ends the process at once with ``output_pipe.TAMPERED`` (a fork's parent
is killed first) and the target is rejected. (Code that patches the plugin itself is
not seen: the same class as a forger that finds the canary.)

Runs in the test process (any Python 3.8+ with pytest), read as text and handed to it by
the boot script (``verify.python.boot``), which gives it ``PIPE_ENV`` and ``TAMPERED``
(``verify.isolation.output_pipe``): standard library and pytest only. The controller's
side, which reads the lines back, is ``verify.python.logged_outcomes``.
"""

from __future__ import annotations

import json
import os
import stat
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

# given by the boot script, before this runs: output_pipe's ENV and TAMPERED
PIPE_ENV: str = globals()["PIPE_ENV"]
TAMPERED: int = globals()["TAMPERED"]

try:
    from _pytest.junitxml import bin_xml_escape, mangle_test_address
except ImportError:  # a pytest without them: the report's names are the node ids
    bin_xml_escape = str  # type: ignore[assignment]

    def mangle_test_address(address: str) -> list[str]:
        return [address]


_FD = os.dup(1)  # the run's own output, whatever the tests do to descriptor 1 later
_WRITE = os.write
_DUMPS = json.dumps
_FSTAT, _GETPID, _KILL, _EXIT = os.fstat, os.getpid, os.kill, os._exit
_PID = _GETPID()


def _pipe(fd: int) -> str | None:
    try:
        st = _FSTAT(fd)
    except OSError:
        return None
    return "pipe:[%d]" % st.st_ino if stat.S_ISFIFO(st.st_mode) else None


# the controller's pipe; unchecked when descriptor 1 was another before the tree ran
_WANT = os.environ.pop(PIPE_ENV, None)  # read once, and hidden from what the tests start
_WANT = _WANT if _WANT and _pipe(_FD) == _WANT else None


def _guard() -> None:  # ends the run when the stream no longer leads to the controller's pipe
    if _WANT is None:
        return
    if _GETPID() != _PID:
        why = "the tests report from a fork of the process harness started"
    elif _pipe(_FD) != _WANT:
        why = "the report stream's descriptor is no longer harness's pipe"
    else:
        return
    try:
        _WRITE(2, ("\n[harness] %s: ended\n" % why).encode())
    except OSError:
        pass
    if _GETPID() != _PID:
        try:
            _KILL(_PID, 9)
        except OSError:
            pass
    _EXIT(TAMPERED)


def _junit_name(nodeid: str) -> str:
    names = mangle_test_address(nodeid)
    parts = (".".join(names[:-1]), str(bin_xml_escape(names[-1])))
    return "::".join(p for p in parts if p)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _guard()
    line = "\n[harness-outcome] %s\n" % _DUMPS([report.outcome, _junit_name(report.nodeid)])
    try:
        _WRITE(_FD, line.encode("utf-8", "backslashreplace"))
    except OSError:
        pass
