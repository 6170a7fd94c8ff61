"""Code the definition compare cannot vouch for (grader/defs_reflection.py): the
interpreter's reflection by name, metadata dunders but not protocols, an identity test of
constants, and annotations that run code when evaluated."""

from __future__ import annotations

import ast
import inspect
import pickle
import sys
import typing

import pytest

from harness.grader.defs_reflection import (
    annotation_runs_code,
    constant_identity,
    metadata,
    reflection,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "obj",
    [
        globals,
        eval,
        exec,
        compile,
        __import__,
        sys._getframe,
        typing.get_type_hints,
        inspect.getsource,
        inspect,
        pickle.dumps,
    ],
)
def test_the_interpreter_s_reflection_is_named(obj: object) -> None:
    assert reflection(obj)


@pytest.mark.parametrize("obj", [len, sorted, vars, dir, getattr, typing.cast, sys.maxsize])
def test_ordinary_callables_and_values_are_not_reflection(obj: object) -> None:
    assert reflection(obj) is None


def test_metadata_dunders_but_not_protocols() -> None:
    assert all(metadata(a) for a in ("__module__", "__code__", "__annotations__", "__dict__"))
    assert not any(metadata(a) for a in ("__init__", "__eq__", "__len__", "__class__", "name"))


def test_an_identity_test_of_a_constant() -> None:
    assert constant_identity([["Name", "x"], ["Global", {"str": "a b"}]])
    assert constant_identity([["Constant", {"tuple": []}], ["Name", "y"]])
    assert not constant_identity([["Name", "x"], ["Constant", {"const": "None"}]])


@pytest.mark.parametrize(
    ("text", "runs"),
    [
        ("int", False),
        ("list[dict[str, 'Evidence']] | None", False),
        ("typing.Callable[[int], str]", False),
        ("'print() or int'", True),
        ("Annotated[int, make()]", True),
        ("'not python ('", True),
        ("(lambda: int)()", True),
    ],
)
def test_an_annotation_that_runs_code(text: str, runs: bool) -> None:
    assert annotation_runs_code(ast.parse(text, mode="eval").body) is runs
