"""A skip the code under test raised is a failure, not a test left out.

pytest leaves skipped tests out of the results, as a suite's own ``skipif`` or
``importorskip`` means: not applicable here. But the agent's code runs inside the tests,
and it can raise ``unittest.SkipTest`` (or call ``pytest.skip``/``pytest.xfail``)
wherever its answer would be wrong: every hidden test it cannot pass then reads
*skipped*, and the target passes on the tests that remain. So the boot script registers this
plugin, before the tree joins ``sys.path``: a skip (or an imperative xfail) whose
traceback passes through a file the agent changed or added is reported as a failure
naming that file and line; a module skipped at collection from such a file is a
collection error. A skip raised while an ``assert`` statement of any file ran is a
failure too: the agent's code can bind ``AssertionError`` to ``unittest.SkipTest`` in
the importing test module's own globals (``builtins`` untouched), and a failing assert
then raises a skip from the test file; so is one raised inside unittest's assert
methods (a test class's ``failureException`` rebound to a skip). In a ``TestCase``
unittest catches the skip and hands pytest its reason only, so ``addSkip`` of pytest's
is wrapped to read the traceback first. The suite's own skips (markers,
``importorskip`` in a test body, a fixture of the suite's) stay skips. A forger that
raises from code compiled under another file name is not seen (the same class as a
forger that finds the canary).

The agent's files reach the plugin as a listing the controller writes (one path per line,
relative to the tree), named by ``HARNESS_AGENT_FILES`` (``verify.python.agent_files``).

Runs in the test process (any Python 3.8+ with pytest), read as text and handed to it by
the boot script (``verify.python.boot``), before the tree joins ``sys.path``: it imports
only what pytest itself needs and nothing of harness. The other plugins read its
``CHARGED``, ``listed`` and ``_charged``.
"""

from __future__ import annotations

import ast
import os
import sys
import unittest
import unittest.case
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Generator
    from types import TracebackType

_root = os.getcwd()


def listed(env: str) -> set[str]:
    # the real paths a controller's listing names (one tree-relative path a line)
    out = set()
    listing = os.environ.pop(env, "")
    if listing:
        try:
            with open(listing, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    rel = line.rstrip("\n")
                    if rel:
                        out.add(os.path.realpath(os.path.join(_root, rel)))
        except OSError:
            pass
    return out


CHARGED = listed("HARNESS_AGENT_FILES")
SKIPS = (pytest.skip.Exception, pytest.xfail.Exception, unittest.SkipTest)
_KNOWN: dict[str, bool] = {}  # code file -> whether it is the agent's


def _charged(path: str) -> bool:
    known = _KNOWN.get(path)
    if known is None:
        try:
            known = os.path.realpath(path) in CHARGED
        except (TypeError, ValueError, OSError):
            known = False
        _KNOWN[path] = known
    return known


def _where(tb: TracebackType | None) -> str | None:
    while tb is not None:
        code = tb.tb_frame.f_code
        if _charged(code.co_filename):
            return "%s:%d" % (os.path.relpath(code.co_filename, _root), tb.tb_lineno)
        tb = tb.tb_next
    return None


_ASSERTS: dict[str, set[int]] = {}  # source file -> the lines its assert statements span


def _assert_lines(path: str) -> set[int]:
    lines = _ASSERTS.get(path)
    if lines is None:
        lines = set()
        try:
            with open(path, "rb") as fh:
                tree = ast.parse(fh.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.Assert):
                    end = getattr(node, "end_lineno", None) or node.lineno
                    lines.update(range(node.lineno, end + 1))
        except (OSError, SyntaxError, ValueError):
            pass
        _ASSERTS[path] = lines
    return lines


_CASE = unittest.case.__file__


def _in_assert(tb: TracebackType | None) -> str | None:
    # a skip raised while an assert statement ran: a failing assert whose AssertionError
    # the code under test rebound (in the test module's own globals, say) to a skip; or
    # while unittest's assert methods or fail() ran (a test class's failureException
    # rebound to a skip)
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == _CASE and (
            code.co_name.startswith("assert") or code.co_name == "fail"
        ):
            return "unittest's %s" % code.co_name
        if tb.tb_lineno in _assert_lines(code.co_filename):
            rel = os.path.relpath(code.co_filename, _root)
            return "the assert statement at %s:%d" % (rel, tb.tb_lineno)
        tb = tb.tb_next
    return None


def _wrap_add_skip() -> None:
    # unittest catches a SkipTest raised in a TestCase and hands pytest only its reason:
    # the traceback is read here, while unittest's except clause still holds it
    try:
        from _pytest.unittest import TestCaseFunction
    except ImportError:
        return
    real = TestCaseFunction.addSkip

    def addSkip(self: Any, testcase: Any, reason: str, *args: Any, **kwargs: Any) -> None:
        exc = sys.exc_info()
        if isinstance(exc[1], SKIPS):
            where = _where(exc[2]) or _in_assert(exc[2])
            if where:
                self._harness_skipped_at = where
        return real(self, testcase, reason, *args, **kwargs)

    TestCaseFunction.addSkip = addSkip  # type: ignore[method-assign]


_wrap_add_skip()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None]:
    exc = call.excinfo  # before pytest's unittest plugin swaps a SkipTest for its own skip
    outcome: Any = yield
    rep = outcome.get_result()
    exc = exc or call.excinfo  # a TestCase's skip: set by pytest's unittest plugin
    if not CHARGED or exc is None or not rep.skipped or not exc.errisinstance(SKIPS):
        return
    where = _where(exc.tb) or _in_assert(exc.tb) or getattr(item, "_harness_skipped_at", None)
    if where:
        rep.outcome = "failed"
        if hasattr(rep, "wasxfail"):
            del rep.wasxfail
        rep.longrepr = "skipped by the code under test at %s: %s" % (where, exc.value)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None]:
    outcome: Any = yield
    rep = outcome.get_result()
    if not CHARGED or not rep.skipped or not isinstance(rep.longrepr, tuple):
        return
    path = rep.longrepr[0]
    if _charged(path):
        rep.outcome = "failed"
        rep.longrepr = "skipped at collection by the code under test at %s:%s: %s" % (
            os.path.relpath(path, _root),
            rep.longrepr[1],
            rep.longrepr[2],
        )
