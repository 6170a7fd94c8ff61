"""The test runner as it booted: a patch of it by the code under test fails, and is undone.

The agent's code runs inside the test process, so it can change what a passing test
means without touching a file: bind ``builtins.AssertionError`` to ``unittest.SkipTest``
(pytest's rewritten asserts raise it by name, so every failing assert reads *skipped*),
make ``unittest.TestCase.assertEqual`` a no-op, replace a function of pytest's. The
canary cannot see it when its own ``self.fail`` still works. So the boot script, before
the tree joins ``sys.path``, records what the verdict rests on: the functions and classes
that ``pytest``, ``_pytest.*``, ``pluggy`` and ``unittest`` define (and their classes'
methods), and the builtins a test or an assertion uses. After each collector and after
each test's teardown (when the suite's own ``monkeypatch`` has been undone) the plugin
compares: a changed entry fails that collector or test, naming what changed, and is put
back, so the rest of the run is honest again. A plugin that a file of the tree (not a
``conftest.py``) registers once the session runs is unregistered, failing the same way.
And each collected test must be the suite's: its module the one imported from its file
(the agent's code can put a module of its own in a test module's place in
``sys.modules`` while that module imports it, and the import returns the stand-in), its
function compiled from a file, not the agent's, and its code one that file compiles to
(plain or with pytest's assertion rewriting: the agent's code can assign a suite
function an empty ``__code__`` compiled under the suite file's name); else the test fails.
Entries pytest sets itself while it runs (hooks it installs on a module, state it
caches) are not recorded: only what a module defines.

Runs in the test process (any Python 3.8+ with pytest), read as text and handed to it by
the boot script (``verify.python.boot``), which gives it ``_agents`` (``charged_skips``'s
check of a file): standard library only.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import os
import sys
import types
import unittest
import unittest.case  # noqa: F401  (as it booted: the module unittest's asserts run in)
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, Generator

# given by the boot script, before this runs: charged_skips's check of a file
_agents: Callable[[str], bool] = globals()["_agents"]

BUILTINS = (
    "AssertionError", "BaseException", "Exception", "isinstance", "issubclass", "type",
    "bool", "len", "repr", "str", "all", "any", "hasattr", "getattr", "id", "object",
    "callable", "iter", "next", "sorted", "super", "NotImplemented",
)  # fmt: skip
KINDS = (types.FunctionType, type, classmethod, staticmethod, property)
# modules that show, time or help, but decide nothing a report says
IDLE = (
    "_pytest._py", "_pytest.pytester", "_pytest.legacypath", "_pytest.capture",
    "_pytest.terminal", "_pytest.helpconfig", "_pytest.pastebin", "_pytest.setupplan",
    "_pytest.setuponly", "_pytest.cacheprovider", "_pytest.debugging", "_pytest.logging",
    "_pytest.faulthandler", "_pytest.tmpdir", "_pytest._argcomplete", "_pytest._io",
    "_pytest.freeze_support", "_pytest.stash", "_pytest.timing", "unittest.mock",
)  # fmt: skip
SWAPPED: dict[str, str] = {}  # nodeid -> why the test collected is not the suite's own
PENDING: list[str] = []  # plugins the tree registered while the tests ran
STARTED: list[bool] = []
SEEN: dict[tuple[int, str], tuple[Any, str, str, Any]] = {}
WATCH: list[tuple[dict[str, Any], str, Any]] = []  # (owner's namespace, attribute, boot value)
MISSING = object()
ROOT = os.path.realpath(os.getcwd())


def _watch(owner: Any, label: str, value: Any) -> None:
    key = (id(owner), label)
    if key not in SEEN:
        attr = label.rsplit(".", 1)[-1]
        SEEN[key] = (owner, attr, label, value)
        WATCH.append((owner.__dict__, attr, value))


def _record_module(name: str, module: Any) -> None:
    space = getattr(module, "__dict__", None)
    if not isinstance(space, dict):
        return
    for attr, value in list(space.items()):
        if not isinstance(value, (types.FunctionType, type)):
            continue
        if getattr(value, "__module__", None) != name:
            continue  # set on the module by someone else (a hook pytest installs)
        _watch(module, name + "." + attr, value)
        if isinstance(value, type):
            for meth, impl in list(value.__dict__.items()):
                if isinstance(impl, KINDS) and not meth.startswith("__harness"):
                    _watch(value, name + "." + attr + "." + meth, impl)


def record() -> None:
    for attr in BUILTINS:
        if attr in builtins.__dict__:
            _watch(builtins, "builtins." + attr, builtins.__dict__[attr])
    for name, module in list(sys.modules.items()):
        if name in ("pytest", "unittest", "pluggy") or name.startswith(  # noqa: SIM102
            ("_pytest.", "unittest.", "pluggy.")
        ):
            if not (name + ".").startswith(tuple(i + "." for i in IDLE)):
                _record_module(name, module)


def _current(owner: Any, attr: str) -> Any:
    space = owner.__dict__
    return space[attr] if attr in space else MISSING  # noqa: SIM401


def changed() -> list[str]:
    if not PENDING and all([space.get(attr, MISSING) is value for space, attr, value in WATCH]):
        return []
    out = PENDING[:]
    del PENDING[:]
    for owner, attr, label, value in list(SEEN.values()):
        now = _current(owner, attr)
        if now is value:
            continue
        out.append(label)
        try:
            setattr(owner, attr, value)
        except (AttributeError, TypeError):
            pass
    return sorted(out)


def _say(labels: list[str]) -> str:
    shown = ", ".join(labels[:5]) + (" and %d more" % (len(labels) - 5) if len(labels) > 5 else "")
    return "the test runner was changed while this ran: %s (put back)" % shown


record()


def _ours(value: Any) -> bool:  # defined in a file of the tree (the agent's or the suite's)
    if isinstance(value, (classmethod, staticmethod)):
        value = value.__func__
    if isinstance(value, property):
        value = value.fget
    code = getattr(value, "__code__", None)
    path: str | None = getattr(code, "co_filename", None)
    if path is None:
        module = sys.modules.get(getattr(value, "__module__", None) or "")
        path = getattr(module, "__file__", None)
    if not path:
        return False
    path = os.path.realpath(path)
    return path == ROOT or path.startswith(ROOT + os.sep)


def _plugin_file(plugin: Any) -> str:
    if isinstance(plugin, types.ModuleType):
        return getattr(plugin, "__file__", None) or ""
    cls = plugin if isinstance(plugin, type) else type(plugin)
    return getattr(sys.modules.get(cls.__module__), "__file__", None) or ""


def pytest_plugin_registered(plugin: Any, manager: pytest.PytestPluginManager) -> None:
    # once the session runs, a plugin from the tree that is not a conftest is the code
    # under test hooking the runner (its hookwrappers could rewrite any report): it is
    # unregistered, and the collector or test it came in fails
    if not STARTED:
        return
    path = _plugin_file(plugin)
    if not path or os.path.basename(path) == "conftest.py":
        return
    real = os.path.realpath(path)
    if real != ROOT and not real.startswith(ROOT + os.sep):
        return
    try:
        manager.unregister(plugin)
    except Exception:
        pass
    PENDING.append("a plugin registered from %s" % os.path.relpath(real, ROOT))


@pytest.hookimpl(hookwrapper=True)
def pytest_sessionstart(session: pytest.Session) -> Generator[None]:
    # pytest's own plugins patch its classes while it configures (legacypath sets
    # Config._getini_unknown_type): a change to pytest since boot from outside the tree
    # is taken as the runner's; builtins and unittest never change so, and a change from
    # the tree (a conftest importing the agent's package) stays a change for the first
    # collector to find
    for key, (owner, attr, label, value) in list(SEEN.items()):
        if not label.startswith(("_pytest.", "pytest.")):
            continue
        now = _current(owner, attr)
        if now is not value and now is not MISSING and not _ours(now):
            SEEN[key] = (owner, attr, label, now)
    WATCH[:] = [(o.__dict__, a, v) for o, a, _, v in SEEN.values()]
    record()  # plugin modules pytest imported after boot
    yield
    STARTED.append(True)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None]:
    outcome: Any = yield
    labels = changed()
    if labels:
        rep = outcome.get_result()
        rep.outcome = "failed"
        rep.longrepr = "collecting %s: %s" % (collector.nodeid or "the session", _say(labels))


def _stand_in(item: Any) -> str | None:
    # why the collected test is not the one its file defines (None: it is): its module
    # was not imported from its file, or its function was not compiled from a file
    # (code made by exec) or was compiled from the agent's
    module = getattr(item, "module", None)
    spec = getattr(module, "__spec__", None)
    origin: Any = getattr(spec, "origin", None)
    where = str(getattr(item, "path", None) or getattr(item, "fspath", ""))
    try:
        same = bool(origin) and os.path.realpath(origin) == os.path.realpath(where)
    except (TypeError, ValueError, OSError):
        same = False
    if module is not None and not same:
        return "its module %s is not the one imported from %s" % (
            getattr(module, "__name__", "?"),
            os.path.relpath(where, ROOT),
        )
    func: Any = getattr(item, "obj", None)
    try:
        func = inspect.unwrap(getattr(func, "__func__", func))
    except Exception:
        pass
    code = getattr(func, "__code__", None)
    path = getattr(code, "co_filename", None)
    if path is None:
        return None
    if path.startswith("<"):
        return "its function was made from %s, not compiled from a file" % path
    if _agents(path):
        return "its function is code of %s" % os.path.relpath(path, ROOT)
    compiled = _compiled(path, item.config)
    if compiled is None:
        return "its function names %s, which harness cannot compile" % path
    if not any(code == other for other in compiled):
        # a function object of the suite's given other code (``__code__`` assigned):
        # the file compiles to no such code, plain or with pytest's assertion rewriting
        return "its function's code is not what %s compiles to" % os.path.relpath(path, ROOT)
    return None


COMPILED: dict[str, list[types.CodeType] | None] = {}  # source file -> the code it compiles to


def _codes(code: types.CodeType, out: list[types.CodeType]) -> None:
    out.append(code)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _codes(const, out)


def _compiled(path: str, config: pytest.Config) -> list[types.CodeType] | None:
    if path in COMPILED:
        return COMPILED[path]
    out: Any = []  # None: it cannot be compiled
    try:
        with open(path, "rb") as fh:
            source = fh.read()
        _codes(compile(ast.parse(source, filename=path), path, "exec", dont_inherit=True), out)
        try:
            from _pytest.assertion.rewrite import rewrite_asserts

            tree = ast.parse(source, filename=path)
            rewrite_asserts(tree, source, path, config)
            _codes(compile(tree, path, "exec", dont_inherit=True), out)
        except Exception:
            pass
    except (OSError, SyntaxError, ValueError):
        out = None
    COMPILED[path] = out
    return COMPILED[path]


def pytest_collection_finish(session: pytest.Session) -> None:
    for item in session.items:
        why = _stand_in(item)
        if why:
            SWAPPED[item.nodeid] = why


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None]:
    outcome: Any = yield
    if call.when == "call" and item.nodeid in SWAPPED:
        rep = outcome.get_result()
        rep.outcome = "failed"
        rep.longrepr = "not the suite's test: %s" % SWAPPED[item.nodeid]
    if call.when != "teardown":
        return
    labels = changed()
    if labels:
        rep = outcome.get_result()
        rep.outcome = "failed"
        rep.longrepr = _say(labels)
