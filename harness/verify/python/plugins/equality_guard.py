"""A comparison that holds for everything proves nothing: it fails the assertion.

The cheapest forgery needs no runner at all: the agent's function returns an object whose
``__eq__`` answers True whatever it is given, and ``assert clamp(15, 0, 10) == 10`` (or
``assertEqual``) passes on unfixed code; the canary, which never calls the agent's code,
still fails as it must. So after collection, and before each test, the plugin wraps the
equality (``__eq__``, ``__ne__``) of every class that a file the agent changed or added
defines (the listing ``charged_skips`` reads). A wrapped comparison runs as it did; when it
answers "equal" (``__eq__`` true, ``__ne__`` false) it is asked again against a brand-new
``object()`` and against a value of the other side's type made unequal to it (``x + 1``,
``s + "\\x00"``, a tuple one longer, ...). An honest equality cannot relate to an object
it has never seen, nor equal two values that differ; one that does holds for everything
(or for everything of a type), and the comparison raises AssertionError naming the class
and where it is defined. A class statement in the agent's files is guarded as it runs
(``builtins.__build_class__`` is wrapped), so a class built inside a function per call is
too; one made by calling ``type()`` is found only at module level, and wildcards of other
modules it returns (such as ``unittest.mock.ANY``) are not seen.

Runs in the test process (any Python 3.8+ with pytest), read as text and handed to it by
the boot script (``verify.python.boot``), which gives it ``CHARGED`` and ``_agent_file``
of ``charged_skips``: standard library only.
"""

from __future__ import annotations

import builtins
import inspect
import os
import sys
import weakref
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

# given by the boot script, before this runs: charged_skips's listing and its check
CHARGED: set[str] = globals()["CHARGED"]
_agent_file: Callable[[str], bool] = globals()["_agent_file"]

TRUTHY = ("__eq__",)  # an order against everything is honest: an Infinity sentinel
FALSY = ("__ne__",)
DONE: weakref.WeakSet[type] = weakref.WeakSet()
LAST = [-1]  # how many modules the last scan saw
SEEN: dict[str, tuple[Any, bool]] = {}  # module name -> (module, whether the agent's defines it)


class Everything(AssertionError):
    pass


def _holds(result: Any, wanted: bool) -> bool:
    if result is NotImplemented:
        return False
    try:
        return bool(result) is wanted
    except Exception:
        return False


def _where(cls: type) -> str:
    try:
        path = inspect.getsourcefile(cls) or "?"
        line = inspect.getsourcelines(cls)[1]
        return "%s:%d" % (os.path.relpath(path), line)
    except Exception:
        return getattr(cls, "__module__", "?")


def _other(value: Any) -> Any:
    # a value of the same type as ``value`` and unequal to it, or None when none is made
    made: Any
    try:
        if isinstance(value, bool):
            made = not value
        elif isinstance(value, (int, float, complex)):
            made = value + 1
        elif isinstance(value, str):
            made = value + "\x00"
        elif isinstance(value, bytes):
            made = value + b"\x00"
        elif isinstance(value, tuple):
            made = value + (object(),)
        elif isinstance(value, list):
            made = value + [object()]
        elif isinstance(value, dict):
            made = dict(value)
            made[object()] = None
        elif isinstance(value, (set, frozenset)):
            made = set(value) | {object()}
        else:
            return None
        return None if made == value else made
    except Exception:
        return None


def _probes(other: Any) -> Iterator[tuple[str, Any]]:
    yield "a new object()", object()
    made = _other(other)
    if made is not None:
        yield "%r as well as %r" % (made, other), made


def _wrap(
    cls: type, name: str, impl: Callable[[Any, Any], Any], wanted: bool
) -> Callable[[Any, Any], Any]:
    def guarded(self: Any, other: Any) -> Any:
        result = impl(self, other)
        if not _holds(result, wanted):
            return result
        for said, probe in _probes(other):
            try:
                held = _holds(impl(self, probe), wanted)
            except Exception:
                held = False
            if held:
                raise Everything(
                    "%s.%s holds against %s: a comparison that holds for everything "
                    "proves nothing (%s)" % (cls.__qualname__, name, said[:200], _where(cls))
                )
        return result

    guarded.__harness_guarded__ = True  # type: ignore[attr-defined]
    return guarded


def _guard(cls: type) -> None:
    try:
        if cls in DONE:
            return
        DONE.add(cls)
    except TypeError:
        return
    for name in TRUTHY + FALSY:
        impl = getattr(cls, name, None)
        if impl is None or impl is getattr(object, name) or not callable(impl):
            continue
        if getattr(impl, "__harness_guarded__", False):
            continue
        try:
            setattr(cls, name, _wrap(cls, name, impl, name in TRUTHY))
        except (AttributeError, TypeError):
            pass  # a type of C that cannot be changed: left as it is


def _classes(value: Any, depth: int = 0) -> Iterator[type]:
    if isinstance(value, type) and depth < 3:
        yield value
        for inner in list(value.__dict__.values()):
            if isinstance(inner, type) and inner.__module__ == value.__module__:
                yield from _classes(inner, depth + 1)


def _charged_module(name: str, module: Any) -> bool:
    known = SEEN.get(name)
    if known is not None and known[0] is module:
        return known[1]
    path: Any = getattr(module, "__file__", None)
    try:
        charged = bool(path) and os.path.realpath(path) in CHARGED
    except (TypeError, ValueError, OSError):
        charged = False
    SEEN[name] = (module, charged)
    return charged


def scan() -> None:
    # a module's classes are there once it is imported: scan again when one more is
    if not CHARGED or len(sys.modules) == LAST[0]:
        return
    LAST[0] = len(sys.modules)
    for name, module in list(sys.modules.items()):
        if not _charged_module(name, module):
            continue
        for value in list(getattr(module, "__dict__", {}).values()):
            if isinstance(value, type) and value.__module__ == name:
                for cls in _classes(value):
                    _guard(cls)


_build_class = builtins.__build_class__


def _guarded_build_class(func: Any, name: str, *bases: Any, **kwds: Any) -> Any:
    # every class statement, also one inside a function the agent's code runs per call
    cls = _build_class(func, name, *bases, **kwds)
    try:
        if isinstance(cls, type) and _agent_file(func.__code__.co_filename):
            _guard(cls)
    except Exception:
        pass
    return cls


if CHARGED:
    builtins.__build_class__ = _guarded_build_class  # type: ignore[assignment]


def pytest_collection_finish(session: pytest.Session) -> None:
    LAST[0] = -1
    scan()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    scan()
