"""A loaded suite as a graph of definitions (grader/defs_graph.py): a suite function's
global references resolved to constants, objects from outside (by their home) and the
suite's own definitions (by reference, a cycle a reference back); the run-time defaults and
closure cells part of the function; paths into the tree relative to it; what cannot be
compared a problem named, not a crash."""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
import types
from pathlib import Path
from typing import Any

import pytest

from harness.grader.defs_graph import Graph

pytestmark = pytest.mark.unit


def load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> types.ModuleType:
    """``source`` as ``suite/mod.py`` under ``tmp_path``, imported under a name of its own."""
    suite_dir = tmp_path / "suite"
    suite_dir.mkdir()
    path = suite_dir / "mod.py"
    path.write_text(textwrap.dedent(source))
    name = f"defs_graph_probe_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


def node(graph: Graph, ref: dict[str, str]) -> dict[str, Any]:
    return graph.nodes[ref["ref"]]


def globals_of(tree: Any) -> list[Any]:
    """What each global name of a function's tree was resolved to, in order."""
    if not isinstance(tree, list):
        return []
    if len(tree) == 2 and tree[0] == "Global":
        return [tree[1]]
    return [g for part in tree for g in globals_of(part)]


SUITE = """
import json

LIMIT = 3
SEEN = []

def helper(x):
    return x + LIMIT

def f(x):
    SEEN.append(x)
    return helper(len(json.dumps(x)))

def even(n):
    return n == 0 or odd(n - 1)

def odd(n):
    return n != 0 and even(n - 1)

def make(k):
    def inner(x, y=LIMIT):
        return x + k + y
    return inner

three, four = make(3), make(4)
HERE = __file__

def doc():
    return doc.__doc__
"""


@pytest.fixture
def mod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    return load(tmp_path, monkeypatch, SUITE)


def test_global_references_resolve_to_constants_outside_objects_and_suite_definitions(
    mod: types.ModuleType, tmp_path: Path
) -> None:
    graph = Graph(tmp_path / "suite", {})
    ref = graph.describe(mod.f)
    graph.fill()
    f = node(graph, ref)
    seen, helper, length, dumps = globals_of(f["ast"])
    assert seen["ref"] != helper["ref"] and graph.nodes[seen["ref"]]["kind"] == "object"
    assert graph.nodes[seen["ref"]]["items"] == []  # a mutable value: its content
    assert length == {"ext": "builtins:len", "cells": 0}
    assert dumps == {"ext": "json:dumps", "cells": 0}
    assert globals_of(node(graph, helper)["ast"]) == [{"int": "3"}]
    assert node(graph, helper)["kind"] == "function" and graph.problems == []


def test_mutual_recursion_is_a_cycle_of_two_nodes(mod: types.ModuleType, tmp_path: Path) -> None:
    graph = Graph(tmp_path / "suite", {})
    even = graph.describe(mod.even)
    graph.fill()
    (odd,) = [g for g in globals_of(node(graph, even)["ast"]) if "ref" in g]
    assert [g for g in globals_of(node(graph, odd)["ast"]) if "ref" in g] == [even]
    assert len(graph.nodes) == 2


def test_defaults_and_closure_cells_are_part_of_a_function(
    mod: types.ModuleType, tmp_path: Path
) -> None:
    graph = Graph(tmp_path / "suite", {})
    three, four = graph.describe(mod.three), graph.describe(mod.four)
    graph.fill()
    assert node(graph, three)["defaults"] == {"tuple": [{"int": "3"}]}
    assert node(graph, three)["closure"] == [["k", {"int": "3"}]]
    assert node(graph, four)["closure"] == [["k", {"int": "4"}]]
    assert node(graph, three)["ast"] == node(graph, four)["ast"]


def test_paths_into_the_tree_and_moved_modules_are_spelled_the_same_everywhere(
    mod: types.ModuleType, tmp_path: Path
) -> None:
    graph = Graph(tmp_path / "suite", {"json": "harness.newjson"})
    assert graph.describe(mod.HERE) == {"str": "<tree>/suite/mod.py"}
    assert graph.describe(tmp_path / "suite" / "x.yml") == {
        "path": "PosixPath",
        "at": "<tree>/suite/x.yml",
    }
    assert graph.describe(json) == {"extmodule": "harness.newjson"}
    assert graph.describe(json.dumps) == {"ext": "harness.newjson:dumps", "cells": 0}
    assert graph.describe((1, None)) == {"tuple": [{"int": "1"}, {"const": "None"}]}


def test_a_function_that_cannot_be_compared_is_a_problem_named(
    mod: types.ModuleType, tmp_path: Path
) -> None:
    graph = Graph(tmp_path / "suite", {})
    ref = graph.describe(mod.doc)
    graph.fill()
    why = node(graph, ref)["refused"]
    assert "__doc__" in why
    assert graph.problems == [f"doc (mod.py:{mod.doc.__code__.co_firstlineno}): {why}"]


def test_a_source_is_read_as_python_decodes_it_its_coding_line_honoured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the second red team: under UTF-7, "#+AAo-" is a comment to a UTF-8 reader, but a
    # newline and then a statement to Python; the compare must see the statement
    source = (
        "# -*- coding: utf-7 -*-\ndef f():\n    want = 1\n    #+AAo-    want = 2\n    return want\n"
    )
    mod = load(tmp_path, monkeypatch, source)
    assert mod.f() == 2
    graph = Graph(tmp_path / "suite", {})
    ref = graph.describe(mod.f)
    graph.fill()
    body = json.dumps(node(graph, ref)["ast"])
    assert body.count('"Assign"') == 2 and '{"int": "2"}' in body
