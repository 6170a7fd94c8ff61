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
controller names to the run (``verify.outputpipe``), and the plugin must run in the
process harness started (not in a fork whose parent relays a status of its choosing).
Else the plugin ends the process at once with ``outputpipe.TAMPERED`` (a fork's parent
is killed first) and the target is rejected. (Code that patches the plugin itself is
not seen: the same class as a forger that finds the canary.)
Pure apart from the plugin, which runs in the test process.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from harness.verify import outputpipe
from harness.verify.outcome import TestCase

TAG = "[harness-outcome] "
CUT = "[harness] output cut after "  # testuser.run_reaped's note

# Runs in the test process (any Python 3.8+ with pytest): standard library and pytest only.
PLUGIN = '''
_o = _types.ModuleType("harness_reportstream")
exec(compile(r"""
import json, os, stat

try:
    from _pytest.junitxml import bin_xml_escape, mangle_test_address
except ImportError:  # a pytest without them: the report's names are the node ids
    bin_xml_escape = str

    def mangle_test_address(nodeid):
        return [nodeid]

_FD = os.dup(1)  # the run's own output, whatever the tests do to descriptor 1 later
_WRITE = os.write
_DUMPS = json.dumps
_FSTAT, _GETPID, _KILL, _EXIT = os.fstat, os.getpid, os.kill, os._exit
_PID = _GETPID()


def _pipe(fd):
    try:
        st = _FSTAT(fd)
    except OSError:
        return None
    return "pipe:[%d]" % st.st_ino if stat.S_ISFIFO(st.st_mode) else None


# the controller's pipe; unchecked when descriptor 1 was another before the tree ran
_WANT = os.environ.pop("{env}", None)  # read once, and hidden from what the tests start
_WANT = _WANT if _WANT and _pipe(_FD) == _WANT else None


def _guard():  # ends the run when the stream no longer leads to the controller's pipe
    if _WANT is None:
        return
    if _GETPID() != _PID:
        why = "the tests report from a fork of the process harness started"
    elif _pipe(_FD) != _WANT:
        why = "the report stream's descriptor is no longer harness's pipe"
    else:
        return
    try:
        _WRITE(2, ("\\n[harness] %s: ended\\n" % why).encode())
    except OSError:
        pass
    if _GETPID() != _PID:
        try:
            _KILL(_PID, 9)
        except OSError:
            pass
    _EXIT({code})


def _junit_name(nodeid):
    names = mangle_test_address(nodeid)
    parts = (".".join(names[:-1]), str(bin_xml_escape(names[-1])))
    return "::".join(p for p in parts if p)


def pytest_runtest_logreport(report):
    _guard()
    line = "\\n[harness-outcome] %s\\n" % _DUMPS([report.outcome, _junit_name(report.nodeid)])
    try:
        _WRITE(_FD, line.encode("utf-8", "backslashreplace"))
    except OSError:
        pass
""", "<harness reportstream>", "exec"), _o.__dict__)
_harness_plugins.append(_o)
'''.replace("{env}", outputpipe.ENV).replace("{code}", str(outputpipe.TAMPERED))


def logged(output: str) -> dict[str, set[str]]:
    """The outcomes the plugin logged, by JUnit name (``classname::name``)."""
    seen: dict[str, set[str]] = {}
    for line in output.splitlines():
        if not line.startswith(TAG):
            continue
        try:
            outcome, name = json.loads(line[len(TAG) :])
        except (ValueError, TypeError):
            continue
        if isinstance(outcome, str) and isinstance(name, str):
            seen.setdefault(name, set()).add(outcome)
    return seen


def rejection(cases: Iterable[TestCase], output: str) -> str | None:
    """Why the report's passes were not what pytest logged as it ran (None: they were)."""
    seen = logged(output)
    cases = list(cases)
    reported = {c.name for c in cases}
    dropped = sorted(n for n, got in seen.items() if "failed" in got and n not in reported)
    if dropped:
        return f"results forged: {dropped[0]} failed as it ran but is missing from the report"
    for case in cases:
        if not case.passed or case.synthetic:
            continue
        got = seen.get(case.name)
        if not got:
            cut = " (the run's output was over the cap and cut)" if CUT in output else ""
            return f"results forged: {case.name} passed in the report but was never logged{cut}"
        if got != {"passed"}:
            other = sorted(got - {"passed"})[0]
            return f"results forged: {case.name} passed in the report but was logged {other}"
    return None


def without(output: str) -> str:
    """``output`` without the plugin's lines (what the run printed itself)."""
    if TAG not in output:
        return output
    return "\n".join(line for line in output.split("\n") if not line.startswith(TAG))
