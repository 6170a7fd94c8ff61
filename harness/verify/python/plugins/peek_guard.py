"""The code under test may not read the hidden tests while they run.

The hidden test files must be readable by the test process, which is also the process
the agent's code runs in. So ``clamp`` can look at its caller (``inspect.stack()[1]``),
read the assertion it is called from, ``assert clamp(15, 0, 10) == 10``, and return what
the test expects; every literal assertion then passes on code that computes nothing.
The plugin adds an audit hook (PEP 578) to the test process: an ``open`` for reading of a
hidden test's Python source while a frame of a file the agent changed or added is on the
stack fails the collector or test it happened in, naming the file and who read it (an
open for writing is no read: it fails on the file's permissions and changes nothing).
Before each test the hidden sources leave ``linecache``, so a second look opens the file
again. Data files of the hidden tests stay readable (a test often passes such a path to
the code). Not seen: a read through pytest's own objects in memory; and code under test
that calls ``inspect.stack()`` for any reason reads every caller's source, the hidden
test's too, and is charged (``sys._getframe`` reads no source).

The hidden files reach the plugin as a listing the controller writes (one path per
line, relative to the tree), named by ``HARNESS_HIDDEN_FILES`` (``verify.python.hidden_files``).

Runs in the test process (any Python 3.8+ with pytest), read as text and handed to it by
the boot script (``verify.python.boot``), which gives it ``CHARGED``, ``LISTED`` and
``_agents`` of ``charged_skips``: standard library only.
"""

from __future__ import annotations

import linecache
import os
import sys
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, Generator

# given by the boot script, before this runs: charged_skips's listing, reader and check
CHARGED: set[str] = globals()["CHARGED"]
LISTED: Callable[[str], set[str]] = globals()["LISTED"]
_agents: Callable[[str], bool] = globals()["_agents"]

_root = os.getcwd()
HIDDEN = {h for h in LISTED("HARNESS_HIDDEN_FILES") if h.endswith(".py")}
NAMES = {os.path.basename(h) for h in HIDDEN}
PEEKS: list[str] = []


def _reads(args: tuple[Any, ...]) -> bool:
    mode = args[1] if len(args) > 1 else None
    flags = args[2] if len(args) > 2 else 0
    if isinstance(mode, str):
        return "r" in mode or "+" in mode
    if isinstance(flags, int):  # os.open: no mode, the access flags
        return flags & os.O_ACCMODE in (os.O_RDONLY, os.O_RDWR)
    return True


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event != "open" or not args or not _reads(args):
        return
    path = args[0]
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str) or os.path.basename(path) not in NAMES:
        return
    try:
        real = os.path.realpath(path)
    except (TypeError, ValueError, OSError):
        return
    if real not in HIDDEN:
        return
    frame: Any = sys._getframe(1)
    while frame is not None:
        where = frame.f_code.co_filename
        if _agents(where):
            PEEKS.append(
                "%s:%d read %s"
                % (
                    os.path.relpath(where, _root),
                    frame.f_lineno,
                    os.path.relpath(real, _root),
                )
            )
            return
        frame = frame.f_back


def _said() -> str:
    out = "the code under test read the hidden tests: %s" % "; ".join(sorted(set(PEEKS))[:3])
    del PEEKS[:]
    return out


if HIDDEN and CHARGED:
    sys.addaudithook(_audit)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None]:
    outcome: Any = yield
    if PEEKS:
        rep = outcome.get_result()
        rep.outcome = "failed"
        rep.longrepr = "collecting %s: %s" % (collector.nodeid or "the session", _said())


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    for key in list(linecache.cache):
        if os.path.basename(key) in NAMES:
            linecache.cache.pop(key, None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None]:
    outcome: Any = yield
    if PEEKS:
        rep = outcome.get_result()
        rep.outcome = "failed"
        rep.longrepr = _said()
